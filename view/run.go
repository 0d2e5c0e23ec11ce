package view

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// Grid bounds: a run page shows at most maxGridRows tasks, and links at
// most maxGridReps cells of each task × arm; the rest are counted.
const (
	maxGridRows = 500
	maxGridReps = 24
)

type runData struct {
	Title       string
	L           links
	Run         report.RunInfo
	Kind        string
	Harness     string
	Config      string
	ByTask      bool
	Agents      *report.Table
	Tables      []*report.Table
	Grid        grid
	FirstFailed string
	// CostText and CostNotes are the run's cost total as wfb runs shows it.
	CostText  string
	CostNotes []string
}

// grid is the task × arm grid of a run's cells.
type grid struct {
	Arms      []string
	Rows      []gridRow
	MoreTasks int
}

type gridRow struct {
	Task  string
	Cells []*gridCell // one per arm; nil: no cell
}

type gridCell struct {
	Cells, OK int
	Reps      []repLink
	More      int
}

// Class buckets the cell's ok rate for its colour (r0 … r10).
func (c *gridCell) Class() string {
	if c.Cells == 0 {
		return "r0"
	}
	return fmt.Sprintf("r%d", c.OK*10/c.Cells)
}

// repLink is one cell's final attempt.
type repLink struct {
	ID       string
	Rep      int
	Attempts int
	OK       bool
	Kind     string
}

func (s *Server) runPage(r *http.Request, l links) (string, any, error) {
	d, err := s.runData(r.Context(), l, r.PathValue("id"), r.URL.Query().Get("by") == "task,arm")
	return "run", d, err
}

func (s *Server) runData(ctx context.Context, l links, id string, byTask bool) (*runData, error) {
	runs, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return nil, err
	}
	rs := report.RunsOf(runs, []string{id})
	if len(rs) != 1 {
		return nil, fmt.Errorf("run %q: %w", id, errNotFound)
	}
	if err := report.FillRunStats(ctx, s.db, rs, false); err != nil {
		return nil, err
	}
	d := &runData{L: l, Run: rs[0], ByTask: byTask, Title: "Run " + id,
		CostText: report.CostText(rs[0].Cost), CostNotes: report.CostNotes("", rs[0].Cost)}
	_, meta, err := s.db.Query(ctx, `SELECT kind, harness, config FROM runs WHERE run_id = ?`, id)
	if err != nil || len(meta) != 1 {
		return nil, fmt.Errorf("run %s: %v", id, err)
	}
	d.Kind, d.Harness, d.Config = str(meta[0][0]), str(meta[0][1]), str(meta[0][2])
	if err := s.runPass(ctx, d, id, byTask); err != nil {
		return nil, err
	}
	_, first, err := s.db.Query(ctx, `SELECT attempt_id FROM results WHERE run_id = ? AND ok = 0
		ORDER BY task, arm, rep, attempt LIMIT 1`, id)
	if err != nil {
		return nil, err
	}
	if len(first) == 1 {
		d.FirstFailed = str(first[0][0])
	}
	return d, nil
}

// runPass reads the run's attempts once: into `wfb report`'s tables (the
// same builders), the grid's final attempt per cell, and the agent
// versions per arm.
func (s *Server) runPass(ctx context.Context, d *runData, id string, byTask bool) error {
	type pass struct {
		tables []*report.Table
		agents *report.Table
		grid   grid
	}
	p, err := cachedResult(ctx, s, fmt.Sprintf("run %q %v", id, byTask), func() (pass, error) {
		var p pass
		err := s.readRun(ctx, &p.tables, &p.agents, &p.grid, id, byTask)
		return p, err
	})
	d.Tables, d.Agents, d.Grid = p.tables, p.agents, p.grid
	return err
}

// readRun reads the run's attempts once (see runPass).
func (s *Server) readRun(ctx context.Context, tables *[]*report.Table, agents **report.Table, g *grid, id string, byTask bool) error {
	tab := report.NewTabulator(report.TabulateOptions{ByTask: byTask, Metrics: s.cols.Metrics()})
	acc := newGridAcc()
	sel := report.Selection{Spec: id, RunIDs: []string{id}}
	err := report.LoadRows(ctx, s.db, s.cols, sel, func(r *report.Row) {
		tab.Add(r)
		acc.add(r)
	})
	if err != nil {
		return err
	}
	if res := tab.Result(); len(res.Groups) > 0 {
		if res.Tools, err = report.LoadToolUse(ctx, s.db, s.cols, sel, byTask); err != nil {
			return err
		}
		*tables = res.Tables("run "+id, report.FormatTable)
	}
	if *agents, err = s.agents(ctx, id, acc); err != nil {
		return err
	}
	*g, err = s.grid(ctx, id, acc)
	return err
}

