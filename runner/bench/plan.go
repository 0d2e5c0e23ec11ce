package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Selection picks the cells of a run out of a bench.
type Selection struct {
	Tasks []string `json:"tasks,omitempty"` // empty: every task (expensive ones only when asked)
	Arms  []string `json:"arms,omitempty"`  // empty: every arm
	Runs  int      `json:"runs,omitempty"`  // 0: the bench's
	// IncludeExpensive runs tasks marked expensive; a task named in Tasks
	// runs whether or not it is.
	IncludeExpensive bool   `json:"include_expensive,omitempty"`
	Sandbox          string `json:"sandbox,omitempty"` // "": the bench's
	// Shard, when ShardCount > 0, keeps only the cells InShard assigns to
	// shard Shard of ShardCount. The index is the process's, not the run's:
	// the shards of one run share its id and its recorded selection (so
	// that wfb merge finds them identical), and a resume names its shard
	// again.
	Shard      int `json:"-"`
	ShardCount int `json:"shard_count,omitempty"`
}

// Cell names one cell: a task, an arm and a repetition (from 0).
type Cell struct {
	Task string `json:"task"`
	Arm  string `json:"arm"`
	Rep  int    `json:"rep"`
}

// Plan returns the selected cells in run order: repetition by repetition,
// and within one, task by task and arm by arm, so that a drift over the
// run's hours (a provider getting slower) falls on every arm alike. A name
// in sel that the bench does not have is a *SelectionError.
func (b *Bench) Plan(sel Selection) ([]Cell, error) {
	var problems []string
	for _, t := range sel.Tasks {
		if _, ok := b.Task(t); !ok {
			problems = append(problems, fmt.Sprintf("--tasks: %s has no task %q", b.Path, t))
		}
	}
	for _, a := range sel.Arms {
		if _, ok := b.Arm(a); !ok {
			problems = append(problems, fmt.Sprintf("--arms: %s has no arm %q", b.Path, a))
		}
	}
	if sel.Runs < 0 {
		problems = append(problems, fmt.Sprintf("--runs %d: must be at least 1", sel.Runs))
	}
	if len(problems) > 0 {
		return nil, &SelectionError{Problems: problems}
	}
	runs := b.Runs
	if sel.Runs > 0 {
		runs = sel.Runs
	}
	var cells []Cell
	for rep := 0; rep < runs; rep++ {
		for _, t := range b.Tasks {
			switch {
			case len(sel.Tasks) > 0 && !slices.Contains(sel.Tasks, t.ID):
				continue
			case len(sel.Tasks) == 0 && t.Expensive && !sel.IncludeExpensive:
				continue
			}
			for _, a := range b.Arms {
				if len(sel.Arms) > 0 && !slices.Contains(sel.Arms, a.ID) {
					continue
				}
				if sel.ShardCount > 0 && !InShard(CellKey(t.ID, a.ID, rep), sel.Shard, sel.ShardCount) {
					continue
				}
				cells = append(cells, Cell{Task: t.ID, Arm: a.ID, Rep: rep})
			}
		}
	}
	return cells, nil
}

// SelectionError lists the names a selection gives that the bench does not
// have (and a repetition count below 1): nothing may start.
type SelectionError struct {
	Problems []string
}

func (e *SelectionError) Error() string { return strings.Join(e.Problems, "\n") }
