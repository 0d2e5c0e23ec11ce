package view

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/report/stats"
)

// chartSection is the groups one set of charts is drawn over: every arm,
// or every arm of one task.
type chartSection struct {
	task   string // empty unless the tabulation is by task
	tab    *report.Tabulation
	groups []*report.Group
}

// of prefixes a caption with the section's task, so that a chart read
// alone still says whose cells it shows.
func (s chartSection) of(caption string) string {
	if s.task == "" {
		return caption
	}
	return "task " + s.task + ": " + caption
}

// chartSections splits a tabulation into the sets of charts the page
// draws: one per task when it is by task, else one.
func chartSections(tab *report.Tabulation) []chartSection {
	if !tab.Options.ByTask {
		return []chartSection{{tab: tab, groups: tab.Groups}}
	}
	var out []chartSection
	for _, g := range tab.Groups {
		if len(out) == 0 || out[len(out)-1].task != g.Task {
			out = append(out, chartSection{task: g.Task, tab: tab})
		}
		out[len(out)-1].groups = append(out[len(out)-1].groups, g)
	}
	return out
}

// kindColor gives ok green, errors greys and blues (the environment), and
// failures warm colours (the workflow).
func kindColor(kind string, i int) string {
	if kind == "ok" {
		return "#2da44e"
	}
	if wfb.IsErrored(kind) {
		return []string{"#8c959f", "#57606a", "#54aeff", "#0969da", "#b6e3ff", "#424a53"}[i%6]
	}
	return []string{"#cf222e", "#fb8f44", "#bf8700", "#a40e26", "#fa4549", "#953800", "#d4a72c"}[i%7]
}

func hasMetric(ms []report.Metric, m report.Metric) bool {
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

func tickLabel(v float64) string {
	return strconv.FormatFloat(report.RoundSig(v, 4), 'f', -1, 64)
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
		f.w, f.h, f.w, f.h, htmlText(label))
}

// xAxis draws vertical grid lines and labels for ticks along the bottom.
func xAxis(b *bytes.Buffer, f frame, sx linear, ticks []float64, title string) {
	for _, t := range ticks {
		x := sx.at(t)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, f.y1(), x, f.y0())
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, f.y0()+14, tickLabel(t))
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x1(), f.y0())
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (f.x0()+f.x1())/2, f.h-4, htmlText(title))
}

// yAxis draws horizontal grid lines and labels for ticks up the left side.
func yAxis(b *bytes.Buffer, f frame, sy linear, ticks []float64, title string) {
	ts := make([]report.ChartTick, len(ticks))
	for i, t := range ticks {
		ts[i] = report.ChartTick{At: sy.at(t), Value: t, Label: tickLabel(t)}
	}
	yAxisTicks(b, f, ts, title)
}

// yAxisTicks is yAxis of ticks already placed.
func yAxisTicks(b *bytes.Buffer, f frame, ticks []report.ChartTick, title string) {
	for _, t := range ticks {
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), t.At, f.x1(), t.At)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", f.x0()-4, t.At+4, t.Label)
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f.x0(), f.y0(), f.x0(), f.y1())
	fmt.Fprintf(b, "<text transform=\"translate(12 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", (f.y0()+f.y1())/2, htmlText(title))
}

// armStyle is how one arm is drawn on every chart of a page: a colour
// and a marker shape, so that two arms stay apart in a legend even to a
// reader who cannot tell the colours apart.
type armStyle struct{ color, shape string }

// armColors are distinguishable on white and for common colour blindness
// (Okabe–Ito).
var armColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// styleArms gives each distinct arm of names, in sorted order, its style.
func styleArms(names []string) map[string]armStyle {
	arms := slices.Clone(names)
	slices.Sort(arms)
	arms = slices.Compact(arms)
	out := make(map[string]armStyle, len(arms))
	for i, a := range arms {
		out[a] = armStyle{armColors[i%len(armColors)], markerShapes[i%len(markerShapes)]}
	}
	return out
}

// armStyles styles the arms of a tabulation.
func armStyles(tab *report.Tabulation) map[string]armStyle {
	names := make([]string, len(tab.Groups))
	for i, g := range tab.Groups {
		names[i] = g.Arm
	}
	return styleArms(names)
}

