package view

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/wfbench/wfb/report"
)

// compareAlpha is the compare page's significance level unless asked, wfb
// diff's default; the export's comparisons use it.
const compareAlpha = 0.05

type compareData struct {
	Title      string
	L          links
	A, B       string
	ByTask     bool
	Alpha      string
	Names      []string // run ids and labels, for the form's suggestions
	Tables     []*report.Table
	Charts     []*forest // one per metric of the diff a side measured
	Unmeasured []string  // the metrics neither side measured
	Level      int       // the intervals' confidence, in percent
}

func (s *Server) comparePage(r *http.Request, l links) (string, any, error) {
	q := r.URL.Query()
	d := &compareData{Title: "Compare", L: l, A: q.Get("a"), B: q.Get("b"), ByTask: q.Get("by") == "task,arm", Alpha: q.Get("alpha")}
	alpha := compareAlpha
	if d.Alpha != "" {
		a, err := strconv.ParseFloat(d.Alpha, 64)
		if err != nil || !(a > 0 && a < 1) {
			return "", nil, fmt.Errorf("alpha %q: want a number between 0 and 1: %w", d.Alpha, errBadRequest)
		}
		alpha = a
	}
	runs, err := report.LoadRuns(r.Context(), s.db)
	if err != nil {
		return "", nil, err
	}
	seen := map[string]bool{}
	for _, ri := range runs {
		for _, n := range []string{ri.ID, ri.Label} {
			if n != "" && !seen[n] {
				seen[n] = true
				d.Names = append(d.Names, n)
			}
		}
	}
	if d.A == "" || d.B == "" {
		return "compare", d, nil
	}
	if err := s.compare(r.Context(), d, runs, alpha); err != nil {
		return "", nil, err
	}
	return "compare", d, nil
}

// compare fills d with `wfb diff` of d.A and d.B: its tables and a chart
// per metric.
func (s *Server) compare(ctx context.Context, d *compareData, runs []report.RunInfo, alpha float64) error {
	d.Title = "Compare " + d.A + " with " + d.B
	df, err := report.DiffSides(ctx, s.db, s.cols, runs, d.A, d.B, report.DiffOptions{ByTask: d.ByTask, Alpha: alpha})
	if err != nil {
		return err
	}
	d.Tables = df.Tables(d.A, d.B, report.FormatTable)
	d.Charts, d.Unmeasured = forests(df, alpha)
	d.Level = int(math.Round((1 - alpha) * 100))
	return nil
}
