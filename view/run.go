package view

import (
	"context"
	"fmt"
	"net/http"

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
	d := &runData{L: l, Run: rs[0], ByTask: byTask, Title: "Run " + id}
	_, meta, err := s.db.Query(ctx, `SELECT kind, harness, config FROM runs WHERE run_id = ?`, id)
	if err != nil || len(meta) != 1 {
		return nil, fmt.Errorf("run %s: %v", id, err)
	}
	d.Kind, d.Harness, d.Config = str(meta[0][0]), str(meta[0][1]), str(meta[0][2])
	if d.Agents, err = s.table(ctx, "agents", `SELECT agent, agent_version, model, count(*) AS attempts
		FROM results WHERE run_id = ? GROUP BY agent, agent_version, model`, id); err != nil {
		return nil, err
	}
	if d.Tables, err = s.reportTables(ctx, id, byTask); err != nil {
		return nil, err
	}
	if d.Grid, err = s.grid(ctx, id); err != nil {
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

// reportTables are `wfb report`'s tables for the run, by the same
// builders.
func (s *Server) reportTables(ctx context.Context, id string, byTask bool) ([]*report.Table, error) {
	tab := report.NewTabulator(report.TabulateOptions{ByTask: byTask, Metrics: s.cols.Metrics()})
	sel := report.Selection{Spec: id, RunIDs: []string{id}}
	if err := report.LoadRows(ctx, s.db, s.cols, sel, tab.Add); err != nil {
		return nil, err
	}
	res := tab.Result()
	if len(res.Groups) == 0 {
		return nil, nil
	}
	return res.Tables("run "+id, report.FormatTable), nil
}

// table runs a query into a table titled title.
func (s *Server) table(ctx context.Context, title, q string, args ...any) (*report.Table, error) {
	cols, rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", title, err)
	}
	return &report.Table{Title: title, Columns: cols, Rows: rows}, nil
}

// grid counts each task × arm's cells by their final attempt, and links the
// first maxGridReps of them.
func (s *Server) grid(ctx context.Context, id string) (grid, error) {
	var g grid
	_, rows, err := s.db.Query(ctx, `SELECT task, arm, count(*), total(ok)
		FROM (SELECT task, arm, ok, max(attempt) FROM results WHERE run_id = ? GROUP BY task, arm, rep)
		GROUP BY task, arm ORDER BY task, arm`, id)
	if err != nil {
		return g, fmt.Errorf("grid of run %s: %w", id, err)
	}
	armIndex := map[string]int{}
	for _, v := range rows {
		if a := str(v[1]); armIndex[a] == 0 {
			g.Arms = append(g.Arms, a)
			armIndex[a] = len(g.Arms)
		}
	}
	byTask := map[string]*gridRow{}
	for _, v := range rows {
		task := str(v[0])
		row := byTask[task]
		if row == nil {
			if len(g.Rows) == maxGridRows {
				g.MoreTasks++
				continue
			}
			g.Rows = append(g.Rows, gridRow{Task: task, Cells: make([]*gridCell, len(g.Arms))})
			row = &g.Rows[len(g.Rows)-1]
			byTask[task] = row
		}
		c := &gridCell{Cells: int(num(v[2])), OK: int(num(v[3]))}
		if c.Reps, err = s.reps(ctx, id, task, str(v[1])); err != nil {
			return g, err
		}
		c.More = c.Cells - len(c.Reps)
		row.Cells[armIndex[str(v[1])]-1] = c
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