// marker draws an arm's marker of radius r centred on (x, y), with a
// tooltip. It carries class "mark" and the arm's name, so that what a
// chart shows can be read back from it.
func marker(b *bytes.Buffer, st armStyle, arm string, x, y, r float64, tip string) {
	tag, geom := "path", ""
	switch st.shape {
	case "square":
		tag = "rect"
		geom = fmt.Sprintf("x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x-r*0.85, y-r*0.85, r*1.7, r*1.7)
	case "triangle":
		geom = fmt.Sprintf("d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y-r*1.1, x+r, y+r*0.75, x-r, y+r*0.75)
	case "down":
		geom = fmt.Sprintf("d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y+r*1.1, x+r, y-r*0.75, x-r, y-r*0.75)
	case "diamond":
		geom = fmt.Sprintf("d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y-r*1.2, x+r*1.2, y, x, y+r*1.2, x-r*1.2, y)
	default:
		tag = "circle"
		geom = fmt.Sprintf("cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y, r)
	}
	fmt.Fprintf(b, "<%s class=\"mark\" data-arm=\"%s\" data-x=\"%.1f\" data-y=\"%.1f\" %s fill=\"%s\" stroke=\"#fff\" stroke-width=\"1\"><title>%s</title></%s>\n",
		tag, htmlText(arm), x, y, geom, st.color, htmlText(tip), tag)
}

// swatch is an arm's marker on its own, for a legend in HTML.
func swatch(st armStyle, arm string) string {
	var b bytes.Buffer
	b.WriteString("<svg class=\"swatch\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\" aria-hidden=\"true\">")
	marker(&b, st, arm, 8, 8, 5.5, arm)
	b.WriteString("</svg>")
	return strings.Replace(b.String(), "class=\"mark\" ", "", 1)
}

// htmlText is s escaped for HTML text or a quoted attribute, its controls
// shown as a box table shows them: a bidirectional override in an arm or
// task name (U+202E) would otherwise reorder what the page shows around
// it, and a browser drops ESC and the other controls without a trace.
func htmlText(s string) string { return html.EscapeString(termtext.Show(s, "\t\n")) }

// scatter draws cost against quality, one mark per arm, each over one
// population: the arm's cells where both were measured. The IQR of cost
// is a horizontal bar, the quality's spread a vertical one. Quality is
// weighted F1 where review quality was scored, then verdict accuracy, and
// otherwise the strict pass rate with its Wilson interval. Arms are told
// apart by a legend keyed by marker; an arm with nothing to plot is said
// there in words.
func scatter(b *bytes.Buffer, sec chartSection, styles map[string]armStyle) {
	yMetric, yName := scatterY(sec)
	var pts, plotted []scatterPoint
	for _, g := range sec.groups {
		p := scatterPointOf(g, yMetric, yName)
		pts = append(pts, p)
		if p.n > 0 {
			plotted = append(plotted, p)
		}
	}
	short := strings.TrimSuffix(yName, " (%)")
	fmt.Fprintf(b, "<figure class=\"scatter\">\n<figcaption>%s</figcaption>\n",
		htmlText(sec.of("Cost vs "+short+" per arm, over the cells where both were measured")))
	f := frame{w: 520, h: 340, left: 56, right: 16, top: 12, bottom: 40}
	svgOpen(b, f, sec.of("cost versus "+yName+" per arm"))
	moved := false
	if len(plotted) == 0 {
		fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">not measured: no arm has a cell with both</text>\n", f.w/2, f.h/2)
	} else {
		sx, sy := scatterAxes(b, f, plotted, yName)
		moved = scatterMarks(b, f, sx, sy, plotted, yName, styles)
	}
	b.WriteString("</svg>\n")
	scatterKey(b, pts, short, styles)
	if moved {
		b.WriteString("<p class=\"note\">Marks that would cover one another are drawn apart; a line leads from each to where it belongs.</p>\n")
	}
	b.WriteString("</figure>\n")
}

// scatterPoint is one arm on the cost-versus-quality chart: the centre and
// spread (NaN when unknown) of each axis over the n of its cells where
// both were measured; why says, when n is 0, what was not measured.
type scatterPoint struct {
	arm                      string
	n, cells                 int
	x, xlo, xhi, y, ylo, yhi float64
	why                      string
}

// scatterY picks the quality axis: weighted F1, else verdict accuracy,
// when the section's cells have it measured; else the strict pass rate
// (report.Metric -1).
func scatterY(sec chartSection) (report.Metric, string) {
	for _, m := range []report.Metric{report.WeightedF1, report.VerdictCorrect} {
		if hasMetric(sec.tab.Options.Metrics, m) && slices.ContainsFunc(sec.groups, func(g *report.Group) bool { return g.Metrics[m].N > 0 }) {
			return m, report.HumanName(m)
		}
	}
	return report.Metric(-1), "strict pass rate (%)"
}

// cellAt is a group's value of one cell, NaN when not measured or not kept.
func cellAt(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return math.NaN()
}

// scatterPointOf places a group over its cells with a measured cost and a
// measured quality (any cell, for the pass rate): both axes are figures of
// the same cells.
func scatterPointOf(g *report.Group, yMetric report.Metric, yName string) scatterPoint {
	p := scatterPoint{arm: g.Arm, cells: g.Cells}
	var xs, ys []float64
	costed, ok := 0, 0
	for i := range g.Cells {
		x := cellAt(g.CellValues[report.CostUSD], i)
		if math.IsNaN(x) {
			continue
		}
		costed++
		y := 0.0
		if yMetric >= 0 {
			if y = cellAt(g.CellValues[yMetric], i); math.IsNaN(y) {
				continue
			}
		}
		xs, ys = append(xs, x), append(ys, y)
		if i < len(g.CellOK) && g.CellOK[i] {
			ok++
		}
	}
	p.n = len(xs)
	switch {
	case costed == 0:
		p.why = fmt.Sprintf("not measured: no cost on any of its %d cells", g.Cells)
		return p
	case p.n == 0:
		p.why = fmt.Sprintf("not measured: cost on %d of its %d cells, %s on none of them", costed, g.Cells, strings.TrimSuffix(yName, " (%)"))
		return p
	}
	c := report.SpreadOf(report.CostUSD, xs)
	p.x, p.xlo, p.xhi = c.Center, c.Q1, c.Q3
	switch {
	case yMetric == report.VerdictCorrect:
		s := report.SpreadOf(report.VerdictCorrect, ys)
		r := stats.SummarizeRate(int(math.Round(s.Sum)), s.N, 0.95)
		p.y, p.ylo, p.yhi = 100*r.Center, 100*r.Lo, 100*r.Hi
	case yMetric >= 0:
		s := report.SpreadOf(yMetric, ys)
		p.y, p.ylo, p.yhi = s.Center, s.Q1, s.Q3
	default:
		r := stats.SummarizeRate(ok, p.n, 0.95)
		p.y, p.ylo, p.yhi = 100*r.Center, 100*r.Lo, 100*r.Hi
	}
	return p
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
	xt, xd0, xd1 := report.NiceTicks(math.Min(0, xlo), xhi, 5)
	yt, yd0, yd1 := report.NiceTicks(math.Min(0, ylo), yhi, 5)
	sx = linear{xd0, xd1, f.x0(), f.x1()}
	sy = linear{yd0, yd1, f.y0(), f.y1()}
	yAxis(b, f, sy, yt, yName)
	xAxis(b, f, sx, xt, "median cost per cell (USD), bar = IQR")
	return sx, sy
}

// markGap is the least distance, in pixels, between two marks' centres.
const markGap = 15.0

// scatterMarks draws every point's spread bars where it belongs, and its
// mark there too unless another would cover it: such marks are spread
// around their common place, each with a leader line back to its own.
// It reports whether any mark was moved.
func scatterMarks(b *bytes.Buffer, f frame, sx, sy linear, pts []scatterPoint, yName string, styles map[string]armStyle) bool {
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = sx.at(p.x), sy.at(p.y)
	}
	mx, my := spreadMarks(f, xs, ys, markGap)
	moved := false
	for i, p := range pts {
		col := styles[p.arm].color
		if !math.IsNaN(p.xlo) {
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"/>\n", sx.at(p.xlo), ys[i], sx.at(p.xhi), ys[i], col)
		}
		if !math.IsNaN(p.ylo) {
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" opacity=\"0.6\"/>\n", xs[i], sy.at(p.ylo), xs[i], sy.at(p.yhi), col)
		}
		if mx[i] != xs[i] || my[i] != ys[i] {
			moved = true
			fmt.Fprintf(b, "<line class=\"leader\" data-arm=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\" stroke-width=\"1\"/>\n",
				htmlText(p.arm), xs[i], ys[i], mx[i], my[i])
			fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#57606a\"/>\n", xs[i], ys[i])
		}
	}
	for i, p := range pts {
		tip := fmt.Sprintf("%s: cost %s, %s %s (%d of %d cells)", p.arm, tickLabel(p.x), yName, tickLabel(p.y), p.n, p.cells)
		marker(b, styles[p.arm], p.arm, mx[i], my[i], 6, tip)
	}
	return moved
}

// spreadMarks returns where to draw marks meant for (xs, ys): where they
// belong, except that marks closer than gap to another are set on a
// circle around their cluster's centre, far enough apart not to touch,
// and kept inside the frame.
func spreadMarks(f frame, xs, ys []float64, gap float64) (mx, my []float64) {
	n := len(xs)
	mx, my = slices.Clone(xs), slices.Clone(ys)
	cluster := make([]int, n)
	for i := range cluster {
		cluster[i] = i
	}
	root := func(i int) int {
		for cluster[i] != i {
			i = cluster[i]
		}
		return i
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if math.Hypot(xs[i]-xs[j], ys[i]-ys[j]) < gap {
				cluster[root(j)] = root(i)
			}
		}
	}
	members := map[int][]int{}
	for i := range n {
		members[root(i)] = append(members[root(i)], i)
	}
	for _, ms := range members {
		k := len(ms)
		if k < 2 {
			continue
		}
		cx, cy := 0.0, 0.0
		for _, i := range ms {
			cx, cy = cx+xs[i]/float64(k), cy+ys[i]/float64(k)
		}
		r := math.Max(gap, gap/(2*math.Sin(math.Pi/float64(k)))+1)
		for j, i := range ms {
			a := -math.Pi/2 + 2*math.Pi*float64(j)/float64(k)
			mx[i] = math.Min(math.Max(cx+r*math.Cos(a), f.x0()+6), f.x1()-6)
			my[i] = math.Min(math.Max(cy+r*math.Sin(a), f.y1()+6), f.y0()-6)
		}
	}
	return mx, my
}

