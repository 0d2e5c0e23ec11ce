package report

import (
	"math"
	"strconv"
)

// ShownValue is a metric's value in the unit charts show it in: a rate or
// a proportion in percent, wall time in seconds, the rest as measured;
// NaN and ±Inf stay what they are.
func ShownValue(rate bool, m Metric, v float64) float64 {
	switch {
	case rate || m.Kind() == Proportion:
		return 100 * v
	case m.Unit() == "ms":
		return v / 1000
	}
	return v
}

// ShownUnit is the unit of ShownValue: "%", "s" or the metric's own.
func ShownUnit(rate bool, m Metric) string {
	switch {
	case rate || m.Kind() == Proportion:
		return "%"
	case m.Unit() == "ms":
		return "s"
	}
	return m.Unit()
}

// ChartFrame is where a chart sits in its SVG, in SVG units: the picture's
// size and the plot area's edges (y grows downwards, so Top is the high
// end of the vertical axis and Bottom the low end).
type ChartFrame struct {
	W, H                     float64
	Left, Right, Top, Bottom float64
	// MaxDodge is the most the points of neighbouring arms are set apart
	// within a bucket, so that their intervals do not hide each other.
	MaxDodge float64
	// LabelRunes cuts a bucket's name to this many runes, "…" included;
	// 0 cuts it to what its band holds at 6.5 units a rune.
	LabelRunes int
}

// TrendChart is one metric's trend laid out on a frame, the geometry the
// viewer draws on its trend page and on `wfb report --html`'s page: per
// arm its centre in each bucket with the interval as a bar, consecutive
// measured buckets joined. It is pure data; the viewer spells it as SVG.
type TrendChart struct {
	Frame     ChartFrame
	Key, Name string
	// Unit is the unit of the shown values (ShownUnit).
	Unit string
	// Lo and Hi are the vertical axis's span, in shown values: from zero
	// (or below it) to the highest measured centre or finite interval end,
	// widened to round ticks; 0–100 for a rate or a proportion.
	Lo, Hi float64
	YTicks []ChartTick // values up the side
	XTicks []ChartTick // one per bucket, along the bottom
	Series []TrendSeries
}

// ChartTick is one tick of an axis.
type ChartTick struct {
	At    float64 // its y (a value) or x (a bucket), in SVG units
	Value float64 // the value it marks, on the vertical axis
	Label string  // what it says, a bucket's name cut to fit
	Full  string  // a bucket's whole name
}

// TrendSeries is one arm's marks on a trend chart.
type TrendSeries struct {
	Arm string
	// Index is the arm's place among the chart's arms, from 0.
	Index int
	// Marks are the buckets the arm measured, in bucket order.
	Marks []TrendMark
	// Missing are the buckets it measured nothing in: never drawn, said
	// in words.
	Missing []string
}

// TrendMark is one measured bucket of an arm: where its centre and its
// interval's ends fall, and the values they show.
type TrendMark struct {
	Point *TrendPoint
	X, Y  float64 // the centre
	// Lo and Hi are the interval's ends' y, an unbounded end at the plot's
	// edge; both Y where there is no interval.
	Lo, Hi float64
	// Centre, IntervalLo and IntervalHi are in shown values (ShownValue).
	Centre, IntervalLo, IntervalHi float64
	// Interval is false where the interval has no ends to draw (NaN).
	Interval bool
	// Open marks an interval with an unbounded end (too few values).
	Open bool
	// Joined says a line comes to this centre from the arm's centre in the
	// previous bucket, which was measured too.
	Joined bool
}

// Measured reports whether a trend point has a value to draw.
func (p *TrendPoint) Measured() bool { return p.Summary.N > 0 && !math.IsNaN(p.Summary.Center) }

