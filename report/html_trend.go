package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// trendCharts draws the trend `wfb trend` computes as one line chart per
// metric: per arm, its centre in each bucket with the interval as a bar,
// consecutive measured buckets joined by a line. A bucket where an arm
// measured nothing is not drawn (never as zero) and is said in words.
func trendCharts(b *bytes.Buffer, tr *Trend) {
	var keys, arms []string
	for _, p := range tr.Points {
		if !slices.Contains(keys, p.Key) {
			keys = append(keys, p.Key)
		}
		arms = append(arms, p.Arm)
	}
	styles := styleArms(arms)
	fmt.Fprintf(b, "<section class=\"charts trend\">\n<h2 class=\"section\">Trend by %s (%d %ss)</h2>\n",
		htmlText(tr.Options.By), len(tr.Buckets), htmlText(tr.Options.By))
	for _, k := range keys {
		var pts []TrendPoint
		for _, p := range tr.Points {
			if p.Key == k {
				pts = append(pts, p)
			}
		}
		trendChart(b, tr, pts, styles)
	}
	b.WriteString("</section>\n")
}

// trendSeries is one arm's points of one metric, a point per bucket.
type trendSeries struct {
	arm string
	pts []TrendPoint
}

// measured reports whether a trend point has a value to draw.
func measured(p *TrendPoint) bool { return p.Summary.N > 0 && !math.IsNaN(p.Summary.Center) }

// trendValue is a metric's value in the unit its name gives: percent for
// a rate, seconds for wall time.
func trendValue(p *TrendPoint, v float64) float64 {
	switch {
	case p.Rate:
		return 100 * v
	case p.Metric.Unit() == "ms":
		return v / 1000
	}
	return v
}

// trendChart draws one metric's chart: the points of every arm.
func trendChart(b *bytes.Buffer, tr *Trend, pts []TrendPoint, styles map[string]armStyle) {
	var series []trendSeries
	for _, p := range pts {
		if len(series) == 0 || series[len(series)-1].arm != p.Arm {
			series = append(series, trendSeries{arm: p.Arm})
		}
		s := &series[len(series)-1]
		s.pts = append(s.pts, p)
	}
	first := &pts[0]
	name := first.Name // with its unit, as trendValue gives it
	level := int(math.Round((1 - tr.Options.Alpha) * 100))
	fmt.Fprintf(b, "<figure class=\"trend\" data-key=\"%s\">\n<figcaption>%s by %s per arm: centre and %d%% interval</figcaption>\n",
		htmlText(first.Key), htmlText(name), htmlText(tr.Options.By), level)
	f := frame{w: 520, h: 300, left: 56, right: 16, top: 12, bottom: 52}
	svgOpen(b, f, name+" by "+tr.Options.By+" per arm")
	sy := trendAxes(b, f, tr, series, name)
	band := (f.x1() - f.x0()) / float64(len(tr.Buckets))
	dodge := math.Min(8, band/float64(len(series)+1))
	for ai, s := range series {
		off := (float64(ai) - float64(len(series)-1)/2) * dodge
		trendLine(b, f, sy, s, func(i int) float64 { return f.x0() + band*(float64(i)+0.5) + off }, styles[s.arm])
	}
	b.WriteString("</svg>\n")
	trendKey(b, tr, series, styles)
	b.WriteString("</figure>\n")
}

// trendAxes draws the buckets along the bottom and the metric up the side,
// over the measured centres and finite interval ends (0–100 for a rate),
// and returns the vertical scale.
func trendAxes(b *bytes.Buffer, f frame, tr *Trend, series []trendSeries, name string) linear {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i := range s.pts {
			p := &s.pts[i]
			if !measured(p) {
				continue
			}
			for _, v := range []float64{p.Summary.Center, p.Summary.Lo, p.Summary.Hi} {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, trendValue(p, v)), math.Max(hi, trendValue(p, v))
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if series[0].pts[0].Rate {
		lo, hi = 0, 100
	}
	ticks, d0, d1 := NiceTicks(math.Min(0, lo), hi, 5)
	sy := linear{d0, d1, f.y0(), f.y1()}
	yAxis(b, f, sy, ticks, name)
	band := (f.x1() - f.x0()) / float64(len(tr.Buckets))
	for i, name := range tr.Buckets {
		x := f.x0() + band*(float64(i)+0.5)
		label := name
		if maxRunes := int(band / 6.5); len([]rune(label)) > maxRunes && maxRunes > 1 {
			label = string([]rune(label)[:maxRunes-1]) + "…"
		}
		fmt.Fprintf(b, "<text class=\"bucket\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s<title>%s</title></text>\n",
			x, f.y0()+14, htmlText(label), htmlText(name))
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x1(), f.y0())
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (f.x0()+f.x1())/2, f.h-4, htmlText(tr.Options.By))
	return sy
}

