package view

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// compareAlpha is the compare page's significance level unless asked, wfb
// diff's default; the export's comparisons use it.
const compareAlpha = 0.05

type compareData struct {
	Title  string
	L      links
	A, B   string
	ByTask bool
	Alpha  string
	// Runs are the pickers' options, newest first; FA and FB are A and B
	// when a side is not one run (a label or a filter), for the text boxes.
	Runs       []runOption
	FA, FB     string
	Names      []string // run ids and labels, for the text boxes' suggestions
	Tables     []*report.Table
	Charts     []*forest // one per metric of the diff a side measured
	Unmeasured []string  // the metrics neither side measured
	Level      int       // the intervals' confidence, in percent
}

// runOption is a run in a picker.
type runOption struct {
	ID, Text string
}

// comparePage is /compare?a=A&b=B[&by=task,arm][&alpha=…]: A and B as wfb
// diff takes them. The form picks each side from the runs, or takes fa
// and fb (a label or a filter) over the pickers when they are given.
func (s *Server) comparePage(r *http.Request, l links) (string, any, error) {
	q := r.URL.Query()
	side := func(picked, typed string) string {
		if t := strings.TrimSpace(q.Get(typed)); t != "" {
			return t
		}
		return q.Get(picked)
	}
	d := &compareData{Title: "Compare", L: l, A: side("a", "fa"), B: side("b", "fb"), ByTask: q.Get("by") == "task,arm", Alpha: q.Get("alpha")}
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
	if d.Runs, err = s.runOptions(r.Context(), runs); err != nil {
		return "", nil, err
	}
	isRun := func(name string) bool {
		return slices.ContainsFunc(runs, func(ri report.RunInfo) bool { return ri.ID == name })
	}
	if !isRun(d.A) {
		d.FA = d.A
	}
	if !isRun(d.B) {
		d.FB = d.B
	}
	if d.A == "" || d.B == "" {
		return "compare", d, nil
	}
	if err := s.compare(r.Context(), d, runs, alpha); err != nil {
		return "", nil, err
	}
	return "compare", d, nil
}

// runOptions are the runs as a picker lists them, newest first: "RUN-ID —
// label — started — cells".
func (s *Server) runOptions(ctx context.Context, runs []report.RunInfo) ([]runOption, error) {
	infos := slices.Clone(runs)
	if err := report.FillRunStats(ctx, s.db, infos, true); err != nil {
		return nil, err
	}
	out := make([]runOption, 0, len(infos))
	for _, ri := range slices.Backward(infos) {
		label := ri.Label
		if label == "" {
			label = "no label"
		}
		if ri.Kind == "session" {
			label += " (session)"
		}
		cells := fmt.Sprintf("%d cells", ri.Cells)
		if ri.Cells == 1 {
			cells = "1 cell"
		}
		started := ri.StartedAt
		if t, err := time.Parse(store.TimeLayout, started); err == nil {
			started = t.Format("2006-01-02 15:04 UTC")
		}
		out = append(out, runOption{ID: ri.ID, Text: strings.Join([]string{ri.ID, label, started, cells}, " — ")})
	}
	return out, nil
}

// compare fills d with `wfb diff` of d.A and d.B: its tables and a chart
// per metric.
func (s *Server) compare(ctx context.Context, d *compareData, runs []report.RunInfo, alpha float64) error {
	d.Title = "Compare " + d.A + " with " + d.B
	df, err := cachedResult(ctx, s, fmt.Sprintf("compare %q %q %v %v", d.A, d.B, d.ByTask, alpha), func() (*report.Diff, error) {
		return report.DiffSides(ctx, s.db, s.cols, runs, d.A, d.B, report.DiffOptions{ByTask: d.ByTask, Alpha: alpha})
	})
	if err != nil {
		return err
	}
	d.Tables = df.Tables(d.A, d.B, report.FormatTable)
	d.Charts, d.Unmeasured = forests(df, alpha)
	d.Level = int(math.Round((1 - alpha) * 100))
	return nil
}
