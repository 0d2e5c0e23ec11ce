package view

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report"
)

// writeReportPage writes p as wfb report --html does and returns the page.
func writeReportPage(t *testing.T, p ReportPage) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := WriteReportPage(path, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reportRows are two runs (r1, r2) of two tasks and two arms, four
// repetitions: costs, turns and, on ok attempts, a weighted F1; a refused
// sandbox and a provider error among them.
func reportRows() []report.Row {
	var rows []report.Row
	i := 0
	for _, run := range []string{"r1", "r2"} {
		for _, task := range []string{"t1", "t2"} {
			for a, arm := range []string{"baseline", "candidate"} {
				for rep := range 4 {
					i++
					r := report.Row{RunID: run, Task: task, Arm: arm, Rep: rep, Attempt: 1, OK: true, Values: report.Unmeasured()}
					r.Values[report.CostUSD] = 0.1 + 0.01*float64(rep+a)
					r.Values[report.Turns] = float64(2 + rep%3)
					switch {
					case run == "r2" && arm == "candidate" && rep == 3:
						r.OK, r.ErrorKind = false, wfb.KindSandboxRefused
						r.Values[report.CostUSD], r.Values[report.Turns] = report.Unmeasured()[0], report.Unmeasured()[0]
					case run == "r1" && arm == "baseline" && rep == 2:
						r.OK, r.ErrorKind = false, wfb.KindProviderError
					default:
						r.Values[report.WeightedF1] = 0.5 + 0.04*float64(i%7)
					}
					rows = append(rows, r)
				}
			}
		}
	}
	return rows
}

// fixtureReportPage is the page of reportRows: tables and charts by arm,
// and the trend from run r1 to r2.
func fixtureReportPage(t *testing.T) string {
	t.Helper()
	ms := []report.Metric{report.CostUSD, report.Turns, report.WeightedF1}
	tab := report.NewTabulator(report.TabulateOptions{Metrics: ms, Keep: []report.Metric{report.CostUSD, report.Turns, report.WeightedF1}})
	tr := report.NewTrender(report.TrendOptions{Alpha: 0.05, Metrics: ms, By: "run", Keys: []string{"strict_pass_rate", "cost_usd"}}, []string{"r1", "r2"}, -1)
	rows := reportRows()
	for i := range rows {
		tab.Add(&rows[i])
		tr.Add(map[string]int{"r1": 0, "r2": 1}[rows[i].RunID], &rows[i])
	}
	res := tab.Result()
	title := "wfb report: runs r1, r2"
	return writeReportPage(t, ReportPage{Title: title, Tables: res.Tables(title, report.FormatTable), Charts: res, Trend: tr.Result(nil)})
}

// TestReportPageIsSelfContained stops wfb report --html's page from
// fetching anything: a page shared from a laptop or CI must not call out to
// a CDN or to the viewer's other pages, and must show its charts offline.
func TestReportPageIsSelfContained(t *testing.T) {
	page := fixtureReportPage(t)
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)https?://`),
		regexp.MustCompile(`(?i)<script`),
		regexp.MustCompile(`(?i)<link`),
		regexp.MustCompile(`(?i)<img`),
		regexp.MustCompile(`(?i)\shref=|\ssrc=`),
		regexp.MustCompile(`(?i)@import|url\(`),
	} {
		if loc := bad.FindStringIndex(page); loc != nil {
			t.Errorf("page contains %q at byte %d", page[loc[0]:loc[1]], loc[0])
		}
	}
	for _, want := range []string{
		"<style>", "td.num",
		"Cost vs weighted F1 per arm, over the cells where both were measured",
		"Outcome of every cell per arm (its final attempt)",
		"Distribution of cost per arm",
		"Distribution of turns per arm",
		"Trend by run (2 runs)", "strict pass rate (%) by run per arm", "cost (USD) by run per arm",
		"<svg", "sandbox-refused", "provider-error",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestReportPageRendersInHeadlessChromium stops a page that a browser
// cannot draw (broken SVG, markup that collapses to nothing, a style that
// hides it) from passing because the string checks do: a real Chromium
// opens it from file://, asks for nothing else, and the screenshot shows a
// substantial, coloured drawing.
func TestReportPageRendersInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; skipped under -short")
	}
	b := newBrowser(t)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(fixtureReportPage(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do(t, "open the page", chromedp.Navigate("file://"+path), chromedp.WaitVisible(css("section.charts")))
	shot := result(t, b, "screenshot", chromedp.FullScreenshot(100))
	b.mu.Lock()
	requests, errs := b.requests, b.errors
	b.mu.Unlock()
	for _, u := range requests {
		if u != "file://"+path {
			t.Errorf("the page asked for %s", u)
		}
	}
	if len(requests) == 0 {
		t.Error("the browser recorded no requests at all")
	}
	if len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if keep := os.Getenv("WFB_KEEP_SCREENSHOT"); keep != "" {
		_ = os.WriteFile(keep, shot, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	bounds := img.Bounds()
	inked, coloured := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
			// Chart marks are saturated; text and borders are grey.
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				coloured++
			}
		}
	}
	if total := bounds.Dx() * bounds.Dy(); inked < total/50 {
		t.Errorf("screenshot is nearly blank: %d of %d pixels not white", inked, total)
	}
	if coloured < 2000 {
		t.Errorf("screenshot shows almost no chart colour: %d coloured pixels", coloured)
	}
}