// trendLine draws one arm's series: a line through consecutive measured
// centres, an interval bar at each (to the chart's edge, dashed, where the
// sample was too small to bound it), its marker, and a ring where the step
// from the previous bucket is a significant change.
func trendLine(b *bytes.Buffer, f frame, sy linear, s trendSeries, xAt func(int) float64, st armStyle) {
	clamp := func(y float64) float64 { return math.Min(math.Max(y, f.y1()), f.y0()) }
	yAt := func(p *TrendPoint, v float64) float64 {
		switch {
		case math.IsInf(v, -1):
			return f.y0()
		case math.IsInf(v, 1):
			return f.y1()
		}
		return clamp(sy.at(trendValue(p, v)))
	}
	for i := 1; i < len(s.pts); i++ {
		a, c := &s.pts[i-1], &s.pts[i]
		if measured(a) && measured(c) {
			fmt.Fprintf(b, "<line class=\"trendline\" data-arm=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
				htmlText(s.arm), xAt(i-1), yAt(a, a.Summary.Center), xAt(i), yAt(c, c.Summary.Center), st.color)
		}
	}
	for i := range s.pts {
		p := &s.pts[i]
		if !measured(p) {
			continue
		}
		x, sm := xAt(i), p.Summary
		if !math.IsNaN(sm.Lo) && !math.IsNaN(sm.Hi) {
			dash := ""
			if math.IsInf(sm.Lo, 0) || math.IsInf(sm.Hi, 0) {
				dash = " stroke-dasharray=\"3 2\""
			}
			fmt.Fprintf(b, "<line class=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"%s/>\n",
				x, yAt(p, sm.Lo), x, yAt(p, sm.Hi), st.color, dash)
		}
		y := yAt(p, sm.Center)
		if p.Changed() {
			fmt.Fprintf(b, "<circle class=\"changed\" cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"2\"/>\n", x, y)
		}
		tip := fmt.Sprintf("%s, %s: %s", s.arm, p.Bucket, trendFigure(p))
		marker(b, st, s.arm, x, y, 5, tip)
	}
}

// trendFigure spells a point's centre, interval and n.
func trendFigure(p *TrendPoint) string {
	l := &DiffLine{Metric: p.Metric, Rate: p.Rate}
	s := p.Summary
	out := fmt.Sprintf("%s (%s, n=%d)", text(humanLine(l, s.Center)), text(humanInterval(l, s.Lo, s.Hi)), s.N)
	if p.Changed() {
		out += ", a significant change from the previous one"
	}
	return out
}

// trendKey is the chart's legend: each arm's marker and, in words, the
// buckets where it measured nothing.
func trendKey(b *bytes.Buffer, tr *Trend, series []trendSeries, styles map[string]armStyle) {
	esc := htmlText
	b.WriteString("<table class=\"key\">\n<tbody>\n")
	for _, s := range series {
		var missing []string
		for i := range s.pts {
			if !measured(&s.pts[i]) {
				missing = append(missing, s.pts[i].Bucket)
			}
		}
		fmt.Fprintf(b, "<tr data-arm=\"%s\"><td>%s</td><td>%s</td>", esc(s.arm), swatch(styles[s.arm], s.arm), esc(s.arm))
		if len(missing) == 0 {
			fmt.Fprintf(b, "<td>measured in every %s</td></tr>\n", esc(tr.Options.By))
			continue
		}
		fmt.Fprintf(b, "<td class=\"nm\">not measured in %s %s</td></tr>\n", esc(tr.Options.By), esc(strings.Join(missing, ", ")))
	}
	b.WriteString("</tbody>\n</table>\n")
	b.WriteString("<p class=\"note\">A ring marks a significant change from the previous bucket (tested as wfb diff tests A against B); a dashed bar, an interval too wide to bound at this n.</p>\n")
}
