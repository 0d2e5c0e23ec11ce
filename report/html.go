package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/termtext"
)

// HTML page: one self-contained file. Styles are inline, charts are inline
// SVG drawn here, and nothing on the page refers to another resource — no
// scripts, fonts, images or links — so it opens offline and leaks nothing
// when shared. (Inline SVG in HTML needs no xmlns, which would be the only
// URL on the page.)

// HTMLInput is what the page shows: the tables of a report, the
// tabulation its charts are drawn from and, over several days or labels, a
// trend.
type HTMLInput struct {
	Title  string
	Tables []*Table
	// Charts is the tabulation the tables come from, tabulated with Keep
	// including CostUSD and Turns (and the quality metrics, for the cost
	// versus quality chart). The charts follow its grouping: one set per
	// task when it is by task and arm, one over every task otherwise.
	Charts *Tabulation
	// Trend, when not nil, is drawn as a line chart per metric: each arm's
	// centre with its interval, bucket by bucket.
	Trend *Trend
}

// WriteHTML writes the report as one self-contained HTML page.
func WriteHTML(w io.Writer, in HTMLInput) error {
	var b bytes.Buffer
	esc := htmlText
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(in.Title))
	b.WriteString("<style>\n" + pageCSS + "</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(in.Title))

	if in.Charts != nil && len(in.Charts.Groups) > 0 {
		styles := armStyles(in.Charts)
		for _, sec := range chartSections(in.Charts) {
			b.WriteString("<section class=\"charts\">\n")
			if sec.task != "" {
				fmt.Fprintf(&b, "<h2 class=\"section\">task %s</h2>\n", esc(sec.task))
			}
			scatter(&b, sec, styles)
			kindBars(&b, sec, styles)
			for _, m := range []Metric{CostUSD, Turns} {
				if hasMetric(in.Charts.Options.Metrics, m) {
					boxPlot(&b, sec, m, styles)
				}
			}
			b.WriteString("</section>\n")
		}
	}
	if in.Trend != nil && len(in.Trend.Buckets) > 1 {
		trendCharts(&b, in.Trend)
	}
	for _, t := range in.Tables {
		htmlTable(&b, t)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// chartSection is the groups one set of charts is drawn over: every arm,
// or every arm of one task.
type chartSection struct {
	task   string // empty unless the tabulation is by task
	tab    *Tabulation
	groups []*Group
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
func chartSections(tab *Tabulation) []chartSection {
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

const pageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1120px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 16px}
h2{font-size:16px;margin:24px 0 8px}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;background:#fff;max-width:520px}
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
details.notes>summary{font-size:12px;color:#57606a;cursor:pointer}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
h2.section{flex-basis:100%;margin:16px 0 0}
table.key{font-size:12px;margin:6px 0 0}
table.key td,table.key th{padding:2px 6px}
svg.swatch{display:inline-block;vertical-align:middle}
.nm{color:#57606a;font-style:italic}
p.note{font-size:12px;color:#57606a;max-width:500px;margin:4px 0 0}
`

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
	ts := make([]ChartTick, len(ticks))
	for i, t := range ticks {
		ts[i] = ChartTick{At: sy.at(t), Value: t, Label: tickLabel(t)}
	}
	yAxisTicks(b, f, ts, title)
}

// yAxisTicks is yAxis of ticks already placed.
func yAxisTicks(b *bytes.Buffer, f frame, ticks []ChartTick, title string) {
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

// markerShapes cycle with a period prime to the colours': 40 arms before
// a style repeats.
var markerShapes = []string{"circle", "square", "triangle", "diamond", "down"}

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
func armStyles(tab *Tabulation) map[string]armStyle {
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

// htmlTable writes a report table with its title and footnotes.
func htmlTable(b *bytes.Buffer, t *Table) {
	esc := htmlText
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
		fold := len(t.Footnotes) > FoldNotesOver
		if fold {
			fmt.Fprintf(b, "<details class=\"notes\"><summary>%d notes</summary>\n", len(t.Footnotes))
		}
		b.WriteString("<ol class=\"notes\">\n")
		for _, n := range t.Footnotes {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(n))
		}
		b.WriteString("</ol>\n")
		if fold {
			b.WriteString("</details>\n")
		}
	}
}

// FoldNotesOver is how many notes a page shows open under a table: more
// fold into a <details> that says how many there are, so that the next
// table is not pushed out of sight. Every note is still in the page.
const FoldNotesOver = 4

// htmlText is s escaped for HTML text or a quoted attribute, its controls
// shown as a box table shows them: a bidirectional override in an arm or
// task name (U+202E) would otherwise reorder what the page shows around
// it, and a browser drops ESC and the other controls without a trace.
func htmlText(s string) string { return html.EscapeString(termtext.Show(s, "\t\n")) }