// scatterKey is the chart's legend: each arm's marker, the cells plotted,
// and both figures in numbers, or in words what was not measured.
func scatterKey(b *bytes.Buffer, pts []scatterPoint, yName string, styles map[string]armStyle) {
	esc := htmlText
	fmt.Fprintf(b, "<table class=\"key\">\n<thead><tr><th></th><th>arm</th><th>cells</th><th>median cost (USD), IQR</th><th>%s</th></tr></thead>\n<tbody>\n", esc(yName))
	for _, p := range pts {
		fmt.Fprintf(b, "<tr data-arm=\"%s\"><td>%s</td><td>%s</td>", esc(p.arm), swatch(styles[p.arm], p.arm), esc(p.arm))
		if p.n == 0 {
			fmt.Fprintf(b, "<td class=\"nm\" colspan=\"3\">%s</td></tr>\n", esc(p.why))
			continue
		}
		fmt.Fprintf(b, "<td class=\"num\">%d of %d</td><td class=\"num\">%s%s</td><td class=\"num\">%s%s</td></tr>\n",
			p.n, p.cells, tickLabel(p.x), spanText(p.xlo, p.xhi), tickLabel(p.y), spanText(p.ylo, p.yhi))
	}
	b.WriteString("</tbody>\n</table>\n")
}

