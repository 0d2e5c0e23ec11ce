package view

import (
	"fmt"
	"math"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/report/stats"
)

// Values of about 1e7 one float apart: the axis is padded at their
// magnitude and its ticks end, few, distinct and covering the values (the
// old loop stepped by less than the float spacing and never ended).
func TestAxisTicksOfValuesOneFloatApartEnd(t *testing.T) {
	for _, v := range []float64{1e7, -1e7, 1e15, 3.7} {
		vs := []float64{v, math.Nextafter(v, math.Inf(1))}
		lo, hi := valueRange(vs, false)
		ts := yTicks(&lo, &hi)
		if len(ts) < 2 || len(ts) > 12 {
			t.Fatalf("%g: %d ticks, want a handful", v, len(ts))
		}
		for i := 1; i < len(ts); i++ {
			if !(ts[i].Y > ts[i-1].Y) || ts[i].Label == ts[i-1].Label {
				t.Errorf("%g: ticks %v and %v are not distinct and increasing", v, ts[i-1], ts[i])
			}
		}
		if ts[0].Y > vs[0] || ts[len(ts)-1].Y < vs[1] || lo != ts[0].Y || hi != ts[len(ts)-1].Y {
			t.Errorf("%g: ticks %v..%v (axis %g..%g) do not cover the values", v, ts[0].Y, ts[len(ts)-1].Y, lo, hi)
		}
	}
}

// Twelve arms: colours repeat after eight, so each arm's points carry a
// marker shape as well, and no two arms share a (colour, shape) pair —
// arm 9 is not drawn as arm 1 — in the chart, its points and its legend.
func TestTrendArmsPastTheColoursStayApartByShape(t *testing.T) {
	var points []report.TrendPoint
	for a := range 12 {
		for _, b := range []string{"d1", "d2"} {
			points = append(points, report.TrendPoint{Bucket: b, Arm: fmt.Sprintf("arm%02d", a), Metric: report.CostUSD,
				Summary: stats.Summary{Center: float64(a), Lo: float64(a) - 0.5, Hi: float64(a) + 0.5, N: 3}})
		}
	}
	c := trendChart("day", []string{"d1", "d2"}, points)
	if c == nil || len(c.Series) != 12 {
		t.Fatalf("chart %+v, want 12 series", c)
	}
	seen := map[[2]string]string{}
	markers := map[string]string{} // a point's marker path shape, by series
	for _, s := range c.Series {
		key := [2]string{s.Class, s.Shape}
		if s.Shape == "" || seen[key] != "" {
			t.Errorf("%s is drawn as %v, like %q", s.Arm, key, seen[key])
		}
		seen[key] = s.Arm
		if len(s.Points) != 2 || s.Points[0].Marker == "" || s.Swatch == "" {
			t.Fatalf("%s: points %+v, swatch %q", s.Arm, s.Points, s.Swatch)
		}
		// The marker's outline, moved to the origin, is the shape's.
		markers[s.Arm] = markerPath(s.Shape, 0, 0, 3.5)
		if s.Points[0].Marker != markerPath(s.Shape, s.Points[0].X, s.Points[0].Y, 3.5) {
			t.Errorf("%s: point marker %q is not its %s", s.Arm, s.Points[0].Marker, s.Shape)
		}
	}
	if c.Series[0].Class != c.Series[8].Class || markers[c.Series[0].Arm] == markers[c.Series[8].Arm] {
		t.Errorf("arm 1 and arm 9 share a colour (%s, %s) and must differ in shape: %q, %q", c.Series[0].Class, c.Series[8].Class,
			markers[c.Series[0].Arm], markers[c.Series[8].Arm])
	}
}

// TestTheViewerAndTheReportDrawOneTrendAxis stops the trend page and wfb
// report --html's page from showing one trend on two scales: the viewer
// once fitted its axis to the values (a cost from 0.25, a pass rate from
// 20%) where the report started at zero and showed a rate on 0–100; both
// take the axis from report.TrendChartOf, from zero.
func TestTheViewerAndTheReportDrawOneTrendAxis(t *testing.T) {
	days := []string{"2026-11-29", "2026-11-30"}
	tr := report.NewTrender(report.TrendOptions{Alpha: 0.05, Metrics: []report.Metric{report.CostUSD}, By: "day"}, days, -1)
	for day := range days {
		for _, arm := range []string{"a", "b"} {
			for rep := range 6 {
				r := report.Row{RunID: days[day], Task: "t", Arm: arm, Rep: rep, Attempt: 1, OK: rep > day, Values: report.Unmeasured()}
				r.Values[report.CostUSD] = 0.25 + 0.02*float64(rep+day)
				tr.Add(day, &r)
			}
		}
	}
	res := tr.Result(nil)
	page := writeReportPage(t, ReportPage{Title: "t", Trend: res})
	tickRE := regexp.MustCompile(`<text class="tick y" [^>]*>([^<]*)</text>`)
	for _, key := range []string{"strict_pass_rate", "cost_usd"} {
		fig := regexp.MustCompile(`(?s)<figure class="chart" data-key="` + key + `">.*?</figure>`).FindString(page)
		var want []string
		for _, m := range tickRE.FindAllStringSubmatch(fig, -1) {
			want = append(want, m[1])
		}
		var points []report.TrendPoint
		for _, p := range res.Points {
			if p.Key == key {
				points = append(points, p)
			}
		}
		c := trendChart("day", res.Buckets, points)
		if c == nil || len(want) == 0 {
			t.Fatalf("%s: no chart (viewer %v, report ticks %q)", key, c, want)
		}
		var got []string
		for _, tk := range c.YTicks {
			got = append(got, tk.Label)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the viewer's axis is not the report's (-report +viewer):\n%s", key, diff)
		}
		if got[0] != "0" {
			t.Errorf("%s: the axis starts at %s, not at zero", key, got[0])
		}
	}
}
