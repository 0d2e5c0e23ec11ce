package view

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/report"
)

// chart is a trend drawn as SVG by the template: per arm a line through
// the bucket centres, each with its interval as a vertical bar. Nothing in
// it is script or inline style; colours come from the stylesheet's s0…s7
// and each arm's points have a marker shape too (markerShapes), so arm 9
// is not arm 1 again and two arms stay apart without their colours.
type chart struct {
	// Key is the metric's line key, Name its name with its unit; By the
	// bucketing (day, label).
	Key, Name, By            string
	W, H                     int
	Left, Right, Top, Bottom float64 // the plot area
	Unit                     string
	YTicks                   []tick
	XTicks                   []tick
	Series                   []series
}

type tick struct {
	X, Y  float64
	Label string
	Full  string // the whole label, when Label is shortened
}

// series is one arm's line.
type series struct {
	Arm    string
	Class  string // the colour, s0…s7
	Shape  string // the marker's shape, one of markerShapes
	Swatch string // the marker as an SVG path in a 12×12 legend box
	Path   string // the line through its measured centres
	Points []chartPoint
	// Missing are the buckets the arm measured nothing in: never drawn
	// (never as zero), said in words in the legend.
	Missing []string
}

// chartPoint is one measured centre with its interval. An unbounded end
// (too few values) is drawn to the plot's edge and marked Open.
type chartPoint struct {
	X, Y, Lo, Hi float64
	Open         bool
	Changed      bool
	Title        string
	Marker       string // the series' marker at (X, Y), an SVG path
}

// markerShapes cycle with a period (5) prime to the colours' (8): 40 arms
// before a (colour, shape) pair repeats, as in wfb report's charts.
var markerShapes = []string{"circle", "square", "triangle", "diamond", "down"}

// markerPath is an SVG path of shape, of radius r, centred on (x, y).
func markerPath(shape string, x, y, r float64) string {
	f := func(v float64) string { return strconv.FormatFloat(round1(v), 'f', -1, 64) }
	switch shape {
	case "square":
		d := r * 0.85
		return fmt.Sprintf("M%s %sH%sV%sH%sZ", f(x-d), f(y-d), f(x+d), f(y+d), f(x-d))
	case "triangle":
		return fmt.Sprintf("M%s %sL%s %sL%s %sZ", f(x), f(y-r*1.1), f(x+r), f(y+r*0.75), f(x-r), f(y+r*0.75))
	case "down":
		return fmt.Sprintf("M%s %sL%s %sL%s %sZ", f(x), f(y+r*1.1), f(x+r), f(y-r*0.75), f(x-r), f(y-r*0.75))
	case "diamond":
		return fmt.Sprintf("M%s %sL%s %sL%s %sL%s %sZ", f(x), f(y-r*1.2), f(x+r*1.2), f(y), f(x), f(y+r*1.2), f(x-r*1.2), f(y))
	}
	// A circle as two arcs.
	return fmt.Sprintf("M%s %sa%s %s 0 1 0 %s 0a%s %s 0 1 0 -%s 0Z", f(x-r), f(y), f(r), f(r), f(2*r), f(r), f(r), f(2*r))
}

const (
	chartW, chartH = 760, 300
	seriesClasses  = 8
)

// trendFrame is where the trend page's chart sits in its SVG.
var trendFrame = report.ChartFrame{W: chartW, H: chartH, Left: 64, Right: chartW - 16, Top: 16, Bottom: chartH - 44,
	MaxDodge: 14, LabelRunes: 14}

