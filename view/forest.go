package view

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/report/stats"
)

// forest is one metric of a diff drawn as SVG by the template: a row per
// group (arm, or task and arm), side A's centre with its interval above
// side B's, on one value axis shared by every row. Like the trend chart it
// is data for the template, nothing in it script or inline style.
type forest struct {
	Key, Name, Unit      string
	PassRate             bool // Δ in percentage points
	W, H                 int
	Left, Right, Top     float64 // the plot area; rows start at Top
	Bottom               float64 // the axis
	LabelX, DeltaX       float64
	Ticks                []tick // X set, Y unused
	Rows                 []forestRow
	Significant, Missing int // rows flagged, rows not comparable
}

// forestRow is one group's comparison of the metric.
type forestRow struct {
	Task, Arm   string
	Label, Full string // Full when Label is shortened
	Y           float64
	Significant bool
	Comparable  bool
	Delta       string // the table's Δ: "~", "n/c", "+12.0%", "+25.0pp"
	Title       string // the row in words
	Sides       [2]forestMark
}

// forestMark is one side's centre and interval, or why there is none.
type forestMark struct {
	Side         string // "A" or "B"
	Measured     bool
	X, Lo, Hi, Y float64
	Open         bool   // an unbounded end, drawn to the plot's edge
	Words        string // "not measured" when Measured is false
}

const (
	forestLabelW = 184
	forestLeft   = forestLabelW + 16
	forestRight  = chartW - 120
	forestTop    = 12
	forestRowH   = 36
	forestLabel  = 26 // runes of a row label before it is shortened
)

// forests lays out one forest per metric of the diff, in the diff's order,
// and names the metrics neither side measured in any group: those have no
// plot.
func forests(df *report.Diff, alpha float64) (out []*forest, unmeasured []string) {
	byKey := map[string]*forest{}
	lines := map[*forest][]*report.DiffLine{}
	for i := range df.Lines {
		l := &df.Lines[i]
		f := byKey[l.Key]
		if f == nil {
			f = &forest{Key: l.Key, Name: l.Name, Unit: report.ShownUnit(l.Rate, l.Metric), PassRate: l.Rate}
			byKey[l.Key] = f
			out = append(out, f)
		}
		lines[f] = append(lines[f], l)
	}
	drawn := out[:0]
	for _, f := range out {
		if !slices.ContainsFunc(lines[f], func(l *report.DiffLine) bool { return l.Cmp.A.N > 0 || l.Cmp.B.N > 0 }) {
			unmeasured = append(unmeasured, f.Name)
			continue
		}
		f.layout(lines[f], df.Options.ByTask, alpha)
		drawn = append(drawn, f)
	}
	return drawn, unmeasured
}

// layout places the rows of lines and the shared axis.
func (f *forest) layout(lines []*report.DiffLine, byTask bool, alpha float64) {
	f.W, f.Left, f.Right, f.Top = chartW, forestLeft, forestRight, forestTop
	f.LabelX, f.DeltaX = 8, forestRight+12
	f.Bottom = forestTop + float64(len(lines)*forestRowH) + 4
	f.H = int(f.Bottom) + 28
	var vs []float64
	for _, l := range lines {
		for _, s := range []float64{l.Cmp.A.Center, l.Cmp.A.Lo, l.Cmp.A.Hi, l.Cmp.B.Center, l.Cmp.B.Lo, l.Cmp.B.Hi} {
			vs = append(vs, report.ShownValue(l.Rate, l.Metric, s))
		}
	}
	lo, hi := valueRange(vs, lines[0].Rate || lines[0].Metric.Kind() == report.Proportion)
	f.Ticks = yTicks(&lo, &hi)
	x := func(v float64) float64 {
		return round1(f.Left + (f.Right-f.Left)*(math.Max(lo, math.Min(hi, v))-lo)/(hi-lo))
	}
	for i := range f.Ticks {
		f.Ticks[i].X = x(f.Ticks[i].Y)
	}
	for i, l := range lines {
		top := forestTop + float64(i*forestRowH)
		r := forestRow{Task: l.Task, Arm: l.Arm, Y: top + forestRowH/2 + 4, Comparable: l.Comparable(), Delta: l.HumanDelta()}
		r.Significant = r.Comparable && l.Cmp.Significant
		r.Full = l.Arm
		if byTask {
			r.Full = l.Task + " · " + l.Arm
		}
		r.Label = r.Full
		if rs := []rune(r.Full); len(rs) > forestLabel {
			r.Label = string(rs[:forestLabel-1]) + "…"
		}
		for side, s := range [2]*stats.Summary{&l.Cmp.A, &l.Cmp.B} {
			r.Sides[side] = forestSide(l, s, "AB"[side:side+1], top+12+float64(side)*14, x, f.Left, f.Right)
		}
		r.Title = forestTitle(l, byTask, alpha)
		if r.Significant {
			f.Significant++
		}
		if !r.Comparable {
			f.Missing++
		}
		f.Rows = append(f.Rows, r)
	}
}

// forestSide is one side's mark at height y: its centre and interval in
// plot coordinates, or "not measured" in words when it has no value.
func forestSide(l *report.DiffLine, s *stats.Summary, side string, y float64, x func(float64) float64, left, right float64) forestMark {
	m := forestMark{Side: side, Y: y}
	c := report.ShownValue(l.Rate, l.Metric, s.Center)
	if s.N == 0 || math.IsNaN(c) {
		m.Words = "not measured"
		return m
	}
	lo, hi := report.ShownValue(l.Rate, l.Metric, s.Lo), report.ShownValue(l.Rate, l.Metric, s.Hi)
	m.Measured, m.X, m.Lo, m.Hi = true, x(c), x(lo), x(hi)
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		m.Lo, m.Hi = m.X, m.X
	case math.IsInf(lo, 0) || math.IsInf(hi, 0):
		m.Open = true
		if math.IsInf(lo, -1) {
			m.Lo = left
		}
		if math.IsInf(hi, 1) {
			m.Hi = right
		}
	}
	return m
}

// forestTitle is a row in words, with the table's figures: each side's
// centre and interval, the change and whether it is significant.
func forestTitle(l *report.DiffLine, byTask bool, alpha float64) string {
	var b strings.Builder
	if byTask {
		fmt.Fprintf(&b, "task %s, ", l.Task)
	}
	fmt.Fprintf(&b, "arm %s, %s: ", l.Arm, l.Name)
	for side, s := range [2]*stats.Summary{&l.Cmp.A, &l.Cmp.B} {
		if side == 1 {
			b.WriteString("; ")
		}
		if s.N == 0 {
			fmt.Fprintf(&b, "%s not measured", "AB"[side:side+1])
			continue
		}
		fmt.Fprintf(&b, "%s %s", "AB"[side:side+1], l.HumanValue(s.Center))
		if iv := l.HumanInterval(s.Lo, s.Hi); iv != "" {
			fmt.Fprintf(&b, " (interval %s)", iv)
		}
	}
	switch {
	case !l.Comparable():
		b.WriteString("; not comparable: a side has no values")
	case l.Cmp.Significant:
		fmt.Fprintf(&b, "; change %s, significant at alpha %v (p %s)", l.HumanDelta(), alpha, short(l.Cmp.P))
	default:
		fmt.Fprintf(&b, "; no significant change at alpha %v", alpha)
	}
	return b.String()
}
