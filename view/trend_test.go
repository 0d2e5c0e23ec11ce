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