// TestReportPageTrendLeavesUnmeasuredBucketsOut stops a bucket where an arm
// measured nothing from being drawn as a zero, or joined across: arm x's
// cost is not measured on the middle day and arm late starts on it; each
// is drawn where measured, no line spans x's gap, and the missing days are
// said in words.
func TestReportPageTrendLeavesUnmeasuredBucketsOut(t *testing.T) {
	days := []string{"day-0", "day-1", "day-2"}
	tr := report.NewTrender(report.TrendOptions{Alpha: 0.05, Metrics: []report.Metric{report.CostUSD}, By: "day"}, days, -1)
	for day := range days {
		for _, arm := range []string{"x", "late"} {
			if arm == "late" && day == 0 {
				continue
			}
			for rep := range 6 {
				r := report.Row{RunID: days[day], Task: "t", Arm: arm, Rep: rep, Attempt: 1, OK: true, Values: report.Unmeasured()}
				if arm != "x" || day != 1 {
					r.Values[report.CostUSD] = 0.1 + 0.01*float64(rep+day)
				}
				tr.Add(day, &r)
			}
		}
	}
	page := writeReportPage(t, ReportPage{Title: "t", Trend: tr.Result(nil)})
	fig := regexp.MustCompile(`(?s)<figure class="chart" data-key="cost_usd">.*?</figure>`).FindString(page)
	if fig == "" {
		t.Fatalf("no cost trend chart:\n%s", page)
	}
	series := trendSeries(fig)
	for arm, want := range map[string]int{"x": 2, "late": 2} {
		if n := strings.Count(series[arm], `<g class="point`); n != want {
			t.Errorf("arm %s: %d points, want %d (one per measured day)", arm, n, want)
		}
	}
	// A line is a path: M starts a stroke, L draws one to the next centre.
	if n := strings.Count(pathOf(series["x"]), "L"); n != 0 {
		t.Errorf("arm x: %d strokes across its unmeasured day", n)
	}
	if n := strings.Count(pathOf(series["late"]), "L"); n != 1 {
		t.Errorf("arm late: %d strokes, want one joining its two days", n)
	}
	for _, want := range []string{"not measured in day day-1", "not measured in day day-0"} {
		if !strings.Contains(fig, want) {
			t.Errorf("chart does not say %q", want)
		}
	}
}

// trendSeries splits a trend figure's SVG into each arm's series.
func trendSeries(fig string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<g class="series s\d"><title>arm ([^<]*)</title>(.*?)</g>\n</g>`).FindAllStringSubmatch(fig, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// pathOf is the d of a series' line, or "".
func pathOf(series string) string {
	m := regexp.MustCompile(`<path class="line" d="([^"]*)"`).FindStringSubmatch(series)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestReportPageFoldsManyNotes stops a table's long list of notes from
// pushing the next table out of sight: more than foldNotesOver fold into
// a <details> that counts them, and a few stay open.
func TestReportPageFoldsManyNotes(t *testing.T) {
	page := writeReportPage(t, ReportPage{Title: "t", Tables: []*report.Table{
		{Title: "many", Columns: []string{"x"}, Rows: [][]any{{1}}, Footnotes: []string{"n1", "n2", "n3", "n4", "n5"}},
		{Title: "few", Columns: []string{"x"}, Rows: [][]any{{1}}, Footnotes: []string{"f1", "f2"}},
	}})
	if !strings.Contains(page, `<details class="notes"><summary>5 notes</summary><ol class="notes"><li>n1</li>`) {
		t.Errorf("five notes are not folded:\n%s", page)
	}
	few := page[strings.Index(page, "<h2>few</h2>"):]
	if strings.Contains(few, "<details") || !strings.Contains(few, "<li>f2</li>") {
		t.Errorf("two notes are folded, or missing:\n%s", few)
	}
}

// TestReportPageShowsHostileTextAsText stops text an agent or a bench file
// controls — a tool name, an arm, a task — from becoming markup or from
// smuggling controls onto the page: a <script> is shown as text, ESC, BEL
// and a bidirectional override as a box table shows them, and a NULL cell
// says it was not measured.
func TestReportPageShowsHostileTextAsText(t *testing.T) {
	hostile := "\x1b]52;c;aGk=\x07<script>document.title=1</script>"
	tab := report.NewTabulator(report.TabulateOptions{ByTask: true, Metrics: []report.Metric{report.CostUSD}, Keep: []report.Metric{report.CostUSD, report.Turns}})
	for rep := range 3 {
		r := report.Row{RunID: "r", Task: "t \u202ek", Arm: `"><svg onload=alert(2)>`, Rep: rep, Attempt: 1, OK: true, Values: report.Unmeasured()}
		r.Values[report.CostUSD] = 0.1
		tab.Add(&r)
	}
	res := tab.Result()
	page := writeReportPage(t, ReportPage{Title: "wfb report: " + hostile, Charts: res, Tables: append(res.Tables("t", report.FormatTable),
		&report.Table{Title: "tools", Columns: []string{"tool", "calls"}, Rows: [][]any{{hostile, nil}}})})
	for _, bad := range []string{"<script", "<svg onload", `"><svg`, "\x1b", "\x07", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q raw", bad)
		}
	}
	for _, want := range []string{"␛]52;c;aGk=␇&lt;script&gt;", `task t \u202ek`, "&#34;&gt;&lt;svg onload=alert(2)&gt;", `<td class="null">NULL</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
