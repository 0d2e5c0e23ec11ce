package view

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wfbench/wfb/report"
)

// runRow is one line of the runs page.
type runRow struct {
	report.RunInfo
	Strict, Clean string // rates, "" when there is no cell (or no clean cell)
	CostText      string // total, with * when some attempt's cost was not measured
	CostNotes     []string
	Prev          string // the run before it with the same label, for Compare
}

type runsData struct {
	Title      string
	L          links
	Label, Day string
	Labels     []string
	Runs       []runRow
	Compares   []ComparePair // the comparisons an export was asked for
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

// runCounts fills in each run's cells, attempts, rates and cost, as `wfb
// runs` counts them (report.FillRunStats): cells by their final attempts,
// the one cost. Only the runs named are read when narrow is set.
func (s *Server) runCounts(ctx context.Context, runs []runRow, narrow bool) error {
	infos := make([]report.RunInfo, len(runs))
	for i := range runs {
		infos[i] = runs[i].RunInfo
	}
	if err := report.FillRunStats(ctx, s.db, infos, !narrow); err != nil {
		return err
	}
	for i := range runs {
		r := &runs[i]
		r.RunInfo = infos[i]
		r.Strict, r.Clean = rate(r.OK, r.Cells), rate(r.OK, r.Cells-r.Errored)
		r.CostText = report.CostText(r.Cost)
		r.CostNotes = report.CostNotes("", r.Cost)
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
