package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/report/stats"
)

// HTML page: one self-contained file. Styles are inline, charts are inline
// SVG drawn here, and nothing on the page refers to another resource — no
// scripts, fonts, images or links — so it opens offline and leaks nothing
// when shared. (Inline SVG in HTML needs no xmlns, which would be the only
// URL on the page.)

// HTMLInput is what the page shows: the tables of a report and the
// tabulation by arm its charts are drawn from. ByArm must have been
// tabulated with Keep including CostUSD and Turns for the distributions.
type HTMLInput struct {
	Title  string
	Tables []*Table
	ByArm  *Tabulation
}

// WriteHTML writes the report as one self-contained HTML page.
func WriteHTML(w io.Writer, in HTMLInput) error {
	var b bytes.Buffer
	esc := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(in.Title))
	b.WriteString("<style>\n" + pageCSS + "</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(in.Title))

	if in.ByArm != nil && len(in.ByArm.Groups) > 0 {
		b.WriteString("<section class=\"charts\">\n")
		scatter(&b, in.ByArm)
		kindBars(&b, in.ByArm)
		for _, m := range []Metric{CostUSD, Turns} {
			if hasMetric(in.ByArm.Options.Metrics, m) {
				boxPlot(&b, in.ByArm, m)
			}
		}
		b.WriteString("</section>\n")
	}
	for _, t := range in.Tables {
		htmlTable(&b, t)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

const pageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1120px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 16px}
h2{font-size:16px;margin:24px 0 8px}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;background:#fff}
figcaption{font-weight:600;font-size:14px;margin-bottom:4px}
svg{display:block;font-size:11px}
svg text{fill:#1f2328}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .grid{stroke:#eaeef2;stroke-width:1}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px}
th{background:#f6f8fa;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.null{color:#8c959f;font-style:italic}
ol.notes{font-size:12px;color:#57606a;max-width:1000px}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
`

// armColors are distinguishable on white and for common colour blindness
// (Okabe–Ito).
var armColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

func armColor(i int) string { return armColors[i%len(armColors)] }

// kindColor gives ok green, errors greys and blues (the environment), and
// failures warm colours (the workflow).
func kindColor(kind string, i int) string {
	if kind == "ok" {
		return "#2da44e"
	}
	if IsError(kind) {
		return []string{"#8c959f", "#57606a", "#54aeff", "#0969da", "#b6e3ff", "#424a53"}[i%6]
	}
	return []string{"#cf222e", "#fb8f44", "#bf8700", "#a40e26", "#fa4549", "#953800", "#d4a72c"}[i%7]
}

func hasMetric(ms []Metric, m Metric) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// linear maps [d0, d1] onto [r0, r1].
type linear struct{ d0, d1, r0, r1 float64 }

func (s linear) at(v float64) float64 {
	if s.d1 == s.d0 {
		return (s.r0 + s.r1) / 2
	}
	return s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
}

// niceTicks returns about n round tick values covering [lo, hi], and the
// widened domain they span.
func niceTicks(lo, hi float64, n int) (ticks []float64, dlo, dhi float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		if lo == 0 {
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
	for v := dlo; v <= dhi+step/2; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return ticks, dlo, dhi
}

func tickLabel(v float64) string {
	return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
}

type frame struct {
	w, h                     float64
	left, right, top, bottom float64
}

func (f frame) x0() float64 { return f.left }
func (f frame) x1() float64 { return f.w - f.right }
func (f frame) y0() float64 { return f.h - f.bottom }
func (f frame) y1() float64 { return f.top }

func svgOpen(b *bytes.Buffer, f frame, label string) {
	fmt.Fprintf(b, "<svg width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\" aria-label=\"%s\">\n",
		f.w, f.h, f.w, f.h, html.EscapeString(label))
}

// xAxis draws vertical grid lines and labels for ticks along the bottom.
func xAxis(b *bytes.Buffer, f frame, sx linear, ticks []float64, title string) {
	for _, t := range ticks {
		x := sx.at(t)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, f.y1(), x, f.y0())
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, f.y0()+14, tickLabel(t))
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x1(), f.y0())
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (f.x0()+f.x1())/2, f.h-4, html.EscapeString(title))
}

// scatter draws cost against quality, one point per arm, with the IQR of
// cost as a horizontal bar and the quality's interval as a vertical one.
// Quality is weighted F1 where review quality was scored, then verdict
// accuracy, and otherwise the strict pass rate with its Wilson interval.
func scatter(b *bytes.Buffer, tab *Tabulation) {
	yMetric, yName := scatterY(tab)
	pts := scatterPoints(tab, yMetric)
	b.WriteString("<figure>\n<figcaption>Cost vs " + html.EscapeString(strings.TrimSuffix(yName, " (%)")) + " per arm</figcaption>\n")
	f := frame{w: 520, h: 340, left: 56, right: 16, top: 12, bottom: 40}
	svgOpen(b, f, "cost versus "+yName+" per arm")
	if len(pts) == 0 {
		fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">no arm has a measured cost</text>\n", f.w/2, f.h/2)
		b.WriteString("</svg>\n</figure>\n")
		return
	}
	sx, sy := scatterAxes(b, f, pts, yName)
	for i, p := range pts {
		scatterMark(b, sx, sy, i, p, yName)
	}
	b.WriteString("</svg>\n</figure>\n")
}

// scatterPoint is one arm on the cost-versus-quality chart: the centre and
// spread (NaN when unknown) of each axis.
type scatterPoint struct {
	arm                      string
	x, xlo, xhi, y, ylo, yhi float64
}

// scatterY picks the quality axis: weighted F1, else verdict accuracy,
// when the table has it measured; else the strict pass rate (Metric -1).
func scatterY(tab *Tabulation) (Metric, string) {
	for _, m := range []Metric{WeightedF1, VerdictCorrect} {
		if hasMetric(tab.Options.Metrics, m) && anyMeasured(tab, m) {
			return m, humanName(m)
		}
	}
	return Metric(-1), "strict pass rate (%)"
}

// scatterPoints places each arm with a measured cost and a y value.
func scatterPoints(tab *Tabulation, yMetric Metric) []scatterPoint {
	var pts []scatterPoint
	for _, g := range tab.Groups {
		c := g.Metrics[CostUSD]
		if c.N == 0 {
			continue
		}
		p := scatterPoint{arm: g.Arm, x: c.Center, xlo: c.Q1, xhi: c.Q3}
		switch {
		case yMetric == VerdictCorrect:
			s := g.Metrics[VerdictCorrect]
			r := stats.SummarizeRate(int(math.Round(s.Sum)), s.N, 0.95)
			p.y, p.ylo, p.yhi = 100*r.Center, 100*r.Lo, 100*r.Hi
		case yMetric >= 0:
			s := g.Metrics[yMetric]
			p.y, p.ylo, p.yhi = s.Center, s.Q1, s.Q3
		default:
			r := stats.SummarizeRate(g.OK, g.Cells, 0.95)
			p.y, p.ylo, p.yhi = 100*r.Center, 100*r.Lo, 100*r.Hi
		}
		if math.IsNaN(p.y) {
			continue
		}
		pts = append(pts, p)
	}
	return pts
}

// scatterAxes draws the grid and both axes over the points' extent (from
// zero) and returns the scales that place them.
func scatterAxes(b *bytes.Buffer, f frame, pts []scatterPoint, yName string) (sx, sy linear) {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		xlo, xhi = math.Min(xlo, nanOr(p.xlo, p.x)), math.Max(xhi, nanOr(p.xhi, p.x))
		ylo, yhi = math.Min(ylo, nanOr(p.ylo, p.y)), math.Max(yhi, nanOr(p.yhi, p.y))
	}
	xt, xd0, xd1 := niceTicks(math.Min(0, xlo), xhi, 5)
	yt, yd0, yd1 := niceTicks(math.Min(0, ylo), yhi, 5)
	sx = linear{xd0, xd1, f.x0(), f.x1()}
	sy = linear{yd0, yd1, f.y0(), f.y1()}
	for _, t := range yt {
		y := sy.at(t)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), y, f.x1(), y)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", f.x0()-4, y+4, tickLabel(t))
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x0(), f.y1())
	fmt.Fprintf(b, "<text transform=\"translate(12 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", (f.y0()+f.y1())/2, html.EscapeString(yName))
	xAxis(b, f, sx, xt, "median cost per cell (USD), bar = IQR")
	return sx, sy
}

// scatterMark draws the i-th arm's point, its spread bars and its label.
func scatterMark(b *bytes.Buffer, sx, sy linear, i int, p scatterPoint, yName string) {
	col := armColor(i)
	x, y := sx.at(p.x), sy.at(p.y)
	if !math.IsNaN(p.xlo) {
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"/>\n", sx.at(p.xlo), y, sx.at(p.xhi), y, col)
	}
	if !math.IsNaN(p.ylo) {
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"/>\n", x, sy.at(p.ylo), x, sy.at(p.yhi), col)
	}
	fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"><title>%s: cost %s, %s %s</title></circle>\n",
		x, y, col, html.EscapeString(p.arm), tickLabel(p.x), html.EscapeString(yName), tickLabel(p.y))
	// Alternate labels above and below their points, so that arms
	// with close figures do not print over each other.
	dy := -8.0
	if i%2 == 1 {
		dy = 18
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x+9, y+dy, html.EscapeString(p.arm))
}

func nanOr(v, alt float64) float64 {
	if math.IsNaN(v) {
		return alt
	}
	return v
}

func anyMeasured(tab *Tabulation, m Metric) bool {
	for _, g := range tab.Groups {
		if g.Metrics[m].N > 0 {
			return true
		}
	}
	return false
}

// kindBars draws, per arm, a bar of its cells split by their final
// attempt's outcome: ok and each error kind.
func kindBars(b *bytes.Buffer, tab *Tabulation) {
	segments := append([]string{"ok"}, tab.Kinds...)
	colors := map[string]string{}
	nErr, nFail := 0, 0
	for _, k := range segments {
		switch {
		case k == "ok":
			colors[k] = kindColor(k, 0)
		case IsError(k):
			colors[k] = kindColor(k, nErr)
			nErr++
		default:
			colors[k] = kindColor(k, nFail)
			nFail++
		}
	}
	maxN := 0
	for _, g := range tab.Groups {
		maxN = max(maxN, g.Cells)
	}
	b.WriteString("<figure>\n<figcaption>Outcome of every cell per arm (its final attempt)</figcaption>\n<div class=\"legend\">")
	for _, k := range segments {
		fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s</span>", colors[k], html.EscapeString(k))
	}
	b.WriteString("</div>\n")
	rowH := 26.0
	f := frame{w: 520, left: 110, right: 16, top: 8, bottom: 36}
	f.h = f.top + f.bottom + rowH*float64(len(tab.Groups))
	svgOpen(b, f, "cells per arm by outcome")
	ticks, d0, d1 := niceTicks(0, float64(maxN), 5)
	sx := linear{d0, d1, f.x0(), f.x1()}
	xAxis(b, f, sx, ticks, "cells")
	for i, g := range tab.Groups {
		y := f.top + rowH*float64(i) + 4
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", f.x0()-6, y+13, html.EscapeString(g.Arm))
		at := 0
		for _, k := range segments {
			n := g.OK
			if k != "ok" {
				n = g.Failed[k]
			}
			if n == 0 {
				continue
			}
			x0, x1 := sx.at(float64(at)), sx.at(float64(at+n))
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s: %s %d of %d cells</title></rect>\n",
				x0, y, math.Max(x1-x0, 0.5), rowH-8, colors[k], html.EscapeString(g.Arm), html.EscapeString(k), n, g.Cells)
			at += n
		}
	}
	b.WriteString("</svg>\n</figure>\n")
}

// boxPlot draws the distribution of a metric per arm: whiskers from min to
// max, a box from p25 to p75, a line at the median, and — for samples small
// enough to see — every value as a dot.
func boxPlot(b *bytes.Buffer, tab *Tabulation, m Metric) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range tab.Groups {
		if s := g.Metrics[m]; s.N > 0 {
			lo, hi = math.Min(lo, s.Min), math.Max(hi, s.Max)
		}
	}
	fmt.Fprintf(b, "<figure>\n<figcaption>Distribution of %s per arm (per cell, retries summed)</figcaption>\n", html.EscapeString(m.Name()))
	rowH := 30.0
	f := frame{w: 520, left: 110, right: 16, top: 8, bottom: 36}
	f.h = f.top + f.bottom + rowH*float64(len(tab.Groups))
	svgOpen(b, f, "distribution of "+m.Name()+" per arm")
	if math.IsInf(lo, 1) {
		fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">nothing measured</text>\n</svg>\n</figure>\n", f.w/2, f.h/2)
		return
	}
	ticks, d0, d1 := niceTicks(math.Min(0, lo), hi, 5)
	sx := linear{d0, d1, f.x0(), f.x1()}
	unit := m.Unit()
	if unit == "USD" {
		unit = "USD per cell"
	}
	xAxis(b, f, sx, ticks, unit)
	for i, g := range tab.Groups {
		s := g.Metrics[m]
		yc := f.top + rowH*float64(i) + rowH/2
		label := fmt.Sprintf("%s (n=%d)", g.Arm, s.N)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", f.x0()-6, yc+4, html.EscapeString(label))
		if s.N == 0 {
			continue
		}
		col := armColor(i)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", sx.at(s.Min), yc, sx.at(s.Max), yc, col)
		if !math.IsNaN(s.Q1) {
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\"/>\n",
				sx.at(s.Q1), yc-9, math.Max(sx.at(s.Q3)-sx.at(s.Q1), 1), 18.0, col, col)
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"><title>median %s</title></line>\n",
			sx.at(s.Center), yc-9, sx.at(s.Center), yc+9, col, tickLabel(s.Center))
		if vals := g.Values[m]; len(vals) <= 200 {
			for j, v := range vals {
				// A fixed jitter keeps equal values apart and the page
				// byte-for-byte reproducible.
				jy := yc + float64(j%5-2)*2.5
				fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\" opacity=\"0.7\"/>\n", sx.at(v), jy, col)
			}
		}
	}
	b.WriteString("</svg>\n</figure>\n")
}

// htmlTable writes a report table with its title and footnotes.
func htmlTable(b *bytes.Buffer, t *Table) {
	esc := html.EscapeString
	if t.Title != "" {
		fmt.Fprintf(b, "<h2>%s</h2>\n", esc(t.Title))
	}
	num := numericColumns(t)
	b.WriteString("<table>\n<thead><tr>")
	for _, c := range t.Columns {
		fmt.Fprintf(b, "<th>%s</th>", esc(c))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for i, v := range row {
			class := ""
			switch {
			case v == nil:
				class = " class=\"null\""
			case num[i]:
				class = " class=\"num\""
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, esc(text(v)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	if len(t.Footnotes) > 0 {
		b.WriteString("<ol class=\"notes\">\n")
		for _, n := range t.Footnotes {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(n))
		}
		b.WriteString("</ol>\n")
	}
}