// spanText spells a spread as " (lo–hi)", or nothing when there is none.
func spanText(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	return " (" + tickLabel(lo) + "–" + tickLabel(hi) + ")"
}

func nanOr(v, alt float64) float64 {
	if math.IsNaN(v) {
		return alt
	}
	return v
}

// kindBars draws, per arm, a bar of its cells split by their final
// attempt's outcome: ok and each error kind the section's cells ended with.
func kindBars(b *bytes.Buffer, sec chartSection, styles map[string]armStyle) {
	segments := []string{"ok"}
	for _, k := range sec.tab.Kinds {
		if slices.ContainsFunc(sec.groups, func(g *report.Group) bool { return g.Failed[k] > 0 }) {
			segments = append(segments, k)
		}
	}
	colors := kindColors(segments)
	maxN := 0
	for _, g := range sec.groups {
		maxN = max(maxN, g.Cells)
	}
	fmt.Fprintf(b, "<figure>\n<figcaption>%s</figcaption>\n<div class=\"legend\">", htmlText(sec.of("Outcome of every cell per arm (its final attempt)")))
	for _, k := range segments {
		fmt.Fprintf(b, "<span><svg class=\"key\" width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" aria-hidden=\"true\"><rect width=\"10\" height=\"10\" fill=\"%s\"/></svg> %s</span>", colors[k], htmlText(k))
	}
	b.WriteString("</div>\n")
	rowH := 26.0
	f := frame{w: 520, left: 130, right: 16, top: 8, bottom: 36}
	f.h = f.top + f.bottom + rowH*float64(len(sec.groups))
	svgOpen(b, f, sec.of("cells per arm by outcome"))
	ticks, d0, d1 := report.NiceTicks(0, float64(maxN), 5)
	sx := linear{d0, d1, f.x0(), f.x1()}
	xAxis(b, f, sx, ticks, "cells")
	for i, g := range sec.groups {
		y := f.top + rowH*float64(i) + 4
		armLabel(b, styles[g.Arm], g.Arm, g.Arm, f.x0()-6, y+9)
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
				x0, y, math.Max(x1-x0, 0.5), rowH-8, colors[k], htmlText(g.Arm), htmlText(k), n, g.Cells)
			at += n
		}
	}
	b.WriteString("</svg>\n</figure>\n")
}