// TrendChartOf lays out the points of one metric (by arm, then bucket, as
// Trend.Points holds them) over buckets on frame f. It is nil when there
// are no points; a chart whose arms measured nothing has no marks.
func TrendChartOf(points []TrendPoint, buckets []string, f ChartFrame) *TrendChart {
	if len(points) == 0 || len(buckets) == 0 {
		return nil
	}
	first := &points[0]
	c := &TrendChart{Frame: f, Key: first.Key, Name: first.Name, Unit: ShownUnit(first.Rate, first.Metric)}
	ticks := c.yAxis(points)
	y := func(v float64) float64 {
		return f.Bottom - (f.Bottom-f.Top)*(math.Max(c.Lo, math.Min(c.Hi, v))-c.Lo)/(c.Hi-c.Lo)
	}
	for _, v := range ticks {
		c.YTicks = append(c.YTicks, ChartTick{At: y(v), Value: v, Label: tickLabel(v)})
	}
	band := (f.Right - f.Left) / float64(len(buckets))
	cut := f.LabelRunes
	if cut == 0 {
		cut = int(band / 6.5)
	}
	for i, b := range buckets {
		label := b
		if r := []rune(b); len(r) > cut && cut > 1 {
			label = string(r[:cut-1]) + "…"
		}
		c.XTicks = append(c.XTicks, ChartTick{At: f.Left + band*(float64(i)+0.5), Label: label, Full: b})
	}
	for i := range points {
		p := &points[i]
		if len(c.Series) == 0 || c.Series[len(c.Series)-1].Arm != p.Arm {
			c.Series = append(c.Series, TrendSeries{Arm: p.Arm, Index: len(c.Series)})
		}
	}
	dodge := math.Min(f.MaxDodge, band/float64(len(c.Series)+1))
	s := -1
	for i := range points {
		p := &points[i]
		if s < 0 || c.Series[s].Arm != p.Arm {
			s++
		}
		sr := &c.Series[s]
		if !p.Measured() {
			sr.Missing = append(sr.Missing, p.Bucket)
			continue
		}
		off := dodge * (float64(s) - float64(len(c.Series)-1)/2)
		m := TrendMark{Point: p, X: c.XTicks[bucketIndex(buckets, p.Bucket)].At + off,
			Centre:     ShownValue(p.Rate, p.Metric, p.Summary.Center),
			IntervalLo: ShownValue(p.Rate, p.Metric, p.Summary.Lo),
			IntervalHi: ShownValue(p.Rate, p.Metric, p.Summary.Hi)}
		m.Y = y(m.Centre)
		m.Interval = !math.IsNaN(m.IntervalLo) && !math.IsNaN(m.IntervalHi)
		m.Open = math.IsInf(m.IntervalLo, 0) || math.IsInf(m.IntervalHi, 0)
		m.Lo, m.Hi = m.Y, m.Y
		if m.Interval {
			m.Lo, m.Hi = y(m.IntervalLo), y(m.IntervalHi)
		}
		m.Joined = i > 0 && points[i-1].Arm == p.Arm && points[i-1].Measured()
		sr.Marks = append(sr.Marks, m)
	}
	return c
}

// Measured reports whether any arm has a mark on the chart.
func (c *TrendChart) Measured() bool {
	for _, s := range c.Series {
		if len(s.Marks) > 0 {
			return true
		}
	}
	return false
}

// yAxis sets the vertical span over the measured centres and finite
// interval ends, from zero as report's other charts are (a step is read
// against the whole value, not against the spread of the buckets), the
// whole 0–100 for a rate; it returns the ticks.
func (c *TrendChart) yAxis(points []TrendPoint) []float64 {
	lo, hi := 0.0, 0.0
	for i := range points {
		p := &points[i]
		if !p.Measured() {
			continue
		}
		for _, v := range []float64{p.Summary.Center, p.Summary.Lo, p.Summary.Hi} {
			if v = ShownValue(p.Rate, p.Metric, v); !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if first := &points[0]; first.Rate || first.Metric.Kind() == Proportion {
		lo, hi = 0, 100
	}
	ticks, dlo, dhi := NiceTicks(lo, hi, 5)
	c.Lo, c.Hi = dlo, dhi
	return ticks
}

func bucketIndex(buckets []string, b string) int {
	for i, x := range buckets {
		if x == b {
			return i
		}
	}
	return 0
}

// maxTicks bounds the ticks NiceTicks returns, whatever the span.
const maxTicks = 100

// NiceTicks returns about n round tick values covering [lo, hi], and the
// widened domain they span. A span too narrow for its magnitude (values
// of about 1e7 one ulp apart, say) is widened first, so the step is never
// below the float spacing of the values; the ticks are counted, never
// stepped to, and at most maxTicks.
func NiceTicks(lo, hi float64, n int) (ticks []float64, dlo, dhi float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi-lo <= 1e-9*math.Max(math.Abs(lo), math.Abs(hi)) {
		if lo == 0 && hi == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	dlo = math.Floor(lo/step) * step
	dhi = math.Ceil(hi/step) * step
	count := math.Min(math.Round((dhi-dlo)/step), maxTicks-1)
	for i := 0; i <= int(count); i++ {
		ticks = append(ticks, math.Round((dlo+float64(i)*step)/step)*step)
	}
	return ticks, dlo, dhi
}

func tickLabel(v float64) string {
	return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
}
