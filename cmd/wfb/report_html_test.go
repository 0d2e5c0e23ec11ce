package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// htmlFixture writes a results file of two nightly runs on two days
// (r1 on 2026-11-29, r2 on 2026-11-30) of tasks fix (cost about 0.1, no
// review) and review (cost about 0.5, scored weighted F1), four
// repetitions, and three arms: a and b measure exactly the same, so their
// marks fall on one spot, and nocost never has its cost measured. On the
// second day arm b fails half of fix.
func htmlFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close()
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	for n := range 2 {
		id := fmt.Sprintf("r%d", n+1)
		start := time.Date(2026, 11, 29+n, 2, 0, 0, 0, time.UTC)
		end := start.Add(time.Hour)
		if err := db.CreateRun(ctx, store.Run{ID: id, Label: "nightly", Kind: "run", StartedAt: start, FinishedAt: &end,
			Status: wfb.RunComplete, Fingerprint: "fp", Harness: "test"}); err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, task := range []string{"fix", "review"} {
			for _, arm := range []string{"a", "b", "nocost"} {
				for rep := range 4 {
					i++
					r := store.Result{RunID: id, AttemptID: fmt.Sprintf("%s-%02d", id, i), Task: task, Arm: arm, Rep: rep, Attempt: 1,
						Agent: "stand-in", AgentVersion: "1.0", Sandbox: "host-unsafe", StartedAt: start.Add(time.Duration(i) * time.Minute),
						DurationMS: i64(int64(1000 + 100*rep)), OK: true, ProcessState: wfb.StateExited, ExitCode: i64(0),
						NumTurns: i64(int64(1 + rep%2))}
					if arm != "nocost" {
						base := 0.10
						if task == "review" {
							base = 0.50
						}
						r.CostUSD, r.CostSource = f64(base+0.01*float64(rep)), "reported"
					}
					if id == "r2" && arm == "b" && task == "fix" && rep%2 == 1 {
						r.OK, r.ErrorKind = false, wfb.KindVerifyFailed
					}
					if err := db.InsertResult(ctx, &r); err != nil {
						t.Fatal(err)
					}
					if task == "review" {
						f1 := 0.6 + 0.05*float64(rep)
						if err := db.InsertScore(ctx, &store.Score{AttemptID: r.AttemptID, ScoredAt: end, LabelsDigest: "l", TP: 1, WeightedF1: &f1}); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	}
	return path
}

// reportPage runs wfb report with --html and returns the page.
func reportPage(t *testing.T, args ...string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	if _, errOut, code := runWFB(t, false, append(append([]string{"report"}, args...), "--html", page)...); code != 0 {
		t.Fatalf("report %v: exit %d: %s", args, code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// figures returns the page's figures whose caption contains caption.
func figures(page, caption string) []string {
	var out []string
	for _, f := range regexp.MustCompile(`(?s)<figure.*?</figure>`).FindAllString(page, -1) {
		if m := regexp.MustCompile(`(?s)<figcaption>(.*?)</figcaption>`).FindStringSubmatch(f); m != nil && strings.Contains(m[1], caption) {
			out = append(out, f)
		}
	}
	return out
}

// readText is what a reader sees of a fragment: its text without tags or
// tooltips, spaces collapsed.
func readText(fragment string) string {
	s := regexp.MustCompile(`(?s)<title>.*?</title>`).ReplaceAllString(fragment, "")
	s = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// svgMark is one arm's mark as a chart draws it.
type svgMark struct {
	Arm, Title string
	X, Y       float64
}

// chartMarks parses a figure's SVG as XML and returns its marks (the
// elements of class "mark"), read from the drawing itself.
func chartMarks(t *testing.T, fig string) []svgMark {
	t.Helper()
	svg := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindString(fig)
	dec := xml.NewDecoder(strings.NewReader(svg))
	var marks []svgMark
	var open *svgMark
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			if attr["class"] == "mark" {
				x, _ := strconv.ParseFloat(attr["data-x"], 64)
				y, _ := strconv.ParseFloat(attr["data-y"], 64)
				marks = append(marks, svgMark{Arm: attr["data-arm"], X: x, Y: y})
				open = &marks[len(marks)-1]
			}
		case xml.CharData:
			if open != nil {
				open.Title += string(el)
			}
		case xml.EndElement:
			if el.Name.Local != "title" {
				open = nil
			}
		}
	}
	if svg == "" {
		t.Fatalf("figure has no SVG:\n%s", fig)
	}
	return marks
}

// markCosts reads the cost each arm's mark on a scatter gives in its
// tooltip ("arm: cost 0.5, …").
func markCosts(fig string) map[string]float64 {
	got := map[string]float64{}
	for _, m := range regexp.MustCompile(`<title>([^<:]*): cost ([0-9.e+-]+)`).FindAllStringSubmatch(fig, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		got[m[1]] = v
	}
	return got
}

// costMedians reads, from wfb report --format json on the same file, the
// median cost per (task, arm): what the scatter's x must be.
func costMedians(t *testing.T, db string, args ...string) map[string]float64 {
	t.Helper()
	out, errOut, code := runWFB(t, false, append(append([]string{"report"}, args...), "--db", db, "--by", "task,arm", "--format", "json")...)
	if code != 0 {
		t.Fatalf("report json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Rows []struct {
			Task, Arm string
			Median    *float64 `json:"cost_usd_median"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, r := range doc.Rows {
		if r.Median != nil {
			got[r.Task+"/"+r.Arm] = *r.Median
		}
	}
	if len(got) == 0 {
		t.Fatalf("no cost medians in report json:\n%s", out)
	}
	return got
}

// TestReportHTMLScatterPlotsOnePopulation stops the cost-versus-quality
// chart from plotting the median cost over every task against a quality
// measured on the review task alone: its cost must be the review cells'
// cost, as wfb report by task and arm gives it.
func TestReportHTMLScatterPlotsOnePopulation(t *testing.T) {
	db := htmlFixture(t)
	want := costMedians(t, db, "nightly")
	figs := figures(reportPage(t, "nightly", "--db", db), "Cost vs weighted F1")
	if len(figs) != 1 {
		t.Fatalf("want one cost vs weighted F1 chart, got %d", len(figs))
	}
	costs := markCosts(figs[0])
	if len(costs) != 2 {
		t.Fatalf("want marks for arms a and b, got %v", costs)
	}
	for arm, got := range costs {
		if w := want["review/"+arm]; math.Abs(got-w) > 1e-9 {
			t.Errorf("arm %s: cost %v on the chart; its review cells' median is %v (over all tasks: a different population)", arm, got, w)
		}
	}
}

// TestReportHTMLOverlappingArmsStayApart stops two arms with the same
// figures being drawn as one mark with labels stacked on each other: each
// mark must stand apart, moved ones lead back to their place, and the key
// names every arm.
func TestReportHTMLOverlappingArmsStayApart(t *testing.T) {
	db := htmlFixture(t)
	figs := figures(reportPage(t, "nightly", "--db", db), "Cost vs weighted F1")
	if len(figs) != 1 {
		t.Fatalf("want one cost vs weighted F1 chart, got %d", len(figs))
	}
	marks := chartMarks(t, figs[0])
	for i := range marks {
		for j := i + 1; j < len(marks); j++ {
			if d := math.Hypot(marks[i].X-marks[j].X, marks[i].Y-marks[j].Y); d < 12 {
				t.Errorf("marks of %s and %s are %.1f px apart: one covers the other", marks[i].Arm, marks[j].Arm, d)
			}
		}
	}
	for _, arm := range []string{"a", "b"} {
		if !strings.Contains(figs[0], `class="leader" data-arm="`+arm+`"`) {
			t.Errorf("arm %s's mark was moved off its place without a leader line", arm)
		}
		if !regexp.MustCompile(`<tr data-arm="` + arm + `"><td><svg class="swatch"`).MatchString(figs[0]) {
			t.Errorf("the chart's key has no row with arm %s's marker", arm)
		}
	}
	if n := len(regexp.MustCompile(`<text[^>]*>(a|b)</text>`).FindAllString(figs[0], -1)); n > 0 {
		t.Errorf("%d arm labels printed in the plot, where they stack on each other", n)
	}
}

// TestReportHTMLSaysNotMeasuredInWords stops an arm without a measured
// cost from being an empty row or silently missing: every chart of cost
// names it with "not measured".
func TestReportHTMLSaysNotMeasuredInWords(t *testing.T) {
	db := htmlFixture(t)
	page := reportPage(t, "nightly", "--db", db)
	for _, caption := range []string{"Cost vs weighted F1", "Distribution of cost"} {
		figs := figures(page, caption)
		if len(figs) != 1 {
			t.Fatalf("want one %q chart, got %d", caption, len(figs))
		}
		if words := readText(figs[0]); !regexp.MustCompile(`nocost( \(n=0\))? not measured`).MatchString(words) {
			t.Errorf("%s: arm nocost is not said to be not measured: %s", caption, words)
		}
	}
}

// TestReportHTMLChartsFollowBy stops --by task,arm from changing the
// tables but not the charts: each task gets its own charts, over its own
// cells, each on the quality axis its cells have.
func TestReportHTMLChartsFollowBy(t *testing.T) {
	db := htmlFixture(t)
	want := costMedians(t, db, "nightly")
	page := reportPage(t, "nightly", "--by", "task,arm", "--db", db)
	for _, tc := range []struct{ task, caption string }{
		{"fix", "task fix: Cost vs strict pass rate"},
		{"review", "task review: Cost vs weighted F1"},
	} {
		figs := figures(page, tc.caption)
		if len(figs) != 1 {
			t.Errorf("want one chart %q, got %d", tc.caption, len(figs))
			continue
		}
		costs := markCosts(figs[0])
		if len(costs) != 2 {
			t.Errorf("%s: want marks for arms a and b, got %v", tc.caption, costs)
		}
		for arm, got := range costs {
			if w := want[tc.task+"/"+arm]; math.Abs(got-w) > 1e-9 {
				t.Errorf("%s: arm %s at cost %v; the task's median is %v", tc.caption, arm, got, w)
			}
		}
		for _, c := range []string{"Outcome of every cell", "Distribution of cost", "Distribution of turns"} {
			if n := len(figures(page, "task "+tc.task+": "+c)); n != 1 {
				t.Errorf("want one %q chart for task %s, got %d", c, tc.task, n)
			}
		}
	}
}

// TestReportHTMLDrawsTheTrend stops the page of a selection spanning
// several days from leaving out the trend wfb trend computes, or from
// drawing an unmeasured bucket as zero: per arm a point per measured day
// at wfb trend's centre, a line between them, and in words what is
// missing.
func TestReportHTMLDrawsTheTrend(t *testing.T) {
	db := htmlFixture(t)
	out, errOut, code := runWFB(t, false, "trend", "nightly", "--by", "day", "--metric", "pass_rate", "--format", "json", "--db", db)
	if code != 0 {
		t.Fatalf("trend: exit %d: %s", code, errOut)
	}
	page := reportPage(t, "nightly", "--db", db)
	if keep := os.Getenv("WFB_KEEP_PAGE"); keep != "" {
		_ = os.WriteFile(keep, []byte(page), 0o644)
	}
	if !strings.Contains(page, "Trend by day (2 days)") {
		t.Fatalf("the page of two days has no trend")
	}
	pass := figures(page, "strict pass rate (%) by day")
	if len(pass) != 1 {
		t.Fatalf("want one pass-rate trend chart, got %d", len(pass))
	}
	perArm := map[string]int{}
	for arm, series := range trendSeries(pass[0]) {
		perArm[arm] = strings.Count(series, `<g class="point`)
	}
	if perArm["a"] != 2 || perArm["b"] != 2 || perArm["nocost"] != 2 {
		t.Errorf("want a point per day per arm, got %v", perArm)
	}
	// wfb trend says b fell to 75% on the second day; the chart's point
	// for that day says the same.
	if !strings.Contains(out, `"center": 0.75`) {
		t.Fatalf("wfb trend json does not hold b's 75%% day:\n%s", out)
	}
	if !regexp.MustCompile(`<title>arm b, 2026-11-30: 75 % \(`).MatchString(pass[0]) {
		t.Errorf("b's second-day point does not say 75%%:\n%s", pass[0])
	}
	if line := regexp.MustCompile(`<path class="line" d="([^"]*)"`).FindStringSubmatch(trendSeries(pass[0])["b"]); line == nil || strings.Count(line[1], "L") != 1 {
		t.Errorf("want one stroke joining b's two days, got %q", line)
	}
	cost := figures(page, "cost (USD) by day")
	if len(cost) != 1 {
		t.Fatalf("want one cost trend chart, got %d", len(cost))
	}
	if n := strings.Count(trendSeries(cost[0])["nocost"], `<g class="point`); n != 0 {
		t.Errorf("nocost's unmeasured cost is drawn: %d points", n)
	}
	if !strings.Contains(cost[0], "not measured in day 2026-11-29, 2026-11-30") {
		t.Errorf("the cost trend does not say nocost was not measured:\n%s", cost[0])
	}
	if single := reportPage(t, "r1", "--db", db); strings.Contains(single, "Trend by") {
		t.Errorf("a one-day page draws a trend")
	}
}

// trendSeries splits a trend figure's SVG into each arm's series (the
// viewer's chart: a <g class="series"> per arm, a point per measured
// bucket, a path through them).
func trendSeries(fig string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<g class="series s\d"><title>arm ([^<]*)</title>(.*?)</g>\n</g>`).FindAllStringSubmatch(fig, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestReportHTMLEscapesAgentText stops a task or arm name (text from a
// bench file, and so from whoever wrote it) from becoming markup on the
// page: a <script> in either is shown as text.
func TestReportHTMLEscapesAgentText(t *testing.T) {
	ctx := context.Background()
	path, db := newResultsFile(t)
	start := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	cost := 0.1
	for n, run := range []string{"r1", "r2"} {
		st := start.Add(time.Duration(n) * 24 * time.Hour)
		if err := db.CreateRun(ctx, store.Run{ID: run, Label: `<b onmouseover="x()">l</b>`, Kind: "run", StartedAt: st,
			Status: wfb.RunComplete, Fingerprint: "fp", Harness: "test"}); err != nil {
			t.Fatal(err)
		}
		for _, arm := range []string{`<script>alert(1)</script>`, `"><svg onload=alert(2)>`} {
			r := store.Result{RunID: run, AttemptID: run + arm, Task: `<img src=x onerror=alert(3)>`, Arm: arm, Attempt: 1,
				Agent: "stand-in", Sandbox: "host-unsafe", StartedAt: st, OK: true, ProcessState: wfb.StateExited, CostUSD: &cost, CostSource: "reported"}
			if err := db.InsertResult(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	page := reportPage(t, "r1", "r2", "--by", "task,arm", "--db", path)
	for _, bad := range []string{"<script", "<img", "<svg onload", "<b onmouseover", `"><svg`} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "task &lt;img src=x onerror=alert(3)&gt;", "Trend by day"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestReportHTMLShowsTheControlsInAName stops a bidirectional override
// (U+202E) in a task or arm name from reordering what the HTML page shows
// after it ("rtl ‮gnp.exe" read as "rtl exe.png"), and ESC from vanishing
// without a trace: html.EscapeString left both as they were.
func TestReportHTMLShowsTheControlsInAName(t *testing.T) {
	ctx := context.Background()
	path, db := newResultsFile(t)
	start := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "r1", Kind: "run", StartedAt: start, Status: wfb.RunComplete,
		Fingerprint: "fp", Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	cost := 0.1
	for _, arm := range []string{"rtl \u202egnp.exe", "esc \x1b[31mred"} {
		r := store.Result{RunID: "r1", AttemptID: "a-" + arm, Task: "t \u202ek", Arm: arm, Attempt: 1, Agent: "stand-in",
			Sandbox: "host-unsafe", StartedAt: start, OK: true, ProcessState: wfb.StateExited, CostUSD: &cost, CostSource: "reported"}
		if err := db.InsertResult(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	page := reportPage(t, "r1", "--by", "task,arm", "--db", path)
	for _, bad := range []string{"\u202e", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q raw", bad)
		}
	}
	for _, want := range []string{`rtl \u202egnp.exe`, "esc ␛[31mred", `task t \u202ek`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