// kindColors colours each outcome: ok, then errors and failures each in
// their own family.
func kindColors(segments []string) map[string]string {
	colors := map[string]string{}
	nErr, nFail := 0, 0
	for _, k := range segments {
		switch {
		case k == "ok":
			colors[k] = kindColor(k, 0)
		case wfb.IsErrored(k):
			colors[k] = kindColor(k, nErr)
			nErr++
		default:
			colors[k] = kindColor(k, nFail)
			nFail++
		}
	}
	return colors
}

// armLabel writes a row's label right-aligned at (x, y): the arm's marker
// and text, so that rows read against the scatter's legend.
func armLabel(b *bytes.Buffer, st armStyle, arm, text string, x, y float64) {
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x-14, y+4, htmlText(text))
	marker(b, st, arm, x-5, y, 4, arm)
}

// boxPlot draws the distribution of a metric per arm: whiskers from min to
// max, a box from p25 to p75, a line at the median, and — for samples small
// enough to see — every value as a dot. An arm with no measured value says
// so in words.
func boxPlot(b *bytes.Buffer, sec chartSection, m report.Metric, styles map[string]armStyle) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range sec.groups {
		if s := g.Metrics[m]; s.N > 0 {
			lo, hi = math.Min(lo, s.Min), math.Max(hi, s.Max)
		}
	}
	fmt.Fprintf(b, "<figure>\n<figcaption>%s</figcaption>\n", htmlText(sec.of("Distribution of "+m.Name()+" per arm (per cell, retries summed)")))
	rowH := 30.0
	f := frame{w: 520, left: 130, right: 16, top: 8, bottom: 36}
	f.h = f.top + f.bottom + rowH*float64(len(sec.groups))
	svgOpen(b, f, sec.of("distribution of "+m.Name()+" per arm"))
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	ticks, d0, d1 := report.NiceTicks(math.Min(0, lo), hi, 5)
	sx := linear{d0, d1, f.x0(), f.x1()}
	unit := m.Unit()
	if unit == "USD" {
		unit = "USD per cell"
	}
	xAxis(b, f, sx, ticks, unit)
	for i, g := range sec.groups {
		s := g.Metrics[m]
		yc := f.top + rowH*float64(i) + rowH/2
		armLabel(b, styles[g.Arm], g.Arm, fmt.Sprintf("%s (n=%d)", g.Arm, s.N), f.x0()-6, yc)
		if s.N == 0 {
			fmt.Fprintf(b, "<text class=\"nm\" x=\"%.1f\" y=\"%.1f\">not measured on any of its %d cells</text>\n", f.x0()+6, yc+4, g.Cells)
			continue
		}
		boxRow(b, sx, yc, s, g.Values[m], styles[g.Arm].color)
	}
	b.WriteString("</svg>\n</figure>\n")
}

// boxRow draws one arm's box, whiskers, median and values.
func boxRow(b *bytes.Buffer, sx linear, yc float64, s report.Spread, vals []float64, col string) {
	fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", sx.at(s.Min), yc, sx.at(s.Max), yc, col)
	if !math.IsNaN(s.Q1) {
		fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\"/>\n",
			sx.at(s.Q1), yc-9, math.Max(sx.at(s.Q3)-sx.at(s.Q1), 1), 18.0, col, col)
	}
	fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"><title>median %s</title></line>\n",
		sx.at(s.Center), yc-9, sx.at(s.Center), yc+9, col, tickLabel(s.Center))
	if len(vals) > 200 {
		return
	}
	for j, v := range vals {
		// A fixed jitter keeps equal values apart and the page
		// byte-for-byte reproducible.
		jy := yc + float64(j%5-2)*2.5
		fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\" opacity=\"0.7\"/>\n", sx.at(v), jy, col)
	}
}
