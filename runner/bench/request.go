package bench

import (
	"fmt"
	"slices"
	"strings"
)

// EnvRunID names the run a new run records into when no id is given: the
// one id every shard of a run shares.
const EnvRunID = "WFB_RUN_ID"

// Request is what one process of `wfb run` is asked to run: which cells,
// into which run (a new one, with its label and id, or one to resume), and
// which shard of them.
type Request struct {
	Tasks, Arms      []string
	Runs             int // 0: the bench's
	IncludeExpensive bool
	Sandbox          string // "": the bench's
	Label            string
	RunID            string // "": $WFB_RUN_ID, else a fresh id
	Resume           string // a run to continue; "": a new run
	Shard            string // "i/n"; "": the batch engine's (ShardFromEnv), if any
}

// Resolve decides the run's selection and the id of a new run, reading the
// environment through getenv:
//
//   - a resume continues a run with the cells it was started with: a request
//     that would change them (tasks, arms, runs, include-expensive, sandbox,
//     label, run id) is refused, naming the flags to drop, and the
//     selection is the run's own;
//   - the shard is Shard, else the batch engine's (Kubernetes, Slurm);
//   - the run id is RunID, else $WFB_RUN_ID; a shard of a new run needs
//     one, since every shard records into the same run id for wfb merge
//     to combine.
//
// Every refusal is a *SelectionError.
func (r Request) Resolve(getenv func(string) string) (Selection, string, error) {
	refuse := func(format string, args ...any) (Selection, string, error) {
		return Selection{}, "", &SelectionError{Problems: []string{fmt.Sprintf(format, args...)}}
	}
	sel := Selection{Tasks: r.Tasks, Arms: r.Arms, Runs: r.Runs, IncludeExpensive: r.IncludeExpensive, Sandbox: r.Sandbox}
	if r.Resume != "" {
		var fixed []string
		for name, set := range map[string]bool{"--tasks": len(r.Tasks) > 0, "--arms": len(r.Arms) > 0, "--runs": r.Runs > 0,
			"--include-expensive": r.IncludeExpensive, "--sandbox": r.Sandbox != "", "--label": r.Label != "", "--run-id": r.RunID != ""} {
			if set {
				fixed = append(fixed, name)
			}
		}
		if len(fixed) > 0 {
			slices.Sort(fixed)
			return refuse("--resume continues a run with the cells it was started with; drop %s", strings.Join(fixed, ", "))
		}
		sel = Selection{}
	}
	if r.Shard != "" {
		i, n, err := ParseShard(r.Shard)
		if err != nil {
			return refuse("--shard: %v", err)
		}
		sel.Shard, sel.ShardCount = i, n
	} else {
		i, n, ok, err := ShardFromEnv(getenv)
		if err != nil {
			return refuse("%v", err)
		}
		if ok {
			sel.Shard, sel.ShardCount = i, n
		}
	}
	id := r.RunID
	if id == "" {
		id = getenv(EnvRunID)
	}
	if sel.ShardCount > 0 && id == "" && r.Resume == "" {
		return refuse("a shard needs --run-id (or $%s): every shard of one run records into the same run id, which wfb merge combines", EnvRunID)
	}
	return sel, id, nil
}