// trendChart draws the points of one metric (by arm, then bucket, in
// buckets of by) as report.TrendChartOf lays them out: nil when no arm
// measured anything. The trend page and the report page draw it alike.
func trendChart(by string, buckets []string, points []report.TrendPoint) *chart {
	tc := report.TrendChartOf(points, buckets, trendFrame)
	if tc == nil || !tc.Measured() {
		return nil
	}
	f := tc.Frame
	c := &chart{Key: tc.Key, Name: tc.Name, By: by, W: int(f.W), H: int(f.H), Left: f.Left, Right: f.Right, Top: f.Top, Bottom: f.Bottom, Unit: tc.Unit}
	for _, t := range tc.YTicks {
		c.YTicks = append(c.YTicks, tick{Y: round1(t.At), Label: t.Label})
	}
	for _, t := range tc.XTicks {
		c.XTicks = append(c.XTicks, tick{X: round1(t.At), Label: t.Label, Full: t.Full})
	}
	for _, ts := range tc.Series {
		shape := markerShapes[ts.Index%len(markerShapes)]
		s := series{Arm: ts.Arm, Class: fmt.Sprintf("s%d", ts.Index%seriesClasses), Shape: shape, Swatch: markerPath(shape, 6, 6, 4.5),
			Missing: ts.Missing}
		var path strings.Builder
		for _, m := range ts.Marks {
			pt := chartPoint{X: round1(m.X), Y: round1(m.Y), Lo: round1(m.Lo), Hi: round1(m.Hi), Open: m.Open || !m.Interval,
				Changed: m.Point.Changed(), Title: pointTitle(m.Point, m.Centre, m.IntervalLo, m.IntervalHi, tc.Unit)}
			r := 3.5
			if pt.Changed {
				r = 5 // a significant change: a larger marker
			}
			pt.Marker = markerPath(shape, pt.X, pt.Y, r)
			pen := "M" // a gap: the next centre starts a new stroke
			if m.Joined {
				pen = "L"
			}
			fmt.Fprintf(&path, "%s%g %g ", pen, pt.X, pt.Y)
			s.Points = append(s.Points, pt)
		}
		s.Path = strings.TrimSpace(path.String())
		c.Series = append(c.Series, s)
	}
	return c
}

// valueRange is the span of the finite shown values vs, padded when they
// are all one; a rate's (in percent) never leaves 0–100. The compare
// page's forests fit their axis to the intervals with it (a trend's axis
// is report.TrendChartOf's).
func valueRange(vs []float64, rate bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	if rate {
		lo, hi = math.Max(0, lo), math.Min(100, hi)
	}
	// Padded when the span is nothing at the values' magnitude (1e7 and
	// the float after it, say), not only when it is below 1e-9.
	if hi-lo < 1e-9*math.Max(1, math.Max(math.Abs(lo), math.Abs(hi))) {
		pad := math.Max(math.Abs(hi)*0.1, 1)
		lo, hi = lo-pad, hi+pad
	}
	return lo, hi
}

// yTicks widens lo and hi to whole steps of a round size and returns the
// ticks between them, their Y still in values (report.NiceTicks: counted,
// never stepped to, so a span at the float spacing still ends).
func yTicks(lo, hi *float64) []tick {
	vs, dlo, dhi := report.NiceTicks(*lo, *hi, 4)
	*lo, *hi = dlo, dhi
	ts := make([]tick, 0, len(vs))
	for _, v := range vs {
		ts = append(ts, tick{Y: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
	}
	return ts
}

func pointTitle(p *report.TrendPoint, centre, lo, hi float64, unit string) string {
	f := shortEnd
	t := fmt.Sprintf("arm %s, %s: %s %s (interval %s – %s, n %d)", p.Arm, p.Bucket, f(centre), unit, f(lo), f(hi), p.Summary.N)
	if p.Changed() {
		t += ", a significant change from the previous bucket"
	}
	return t
}

// shortEnd is a shown value or an interval's end for people: ∞ where
// unbounded, "none" where not measured.
func shortEnd(v float64) string {
	switch {
	case math.IsInf(v, -1):
		return "-∞"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsNaN(v):
		return "none"
	}
	return short(v)
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// short spells a value for people: whole numbers from 100 up, four
// significant digits below.
func short(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
