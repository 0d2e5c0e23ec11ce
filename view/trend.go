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
	Tables  []*report.Table
}

// trendMetric is one metric the trend can show.
type trendMetric struct{ Key, Name string }

// trendPage is /trend?metric=…&by=day|label: one metric per arm across the
// buckets, by wfb trend's builder.
func (s *Server) trendPage(r *http.Request, l links) (string, any, error) {
	q := r.URL.Query()
	metric, by := q.Get("metric"), q.Get("by")
	if metric == "" {
		metric = defaultTrendMetric
	}
	if by == "" {
		by = "day"
	}
	if !slices.Contains(trendBys, by) {
		return "", nil, fmt.Errorf("by %q: the buckets are %s: %w", by, strings.Join(trendBys, ", "), errBadRequest)
	}
	tr, err := s.trendOf(r.Context(), by)
	if err != nil {
		return "", nil, err
	}
	d := trendPageData(l, tr, by, metric)
	if tr != nil && d.Name == "" {
		var keys []string
		for _, m := range d.Metrics {
			keys = append(keys, m.Key)
		}
		return "", nil, fmt.Errorf("metric %q: the trend has %s: %w", metric, strings.Join(keys, ", "), errBadRequest)
	}
	return "trend", d, nil
}

// trendOf is wfb trend over every attempt of the file, every metric, no
// baseline: nil when the attempts span fewer than two buckets.
func (s *Server) trendOf(ctx context.Context, by string) (*report.Trend, error) {
	runs, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return nil, err
	}
	present, err := report.RunsWithRows(ctx, s.db, report.Selection{Spec: "all"})
	if err != nil {
		return nil, fmt.Errorf("trend: %w", err)
	}
	names, ofRun, err := report.TrendBuckets(runs, by, present)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errBadRequest)
	}
	if len(names) < 2 {
		return nil, nil
	}
	tr := report.NewTrender(report.TrendOptions{Alpha: trendAlpha, Metrics: s.cols.Metrics(), By: by}, names, -1)
	err = report.LoadRows(ctx, s.db, s.cols, report.Selection{Spec: "all"}, func(row *report.Row) { tr.Add(ofRun[row.RunID], row) })
	if err != nil {
		return nil, err
	}
	return tr.Result(runs), nil
}

// trendPageData is the page of one metric of a trend (nil: too few
// buckets). Name stays "" when the trend has no such metric.
func trendPageData(l links, tr *report.Trend, by, metric string) *trendData {
	d := &trendData{L: l, Metric: metric, By: by, Bys: trendBys, Title: "Trend by " + by}
	if tr == nil {
		d.Problem = fmt.Sprintf("The results file's attempts span fewer than two %s buckets: a trend needs two.", by)
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
	d.Tables = one.Tables(report.FormatTable)
	d.Chart = trendChart(tr.Buckets, points)
	return d
}
