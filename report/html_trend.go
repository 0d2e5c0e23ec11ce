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

// htmlTrendFrame is where a trend chart sits on the HTML page.
var htmlTrendFrame = ChartFrame{W: 520, H: 300, Left: 56, Right: 520 - 16, Top: 12, Bottom: 300 - 52, MaxDodge: 8}

// trendChart draws one metric's chart: the points of every arm, laid out
// by TrendChartOf.
func trendChart(b *bytes.Buffer, tr *Trend, pts []TrendPoint, styles map[string]armStyle) {
	c := TrendChartOf(pts, tr.Buckets, htmlTrendFrame)
	name := c.Name // with its unit, as ShownValue gives it
	level := int(math.Round((1 - tr.Options.Alpha) * 100))
	fmt.Fprintf(b, "<figure class=\"trend\" data-key=\"%s\">\n<figcaption>%s by %s per arm: centre and %d%% interval</figcaption>\n",
		htmlText(c.Key), htmlText(name), htmlText(tr.Options.By), level)
	cf := c.Frame
	f := frame{w: cf.W, h: cf.H, left: cf.Left, right: cf.W - cf.Right, top: cf.Top, bottom: cf.H - cf.Bottom}
	svgOpen(b, f, name+" by "+tr.Options.By+" per arm")
	trendAxes(b, f, c, tr.Options.By)
	for _, s := range c.Series {
		trendLine(b, s, styles[s.Arm])
	}
	b.WriteString("</svg>\n")
	trendKey(b, tr, c.Series, styles)
	b.WriteString("</figure>\n")
}

// trendAxes draws the chart's buckets along the bottom and its values up
// the side.
func trendAxes(b *bytes.Buffer, f frame, c *TrendChart, by string) {
	yAxisTicks(b, f, c.YTicks, c.Name)
	for _, t := range c.XTicks {
		fmt.Fprintf(b, "<text class=\"bucket\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s<title>%s</title></text>\n",
			t.At, f.y0()+14, htmlText(t.Label), htmlText(t.Full))
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x1(), f.y0())
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (f.x0()+f.x1())/2, f.h-4, htmlText(by))
}

// trendLine draws one arm's series: a line through consecutive measured
// centres, an interval bar at each (to the chart's edge, dashed, where the
// sample was too small to bound it), its marker, and a ring where the step
// from the previous bucket is a significant change.
func trendLine(b *bytes.Buffer, s TrendSeries, st armStyle) {
	for i := 1; i < len(s.Marks); i++ {
		a, c := &s.Marks[i-1], &s.Marks[i]
		if c.Joined {
			fmt.Fprintf(b, "<line class=\"trendline\" data-arm=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
				htmlText(s.Arm), a.X, a.Y, c.X, c.Y, st.color)
		}
	}
	for i := range s.Marks {
		m := &s.Marks[i]
		if m.Interval {
			dash := ""
			if m.Open {
				dash = " stroke-dasharray=\"3 2\""
			}
			fmt.Fprintf(b, "<line class=\"interval\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"%s/>\n",
				m.X, m.Lo, m.X, m.Hi, st.color, dash)
		}
		if m.Point.Changed() {
			fmt.Fprintf(b, "<circle class=\"changed\" cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"2\"/>\n", m.X, m.Y)
		}
		tip := fmt.Sprintf("%s, %s: %s", s.Arm, m.Point.Bucket, trendFigure(m.Point))
		marker(b, st, s.Arm, m.X, m.Y, 5, tip)
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
func trendKey(b *bytes.Buffer, tr *Trend, series []TrendSeries, styles map[string]armStyle) {
	esc := htmlText
	b.WriteString("<table class=\"key\">\n<tbody>\n")
	for _, s := range series {
		fmt.Fprintf(b, "<tr data-arm=\"%s\"><td>%s</td><td>%s</td>", esc(s.Arm), swatch(styles[s.Arm], s.Arm), esc(s.Arm))
		if len(s.Missing) == 0 {
			fmt.Fprintf(b, "<td>measured in every %s</td></tr>\n", esc(tr.Options.By))
			continue
		}
		fmt.Fprintf(b, "<td class=\"nm\">not measured in %s %s</td></tr>\n", esc(tr.Options.By), esc(strings.Join(s.Missing, ", ")))
	}
	b.WriteString("</tbody>\n</table>\n")
	b.WriteString("<p class=\"note\">A ring marks a significant change from the previous bucket (tested as wfb diff tests A against B); a dashed bar, an interval too wide to bound at this n.</p>\n")
}
