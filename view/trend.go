package view

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wfbench/wfb/report"
)

// trendBys are the buckets the trend page offers.
var trendBys = []string{"day", "label"}

// defaultTrendMetric is the metric a trend page shows unless asked.
const defaultTrendMetric = "strict_pass_rate"

// trendAlpha is the significance level of the trend page, wfb trend's
// default.
const trendAlpha = 0.05

type trendData struct {
	Title   string
	L       links
	Metric  string // the line key shown
	Name    string // its name for people
	By      string
	Bys     []string
	Metrics []trendMetric
	Buckets []string
	Problem string // why there is no trend to show
	Chart   *chart
	Tables  []*report.Table // the trend's table, its notes below it (Legend, Steps)
	// F is the runs the trend is over; Labels the labels it may keep,
	// Sessions how many ad-hoc sessions F leaves out (or, with
	// F.Sessions, takes in).
	F        trendFilter
	Labels   []string
	Sessions int
	// Legend is how each step is tested; Steps the notes of each step;
	// Fold that there are more than a page shows open.
	Legend string
	Steps  []report.NoteGroup
	Fold   bool
}

// trendFilter narrows the runs a trend is over: to one label, and to bench
// runs unless Sessions takes in the ad-hoc ones (runs of kind session, one
// cell each, which otherwise show as arms of their own).
type trendFilter struct {
	Label    string
	Sessions bool
}

// trendRuns is what a filter kept of the file's runs with attempts.
type trendRuns struct {
	present  map[string]bool
	labels   []string // every label among the runs with attempts
	sessions int      // ad-hoc sessions the filter leaves out, or takes in
}

// trendMetric is one metric the trend can show.
type trendMetric struct{ Key, Name string }

// trendPage is /trend?metric=…&by=day|label[&label=L][&sessions=1]: one
// metric per arm across the buckets, by wfb trend's builder, over the bench
// runs (of label L), with the ad-hoc sessions when asked.
func (s *Server) trendPage(r *http.Request, l links) (string, any, error) {
	q := r.URL.Query()
	metric, by := q.Get("metric"), q.Get("by")
	f := trendFilter{Label: q.Get("label"), Sessions: q.Get("sessions") == "1"}
	if metric == "" {
		metric = defaultTrendMetric
	}
	if by == "" {
		by = "day"
	}
	if !slices.Contains(trendBys, by) {
		return "", nil, fmt.Errorf("by %q: the buckets are %s: %w", by, strings.Join(trendBys, ", "), errBadRequest)
	}
	tr, kept, err := s.trendOf(r.Context(), by, f)
	if err != nil {
		return "", nil, err
	}
	if f.Label != "" && !slices.Contains(kept.labels, f.Label) {
		return "", nil, fmt.Errorf("label %q: no run with attempts has it; the labels are %s: %w", f.Label, strings.Join(kept.labels, ", "), errBadRequest)
	}
	d := trendPageData(l, tr, by, metric, f, kept)
	if tr != nil && d.Name == "" {
		var keys []string
		for _, m := range d.Metrics {
			keys = append(keys, m.Key)
		}
		return "", nil, fmt.Errorf("metric %q: the trend has %s: %w", metric, strings.Join(keys, ", "), errBadRequest)
	}
	return "trend", d, nil
}

// trendOf is wfb trend over the attempts of the runs f keeps, every
// metric, no baseline: nil when they span fewer than two buckets.
func (s *Server) trendOf(ctx context.Context, by string, f trendFilter) (*report.Trend, trendRuns, error) {
	type trendOf struct {
		tr   *report.Trend
		kept trendRuns
	}
	t, err := cachedResult(ctx, s, fmt.Sprintf("trend %q %+v", by, f), func() (trendOf, error) {
		tr, kept, err := s.readTrend(ctx, by, f)
		return trendOf{tr, kept}, err
	})
	return t.tr, t.kept, err
}

// readTrend reads and computes the trend (see trendOf).
func (s *Server) readTrend(ctx context.Context, by string, f trendFilter) (*report.Trend, trendRuns, error) {
	var kept trendRuns
	runs, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return nil, kept, err
	}
	withRows, err := report.RunsWithRows(ctx, s.db, report.Selection{Spec: "all"})
	if err != nil {
		return nil, kept, fmt.Errorf("trend: %w", err)
	}
	kept.present = map[string]bool{}
	for _, r := range runs {
		if !withRows[r.ID] {
			continue
		}
		if r.Label != "" && !slices.Contains(kept.labels, r.Label) {
			kept.labels = append(kept.labels, r.Label)
		}
		if f.Label != "" && r.Label != f.Label {
			continue
		}
		if r.Kind == "session" {
			kept.sessions++
			if !f.Sessions {
				continue
			}
		}
		kept.present[r.ID] = true
	}
	names, ofRun, err := report.TrendBuckets(runs, by, kept.present)
	if err != nil {
		return nil, kept, fmt.Errorf("%v: %w", err, errBadRequest)
	}
	if len(names) < 2 {
		return nil, kept, nil
	}
	tr := report.NewTrender(report.TrendOptions{Alpha: trendAlpha, Metrics: s.cols.Metrics(), By: by}, names, -1)
	err = report.LoadRows(ctx, s.db, s.cols, report.Selection{Spec: "all"}, func(row *report.Row) {
		// One pass over the file; the runs the filter left out have no
		// bucket.
		if i, ok := ofRun[row.RunID]; ok {
			tr.Add(i, row)
		}
	})
	if err != nil {
		return nil, kept, err
	}
	return tr.Result(runs), kept, nil
}

// trendPageData is the page of one metric of a trend (nil: too few
// buckets) over the runs f kept. Name stays "" when the trend has no such
// metric.
func trendPageData(l links, tr *report.Trend, by, metric string, f trendFilter, kept trendRuns) *trendData {
	d := &trendData{L: l, Metric: metric, By: by, Bys: trendBys, Title: "Trend by " + by, F: f, Labels: kept.labels, Sessions: kept.sessions}
	if tr == nil {
		what := "The results file's attempts"
		switch {
		case f.Label != "":
			what = "The attempts of label " + f.Label
		case kept.sessions > 0 && !f.Sessions:
			what = "The bench runs' attempts"
		}
		d.Problem = fmt.Sprintf("%s span fewer than two %s buckets: a trend needs two.", what, by)
		return d
	}
	d.Buckets = tr.Buckets
	var points []report.TrendPoint
	for _, p := range tr.Points {
		if !slices.ContainsFunc(d.Metrics, func(m trendMetric) bool { return m.Key == p.Key }) {
			d.Metrics = append(d.Metrics, trendMetric{p.Key, p.Name})
		}
		if p.Key == metric {
			d.Name = p.Name
			points = append(points, p)
		}
	}
	if d.Name == "" {
		return d
	}
	d.Title = "Trend of " + d.Name + " by " + by
	one := *tr
	one.Points = points
	one.Footnotes = nil // shown below the table, grouped by step
	d.Tables = one.Tables(report.FormatTable)
	d.Chart = trendChart(by, tr.Buckets, points)
	d.Legend, d.Steps = tr.Legend, tr.StepNotes
	d.Fold = len(tr.Footnotes) > foldNotesOver
	return d
}

// WithSessions is f taking in the ad-hoc sessions, or leaving them out.
func (f trendFilter) WithSessions(in bool) trendFilter {
	f.Sessions = in
	return f
}
