package view

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// The trend page is wfb trend's table for one metric with a chart of it:
// an arm's line through the buckets, each centre with its interval.
func TestTheTrendPageChartsAMetricPerArmAcrossDays(t *testing.T) {
	f := newFixture(t)
	ts := newTestServer(t, f, Options{})
	resp, body := get(t, ts.Client(), ts.URL+"/trend?metric=cost_usd&by=day")
	if resp.StatusCode != 200 {
		t.Fatalf("trend: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{"Trend of cost (USD) by day", "wfb trend by day", "2026-11-29", "2026-11-30",
		`<svg class="trend"`, `<g class="series s0"><title>arm a</title>`, `<g class="series s1"><title>arm b</title>`,
		"arm a, 2026-11-30: 0.35 USD", `<path class="marker" d="M`, `<span class="shape">(circle)</span>`, `<span class="shape">(square)</span>`, `href="trend?by=label&amp;metric=cost_usd"`} {
		if !strings.Contains(body, want) {
			t.Errorf("trend page lacks %q", want)
		}
	}
	// Two arms, two days: a line of two centres each, one interval bar per
	// centre.
	if n := len(regexp.MustCompile(`<path class="line" d="M[0-9.]+ [0-9.]+ L[0-9.]+ [0-9.]+"`).FindAllString(body, -1)); n != 2 {
		t.Errorf("%d two-point lines, want 2", n)
	}
	if n := strings.Count(body, `<line class="ci`); n != 4 {
		t.Errorf("%d interval bars, want 4", n)
	}
	_, runs := get(t, ts.Client(), ts.URL+"/")
	if !strings.Contains(runs, `href="trend?by=day&amp;metric=strict_pass_rate"`) {
		t.Error("the runs page does not link to the trend")
	}
}

// A trend needs two buckets; an unknown metric or bucketing is a 400 that
// names what there is.
func TestTheTrendPageSaysWhatItCannotShow(t *testing.T) {
	ts := newTestServer(t, newFixture(t), Options{})
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/trend?by=label", 200, "fewer than two label buckets"},
		{"/trend?metric=output_tokens&by=day", 200, "No attempt measured output tokens in these buckets"},
		{"/trend?metric=nope&by=day", 400, "strict_pass_rate, clean_pass_rate"},
		{"/trend?by=week", 400, "the buckets are day, label"},
	} {
		resp, body := get(t, ts.Client(), ts.URL+tc.path)
		if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d, want %d with %q:\n%s", tc.path, resp.StatusCode, tc.code, tc.want, body)
		}
	}
}

// A label is text from whoever ran (or merged) the runs; as a trend
// bucket it lands in the SVG's text and titles, escaped like the rest.
func TestATrendBucketNamedWithMarkupIsEscaped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := f.openWritable(t)
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "run-c", Label: injection, Kind: "run", StartedAt: start, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	f.addCells(t, db, "run-c", start, 2)
	db.Close()
	ts := newTestServer(t, f, Options{})
	resp, body := get(t, ts.Client(), ts.URL+"/trend?metric=cost_usd&by=label")
	if resp.StatusCode != 200 || !strings.Contains(body, `<svg class="trend"`) {
		t.Fatalf("trend by label: %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") {
		t.Error("a label's markup reached the trend page unescaped")
	}
	if !strings.Contains(body, "<title>&lt;script&gt;document.title=") {
		t.Error("the label is not shown, escaped, as the bucket's name")
	}
}

