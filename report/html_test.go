package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/gate"
)

// fixtureHTML builds the page for the fixture: report tables and charts by
// arm, with review quality for some attempts so the scatter plots quality
// rather than pass rate, and the trend from run r1 to r2.
func fixtureHTML(t *testing.T) []byte {
	t.Helper()
	rows := fixtureRowsWhere(nil)
	for i := range rows {
		if rows[i].OK {
			rows[i].Values[WeightedF1] = 0.5 + 0.04*float64(i%7)
		}
	}
	ms := append(baseMetrics, WeightedF1)
	byArm := tabulate(rows, TabulateOptions{Metrics: ms, Keep: []Metric{CostUSD, Turns, WeightedF1}})
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: ms, By: "run", Keys: []string{"strict_pass_rate", "cost_usd"}}, []string{"r1", "r2"}, -1)
	for i := range rows {
		tr.Add(map[string]int{"r1": 0, "r2": 1}[rows[i].RunID], &rows[i])
	}
	title := "wfb report: runs r1, r2"
	var buf bytes.Buffer
	if err := WriteHTML(&buf, HTMLInput{Title: title, Tables: byArm.Tables(title, FormatTable), Charts: byArm, Trend: tr.Result(nil)}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHTMLIsSelfContained stops the HTML report from fetching anything: a
// page shared from a laptop or CI must not call out to a CDN, and must show
// its charts offline.
func TestHTMLIsSelfContained(t *testing.T) {
	page := string(fixtureHTML(t))
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)https?://`),
		regexp.MustCompile(`(?i)<script`),
		regexp.MustCompile(`(?i)<link`),
		regexp.MustCompile(`(?i)<img`),
		regexp.MustCompile(`(?i)@import|url\(`),
	} {
		if loc := bad.FindStringIndex(page); loc != nil {
			t.Errorf("page contains %q at byte %d", page[loc[0]:loc[1]], loc[0])
		}
	}
	for _, want := range []string{
		"Cost vs weighted F1 per arm, over the cells where both were measured",
		"Outcome of every cell per arm (its final attempt)",
		"Distribution of cost per arm",
		"Distribution of turns per arm",
		"strict pass rate (%) by run per arm", "cost (USD) by run per arm",
		"<svg", "sandbox-refused", "provider-error",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLRendersInHeadlessChromium stops a page that a browser cannot draw
// (broken SVG, markup that collapses to nothing) from passing because the
// string checks do: it is rendered by a real Chromium and the screenshot
// must show a substantial drawing.
func TestHTMLRendersInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: a real Chromium; go test without -short runs it (CI does)")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("WFB_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium not found on PATH and WFB_REQUIRE_CHROMIUM=1: install the Debian package chromium")
		}
		gate.Skipf(t, "WFB_REQUIRE_CHROMIUM", "chromium not found on PATH: install the Debian package chromium (or set WFB_REQUIRE_CHROMIUM=1 to make this a failure)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, fixtureHTML(t), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	// Tall enough to take in the trend below the charts.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,1800",
		"file://"+page)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if keep := os.Getenv("WFB_KEEP_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(keep, b, 0o644)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	inked, coloured := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
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
	total := b.Dx() * b.Dy()
	if inked < total/50 {
		t.Errorf("screenshot is nearly blank: %d of %d pixels not white", inked, total)
	}
	if coloured < 2000 {
		t.Errorf("screenshot shows almost no chart colour: %d coloured pixels", coloured)
	}
}

// TestHTMLTrendLeavesUnmeasuredBucketsOut stops a bucket where an arm
// measured nothing from being drawn as a zero, or joined across: arm x's
// cost is not measured on the middle day and arm late starts on it; each
// is drawn where measured, no line spans x's gap, and the missing days are
// said in words.
func TestHTMLTrendLeavesUnmeasuredBucketsOut(t *testing.T) {
	days := []string{"day-0", "day-1", "day-2"}
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, By: "day"}, days, -1)
	for day := range days {
		for _, arm := range []string{"x", "late"} {
			if arm == "late" && day == 0 {
				continue
			}
			for rep := range 6 {
				r := Row{RunID: days[day], Task: "t", Arm: arm, Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
				if arm != "x" || day != 1 {
					r.Values[CostUSD] = 0.1 + 0.01*float64(rep+day)
				}
				tr.Add(day, &r)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, HTMLInput{Title: "t", Trend: tr.Result(nil)}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	fig := regexp.MustCompile(`(?s)<figure class="trend" data-key="cost_usd">.*?</figure>`).FindString(page)
	if fig == "" {
		t.Fatalf("no cost trend chart:\n%s", page)
	}
	for arm, want := range map[string]int{"x": 2, "late": 2} {
		if n := strings.Count(fig, `class="mark" data-arm="`+arm+`"`); n != want {
			t.Errorf("arm %s: %d marks, want %d (one per measured day)", arm, n, want)
		}
	}
	if n := strings.Count(fig, `class="trendline" data-arm="x"`); n != 0 {
		t.Errorf("arm x: %d lines across its unmeasured day", n)
	}
	if n := strings.Count(fig, `class="trendline" data-arm="late"`); n != 1 {
		t.Errorf("arm late: %d lines, want one joining its two days", n)
	}
	for _, want := range []string{"not measured in day day-1", "not measured in day day-0"} {
		if !strings.Contains(fig, want) {
			t.Errorf("chart does not say %q", want)
		}
	}
}
