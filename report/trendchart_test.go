package report

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wfbench/wfb/report/stats"
)

// trendPoints is one metric of arms x and y over three days: x measured
// nothing on day-1, y's first interval is unbounded and its last has no
// ends.
func trendPoints(m Metric, rate bool, centre func(arm, day int) float64) (days []string, pts []TrendPoint) {
	days = []string{"day-0", "day-1", "day-2"}
	for a, arm := range []string{"x", "y"} {
		for d, day := range days {
			c := centre(a, d)
			s := stats.Summary{N: 5, Center: c, Lo: c * 0.8, Hi: c * 1.1}
			switch {
			case arm == "x" && d == 1:
				s = stats.Summary{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
			case arm == "y" && d == 0:
				s.Lo, s.Hi = math.Inf(-1), math.Inf(1)
			case arm == "y" && d == 2:
				s.Lo, s.Hi = math.NaN(), math.NaN()
			}
			pts = append(pts, TrendPoint{Bucket: day, Arm: arm, Key: m.Column(), Name: humanName(m), Metric: m, Rate: rate, Summary: s})
		}
	}
	return days, pts
}

// smallFrame is a frame of another size than the viewer's.
var smallFrame = ChartFrame{W: 520, H: 300, Left: 56, Right: 504, Top: 12, Bottom: 248, MaxDodge: 8}

// TestTrendChartIsOneFigureOnEveryFrame stops one trend from being drawn as
// two figures on frames of two sizes (the viewer's trend page and the
// report page once differed): the axis, its ticks, the marks and the gaps
// are the same on both, only placed to scale.
func TestTrendChartIsOneFigureOnEveryFrame(t *testing.T) {
	days, pts := trendPoints(CostUSD, false, func(a, d int) float64 { return 0.25 + 0.05*float64(a+d) })
	small := TrendChartOf(pts, days, smallFrame)
	big := TrendChartOf(pts, days, ChartFrame{W: 760, H: 300, Left: 64, Right: 744, Top: 16, Bottom: 256, MaxDodge: 14, LabelRunes: 14})
	type figure struct {
		Lo, Hi  float64
		Unit    string
		Ticks   []string
		Heights []float64 // each tick's and mark's height in the plot, 0 to 1
		Marks   []string
		Missing [][]string
	}
	of := func(c *TrendChart) figure {
		f := c.Frame
		h := func(y float64) float64 { return (f.Bottom - y) / (f.Bottom - f.Top) }
		fig := figure{Lo: c.Lo, Hi: c.Hi, Unit: c.Unit}
		for _, tk := range c.YTicks {
			fig.Ticks = append(fig.Ticks, tk.Label)
			fig.Heights = append(fig.Heights, h(tk.At))
		}
		for _, s := range c.Series {
			fig.Missing = append(fig.Missing, s.Missing)
			for _, m := range s.Marks {
				fig.Marks = append(fig.Marks, s.Arm+" "+m.Point.Bucket+" "+tickLabel(m.Centre)+
					map[bool]string{true: " joined"}[m.Joined]+map[bool]string{true: " open"}[m.Open]+map[bool]string{false: " no interval"}[m.Interval])
				fig.Heights = append(fig.Heights, h(m.Y), h(m.Lo), h(m.Hi))
			}
		}
		return fig
	}
	want := figure{Lo: 0, Hi: 0.4, Unit: "USD",
		Ticks:   []string{"0", "0.1", "0.2", "0.3", "0.4"},
		Marks:   []string{"x day-0 0.25", "x day-2 0.35", "y day-0 0.3 open", "y day-1 0.35 joined", "y day-2 0.4 joined no interval"},
		Missing: [][]string{{"day-1"}, nil}}
	got := of(small)
	got.Heights = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the small frame's figure (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(of(small), of(big), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("the viewer's frame draws another figure (-small +viewer):\n%s", diff)
	}
}

// TestTrendChartShowsAProportionInPercent stops a proportion's trend (the
// share of verdicts right) from being drawn in fractions under a name
// that says percent (the old HTML report drew 0.5 on a 0–1 axis where
// the viewer drew 50 on 0–100).
func TestTrendChartShowsAProportionInPercent(t *testing.T) {
	days, pts := trendPoints(VerdictCorrect, false, func(a, d int) float64 { return 0.5 })
	c := TrendChartOf(pts, days, smallFrame)
	if c.Unit != "%" || c.Lo != 0 || c.Hi != 100 {
		t.Errorf("unit %q, axis %v–%v; want %% on 0–100", c.Unit, c.Lo, c.Hi)
	}
	if m := c.Series[0].Marks[0]; m.Centre != 50 {
		t.Errorf("a centre of 0.5 is drawn at %v, want 50", m.Centre)
	}
}