// addSessionAndWeekly adds to f's file an ad-hoc session (kind session, arm
// solo) on 2026-12-01 and a bench run of label weekly on 2026-12-02.
func addSessionAndWeekly(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	db := f.openWritable(t)
	defer db.Close()
	day3 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "run-s", Kind: "session", StartedAt: day3, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	cost := 9.0
	if err := db.InsertResult(ctx, &store.Result{RunID: "run-s", Task: "session", Arm: "solo", Attempt: 1, StartedAt: day3, OK: true,
		ProcessState: wfb.StateExited, CostUSD: &cost, Agent: "claude"}); err != nil {
		t.Fatal(err)
	}
	day4 := day3.Add(24 * time.Hour)
	if err := db.CreateRun(ctx, store.Run{ID: "run-w", Label: "weekly", Kind: "run", StartedAt: day4, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	f.addCells(t, db, "run-w", day4, 3)
}

// The trend page is over the bench runs: an ad-hoc wfb session is left
// out, and the page says so, until asked for (it showed as an arm of its
// own, a bucket of its own); a label narrows it to that label's runs.
func TestTheTrendPageLeavesOutSessionsAndFiltersByLabel(t *testing.T) {
	f := newFixture(t)
	addSessionAndWeekly(t, f)
	ts := newTestServer(t, f, Options{})
	for _, tc := range []struct {
		query        string
		want, refuse []string
	}{
		{"metric=cost_usd&by=day",
			[]string{"2026-11-29", "2026-12-02", "1 ad-hoc session (runs of wfb session) left out — <a href=\"trend?by=day&amp;metric=cost_usd&amp;sessions=1\">include them</a>",
				`<option value="" selected>all</option><option value="nightly">nightly</option><option value="weekly">weekly</option>`,
				`<input type="checkbox" name="sessions" value="1"> include`},
			[]string{"2026-12-01", "arm solo"}},
		{"metric=cost_usd&by=day&sessions=1",
			[]string{"2026-11-29", "2026-12-01", "2026-12-02", "<title>arm solo</title>", "1 ad-hoc session (runs of wfb session) included — <a href=\"trend?by=day&amp;metric=cost_usd\">leave them out</a>",
				`<input type="checkbox" name="sessions" value="1" checked>`, `href="trend?by=label&amp;metric=cost_usd&amp;sessions=1"`},
			nil},
		{"metric=cost_usd&by=day&label=nightly",
			[]string{"2026-11-29", "2026-11-30", `<option value="nightly" selected>nightly</option>`, `href="trend?by=label&amp;label=nightly&amp;metric=cost_usd"`},
			[]string{"2026-12-01", "2026-12-02", `id="sessions"`}},
		{"metric=cost_usd&by=label",
			[]string{"label nightly → weekly"},
			[]string{"(no label)"}},
	} {
		resp, body := get(t, ts.Client(), ts.URL+"/trend?"+tc.query)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", tc.query, resp.StatusCode, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: page lacks %q", tc.query, w)
			}
		}
		for _, r := range tc.refuse {
			if strings.Contains(body, r) {
				t.Errorf("%s: page has %q", tc.query, r)
			}
		}
	}
	if resp, body := get(t, ts.Client(), ts.URL+"/trend?label=nope"); resp.StatusCode != 400 || !strings.Contains(body, "nightly, weekly") {
		t.Errorf("an unknown label: %d %s; want 400 naming the labels", resp.StatusCode, body)
	}
}

// A trend's notes are grouped by step under the table, each step's folded
// when there are more than a page shows open, and the legend — a
// paragraph — is one of them, not the first of a list of dozens.
func TestTheTrendPageGroupsItsNotesByStep(t *testing.T) {
	f := newFixture(t)
	addSessionAndWeekly(t, f)
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/trend?metric=cost_usd&by=day&sessions=1")
	notes := body[strings.Index(body, `<section class="trend-notes">`):]
	for _, want := range []string{`<details class="notes legend"><summary>How each step is tested</summary><p class="notes">Each bucket is compared`,
		`<details class="notes step"><summary>day 2026-11-29 → 2026-11-30: `, `<details class="notes step"><summary>day 2026-11-30 → 2026-12-01: `,
		`<details class="notes step"><summary>day 2026-12-01 → 2026-12-02: `, "<li>arm solo only in B: not compared.</li>"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(body, "<li>Each bucket is compared") || strings.Contains(body, "<li>day 2026-11-30 → 2026-12-01: ") {
		t.Error("the notes are also listed under the table, ungrouped")
	}
}
