package view

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report"
)

// runRow is one line of the runs page.
type runRow struct {
	report.RunInfo
	Errored       int    // final attempts that ended with an excluded kind
	Strict, Clean string // rates, "" when there is no cell (or no clean cell)
	Cost          string // total, with * when some attempt's cost was not measured
	Prev          string // the run before it with the same label, for Compare
}

type runsData struct {
	Title      string
	L          links
	Label, Day string
	Labels     []string
	Runs       []runRow
}

func (s *Server) runsPage(r *http.Request, l links) (string, any, error) {
	q := r.URL.Query()
	d, err := s.runsData(r.Context(), l, q.Get("label"), q.Get("day"))
	return "runs", d, err
}

// runsData lists the runs the label and day (a prefix of the UTC start
// date) select, newest first, each with its final-cell counts.
func (s *Server) runsData(ctx context.Context, l links, label, day string) (*runsData, error) {
	all, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return nil, err
	}
	d := &runsData{Title: "Runs", L: l, Label: label, Day: day}
	prevByLabel := map[string]string{}
	var picked []runRow
	for _, ri := range all {
		if ri.Label != "" && !slices.Contains(d.Labels, ri.Label) {
			d.Labels = append(d.Labels, ri.Label)
		}
		row := runRow{RunInfo: ri, Prev: prevByLabel[ri.Label]}
		if ri.Label != "" {
			prevByLabel[ri.Label] = ri.ID
		}
		if (label == "" || ri.Label == label) && strings.HasPrefix(ri.StartedAt, day) {
			picked = append(picked, row)
		}
	}
	if err := s.runCounts(ctx, picked, len(picked) < len(all)); err != nil {
		return nil, err
	}
	slices.Reverse(picked)
	d.Runs = picked
	return d, nil
}

// runCounts fills in each run's cells, attempts, rates and cost. A cell's
// outcome is its final attempt's, as in `wfb report`: the counts over every
// attempt (one scan in rowid order) less those over the attempts a later
// attempt of the same cell superseded (found from the attempts numbered
// above 1, through the cell index). Only the runs named are read when
// narrow is set.
func (s *Server) runCounts(ctx context.Context, runs []runRow, narrow bool) error {
	if len(runs) == 0 {
		return nil
	}
	excluded := wfb.ErroredKinds()
	var kinds, ids []any
	for _, k := range excluded {
		kinds = append(kinds, k)
	}
	where := "1"
	if narrow {
		where = "run_id IN (" + marks(len(runs)) + ")"
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
	}
	errored := `total(r.error_kind IN (` + marks(len(excluded)) + `))`
	_, all, err := s.db.Query(ctx, `SELECT r.run_id, count(*), total(r.ok), `+errored+`, count(r.cost_usd), total(r.cost_usd)
		FROM results r NOT INDEXED WHERE `+where+` GROUP BY r.run_id`, append(kinds, ids...)...)
	if err != nil {
		return fmt.Errorf("count the runs' attempts: %w", err)
	}
	_, superseded, err := s.db.Query(ctx, `WITH multi AS (SELECT run_id, task, arm, rep, max(attempt) AS m
			FROM results NOT INDEXED WHERE attempt > 1 AND `+where+` GROUP BY run_id, task, arm, rep)
		SELECT r.run_id, count(*), total(r.ok), `+errored+` FROM multi CROSS JOIN results r
			ON r.run_id = multi.run_id AND r.task = multi.task AND r.arm = multi.arm AND r.rep = multi.rep AND r.attempt < multi.m
		GROUP BY r.run_id`, append(ids, kinds...)...)
	if err != nil {
		return fmt.Errorf("count the runs' retried attempts: %w", err)
	}
	byID := map[string]*runRow{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	for _, v := range all {
		if r := byID[str(v[0])]; r != nil {
			r.Attempts, r.Cells, r.OK, r.Errored = int(num(v[1])), int(num(v[1])), int(num(v[2])), int(num(v[3]))
			r.CostN, r.CostSum = int(num(v[4])), num(v[5])
		}
	}
	for _, v := range superseded {
		if r := byID[str(v[0])]; r != nil {
			r.Cells, r.OK, r.Errored = r.Cells-int(num(v[1])), r.OK-int(num(v[2])), r.Errored-int(num(v[3]))
		}
	}
	for _, r := range byID {
		r.Strict, r.Clean = rate(r.OK, r.Cells), rate(r.OK, r.Cells-r.Errored)
		r.Cost = cost(r.CostSum, r.CostN, r.Attempts)
	}
	return nil
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// rate is ok/n as a percentage, "" when n is 0.
func rate(ok, n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*float64(ok)/float64(n))
}

// cost is a total cost: "" when nothing was measured, with * when some
// attempts' cost was not.
func cost(sum float64, measured, attempts int) string {
	switch {
	case measured == 0:
		return ""
	case measured < attempts:
		return fmt.Sprintf("$%.4f*", sum)
	}
	return fmt.Sprintf("$%.4f", sum)
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func num(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}