// agents names each arm's agent and model (from its first attempt) and
// the agent versions its attempts reported, with counts.
func (s *Server) agents(ctx context.Context, id string, acc *gridAcc) (*report.Table, error) {
	t := &report.Table{Title: "agents", Columns: []string{"arm", "agent", "model", "agent versions (attempts)"}}
	for _, arm := range acc.arms {
		_, rows, err := s.db.Query(ctx, `SELECT agent, model FROM results WHERE run_id = ? AND arm = ? LIMIT 1`, id, arm)
		if err != nil {
			return nil, err
		}
		var versions []string
		for _, v := range slices.Sorted(maps.Keys(acc.versions[arm])) {
			name := v
			if name == "" {
				name = "NULL"
			}
			versions = append(versions, fmt.Sprintf("%s (%d)", name, acc.versions[arm][v]))
		}
		t.Rows = append(t.Rows, []any{arm, rows[0][0], rows[0][1], strings.Join(versions, ", ")})
	}
	return t, nil
}

// gridAcc holds each task × arm's cell counts (cellCounts), and the agent
// versions of each arm, counted as the rows stream by.
type gridAcc struct {
	counts   map[taskArm]*gridCell
	arms     []string
	versions map[string]map[string]int // arm -> agent version -> attempts
}

type taskArm struct{ task, arm string }

func newGridAcc() *gridAcc {
	return &gridAcc{counts: map[taskArm]*gridCell{}, versions: map[string]map[string]int{}}
}

func (g *gridAcc) add(r *report.Row) {
	v := g.versions[r.Arm]
	if v == nil {
		v = map[string]int{}
		g.versions[r.Arm] = v
		g.arms = append(g.arms, r.Arm)
	}
	v[r.AgentVersion]++
}

// cellCounts counts each task × arm's cells, each once by its final
// attempt (report.LoadCellCounts: the cell rule as the file spells it).
func (s *Server) cellCounts(ctx context.Context, id string, acc *gridAcc) error {
	counts, err := report.LoadCellCounts(ctx, s.db, id)
	if err != nil {
		return err
	}
	for _, c := range counts {
		acc.counts[taskArm{c.Task, c.Arm}] = &gridCell{Cells: c.Cells, OK: c.OK}
	}
	return nil
}

// table runs a query into a table titled title.
func (s *Server) table(ctx context.Context, title, q string, args ...any) (*report.Table, error) {
	cols, rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", title, err)
	}
	return &report.Table{Title: title, Columns: cols, Rows: rows}, nil
}

// grid lays out each task × arm's cells, counted by their final attempt,
// and links the first maxGridReps of them.
func (s *Server) grid(ctx context.Context, id string, acc *gridAcc) (grid, error) {
	g := grid{Arms: slices.Sorted(slices.Values(acc.arms))}
	if err := s.cellCounts(ctx, id, acc); err != nil {
		return g, err
	}
	tasks := map[string]bool{}
	for k := range acc.counts {
		tasks[k.task] = true
	}
	for _, task := range slices.Sorted(maps.Keys(tasks)) {
		if len(g.Rows) == maxGridRows {
			g.MoreTasks++
			continue
		}
		row := gridRow{Task: task, Cells: make([]*gridCell, len(g.Arms))}
		for i, arm := range g.Arms {
			c := acc.counts[taskArm{task, arm}]
			if c == nil {
				continue
			}
			var err error
			if c.Reps, err = s.reps(ctx, id, task, arm); err != nil {
				return g, err
			}
			c.More = c.Cells - len(c.Reps)
			row.Cells[i] = c
		}
		g.Rows = append(g.Rows, row)
	}
	return g, nil
}

// reps returns the final attempts of the first maxGridReps cells of a task
// and arm: a walk of the (run, task, arm, rep, attempt) index.
func (s *Server) reps(ctx context.Context, id, task, arm string) ([]repLink, error) {
	var out []repLink
	err := s.db.Each(ctx, `SELECT rep, attempt, attempt_id, ok, error_kind FROM results
		WHERE run_id = ? AND task = ? AND arm = ? ORDER BY rep, attempt`,
		[]any{id, task, arm}, func(sc store.Scanner) error {
			var l repLink
			var kind *string
			if err := sc.Scan(&l.Rep, &l.Attempts, &l.ID, &l.OK, &kind); err != nil {
				return err
			}
			if kind != nil {
				l.Kind = *kind
			}
			if n := len(out); n > 0 && out[n-1].Rep == l.Rep {
				out[n-1] = l // a later attempt of the same cell
				return nil
			}
			if len(out) == maxGridReps {
				return errEnough
			}
			out = append(out, l)
			return nil
		})
	if err != nil && err != errEnough {
		return nil, fmt.Errorf("cells of %s/%s: %w", task, arm, err)
	}
	return out, nil
}

var errEnough = fmt.Errorf("enough")
