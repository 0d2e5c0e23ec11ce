package report

import (
	"math"
	"testing"
)

// metricsAgree checks that the diff's line for metric (or the strict pass
// rate, m < 0) on side has the centre and n that the report's group has.
func metricsAgree(t *testing.T, what string, g *Group, m Metric, rate bool, s SummaryOf) {
	t.Helper()
	want, n := g.StrictRate(), g.Cells
	if !rate {
		want, n = g.Metrics[m].Center, g.Metrics[m].N
	}
	if s.N != n || !(s.Center == want || math.Abs(s.Center-want) < 1e-12) {
		t.Errorf("%s: report says %v over %d, %s says %v over %d", m.Name(), want, n, what, s.Center, s.N)
	}
}

// SummaryOf is the part of a summary the agreement test compares.
type SummaryOf struct {
	N      int
	Center float64
}

// TestReportAndDiffAgreeOnEveryMetric stops `wfb report`, `wfb diff` and `wfb trend`
// reading the same metric of the same run differently (the issue: wall
// time 0.082 in report, 0.0745 in diff, since one took a median per cell
// with retries summed and the other per attempt). Both now take one value
// per cell, and their centres and n must be equal.
func TestReportAndDiffAgreeOnEveryMetric(t *testing.T) {
	d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: baseMetrics})
	tabs := [2]*Tabulator{NewTabulator(TabulateOptions{Metrics: baseMetrics}), NewTabulator(TabulateOptions{Metrics: baseMetrics})}
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: baseMetrics, By: "run"}, []string{"r1", "r2"}, -1)
	eachFixtureSide(func(side int, r *Row) {
		d.Add(side, r)
		tr.Add(side, r)
		tabs[side].Add(r)
	})
	df := d.Result(fixtureRuns)
	trend := tr.Result(fixtureRuns)
	for side, tab := range tabs {
		groups := map[string]*Group{}
		for _, g := range tab.Result().Groups {
			groups[g.Arm] = g
		}
		for _, p := range trend.Points {
			if p.Bucket == []string{"r1", "r2"}[side] && p.Key != "clean_pass_rate" {
				metricsAgree(t, "trend", groups[p.Arm], p.Metric, p.Rate, SummaryOf{p.Summary.N, p.Summary.Center})
			}
		}
		checked := 0
		for _, l := range df.Lines {
			if l.Key == "clean_pass_rate" {
				continue // paired: footnoted when it differs from the report's
			}
			s := l.Cmp.A
			if side == SideB {
				s = l.Cmp.B
			}
			metricsAgree(t, "diff", groups[l.Arm], l.Metric, l.Rate, SummaryOf{s.N, s.Center})
			checked++
		}
		if checked != 2*(len(baseMetrics)+1) {
			t.Errorf("compared %d lines", checked)
		}
	}
}
