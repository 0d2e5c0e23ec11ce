package view

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/wfbench/wfb/internal/testkit/gate"
)

// chromiumBin finds Chromium, as the report's render test does: a skip
// locally, a failure under WFB_REQUIRE_CHROMIUM=1 (CI). Under -short it
// skips: a real browser is a slow end-to-end path.
func chromiumBin(t *testing.T) string {
	t.Helper()
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
	return bin
}

// browser is a headless Chromium tab that records console errors,
// exceptions and every URL the page requests.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string
	requests []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumBin(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	// chromedp enables the runtime, log and network domains on a new tab;
	// Listen sees their events in order, from the first page on.
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				b.errors = append(b.errors, "console."+string(ev.Type))
			}
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				b.errors = append(b.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// browseFixture serves a new fixture and opens a browser on nothing yet.
func browseFixture(t *testing.T) (*fixture, *httptest.Server, *browser) {
	t.Helper()
	f := newFixture(t)
	return f, newTestServer(t, f, Options{}), newBrowser(t)
}

// css is a CSS selector.
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action that returns a value.
func result[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// check fails on any console error, exception or CSP report, and on any
// request that left origin.
func (b *browser) check(t *testing.T, origin string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("browser reported: %s", e)
	}
	if len(b.requests) == 0 {
		t.Error("the browser recorded no requests at all")
	}
	for _, u := range b.requests {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("a request left the origin: %s", u)
		}
	}
}

// TestABrowserWalksRunsToRunToAttemptToTranscript drives a real Chromium:
// runs → run (its grid and report) → the first failed attempt by keyboard
// (j) → its transcript as a conversation, then the attempt with the
// artifact; the injected script in a transcript, an artifact, a prompt and
// an error detail never runs (it would set the title), nothing logs an
// error and nothing is fetched off the origin.
func TestABrowserWalksRunsToRunToAttemptToTranscript(t *testing.T) {
	f, ts, b := browseFixture(t)
	b.do(t, "runs page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(css("table.runs")))
	b.do(t, "open run A", chromedp.Click(css(`a[href="run/`+f.runA+`"]`)), chromedp.WaitVisible(css("table.grid")))
	b.do(t, "j to the first failed attempt", chromedp.KeyEvent("j"), chromedp.WaitVisible(css("section.transcript")))
	location := result(t, b, "location", chromedp.Location())
	if !strings.HasSuffix(location, "/attempt/"+f.failed) {
		t.Fatalf("j went to %s, want the failed attempt %s", location, f.failed)
	}
	title := result(t, b, "title", chromedp.Title())
	injected := result(t, b, "injected elements", chromedp.Evaluate[int](`document.querySelectorAll("main script, main img, main [onerror]").length`))
	if title != "Attempt "+f.failed+" · wfb view" || injected != 0 {
		t.Errorf("injected markup ran or rendered: title %q, %d injected elements", title, injected)
	}
	transcript := result(t, b, "transcript", chromedp.Text(css("section.transcript")))
	for _, want := range []string{"prompt", "Fix sum.js <script>", "tool call: Bash", `"command": "ls -la"`, "tool result: Bash", "README.md", "input 12 · output 5", "result success"} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %q:\n%s", want, transcript)
		}
	}
	if detail := result(t, b, "detail", chromedp.Text(css("pre.detail"))); !strings.Contains(detail, `<script>document.title="pwned"</script>`) {
		t.Errorf("the error detail is not shown as text: %q", detail)
	}
	b.do(t, "the retry, linked from the failed attempt", chromedp.Click(css(`ol.cell-attempts a[href="../attempt/`+f.retry+`"]`)),
		chromedp.WaitVisible(css("p.outcome.ok")))
	if location := result(t, b, "location", chromedp.Location()); !strings.HasSuffix(location, "/attempt/"+f.retry) {
		t.Errorf("the retry link went to %s", location)
	}
	b.do(t, "the attempt with the artifact", chromedp.Navigate(ts.URL+"/attempt/"+f.ok), chromedp.WaitVisible(css("section.artifact")))
	artifact := result(t, b, "artifact", chromedp.Text(css("section.artifact pre")))
	if title := result(t, b, "title", chromedp.Title()); !strings.Contains(artifact, "<script>") || strings.Contains(title, "pwned") {
		t.Errorf("artifact: text %q, title %q", artifact, title)
	}
	b.check(t, ts.URL)
}

// TestABrowserComparesTwoRuns picks two runs in the compare form and reads
// wfb diff's table and its chart, the pickers keeping the runs picked.
func TestABrowserComparesTwoRuns(t *testing.T) {
	f, ts, b := browseFixture(t)
	addCompareArms(t, f)
	b.do(t, "compare", chromedp.Navigate(ts.URL+"/compare"), chromedp.WaitVisible(css("form.filter")),
		chromedp.SetValue(css(`select[name="a"]`), f.runA), chromedp.SetValue(css(`select[name="b"]`), f.runB),
		chromedp.Click(css(`form.filter button`)), chromedp.WaitVisible(css("section.table")))
	picked := result(t, b, "pickers", chromedp.Evaluate[[]string](`["a", "b", "fa", "fb"].map(n => document.querySelector('[name="' + n + '"]').value)`))
	if want := []string{f.runA, f.runB, "", ""}; strings.Join(picked, " ") != strings.Join(want, " ") {
		t.Errorf("after comparing, the form holds %q; want %q", picked, want)
	}
	tables := result(t, b, "compare tables", chromedp.Text(css("main")))
	for _, want := range []string{"Compare " + f.runA + " with " + f.runB, "strict", "cost"} {
		if !strings.Contains(tables, want) {
			t.Errorf("compare page lacks %q:\n%s", want, tables)
		}
	}
	// The chart: a forest plot per measured metric, each row's A and B
	// centre drawn (a real box in the layout), the markup arm's cost not
	// measured in A said in words, and its name shown as text.
	plots := result(t, b, "forest plots", chromedp.Evaluate[int](`document.querySelectorAll("svg.forest").length`))
	drawn := result(t, b, "marks drawn", chromedp.Evaluate[int](`Array.from(document.querySelectorAll("svg.forest g.mark circle")).filter(c => c.getBBox().width > 0).length`))
	costRows := result(t, b, "cost rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('svg.forest[data-key="cost_usd"] g.row')).map(r => r.textContent.replace(/\s+/g, " ").trim())`))
	// Strict, clean, input tokens and cost, four arms each, both sides
	// but five: input tokens of arms x and the markup arm, and the
	// markup arm's cost in A, were never measured.
	if plots != 4 || drawn != 4*4*2-5 {
		t.Errorf("%d forest plots (want 4), %d centres drawn (want 27)", plots, drawn)
	}
	var said bool
	for _, r := range costRows {
		said = said || strings.Contains(r, `<script>document.title="pwned"</script>`) && strings.Contains(r, "A: not measured") && strings.Contains(r, "n/c")
	}
	if !said || len(costRows) != 4 {
		t.Errorf("the cost plot's rows do not say the markup arm's A is not measured: %q", costRows)
	}
	if title := result(t, b, "title", chromedp.Title()); strings.Contains(title, "pwned") {
		t.Errorf("an arm's markup ran: title %q", title)
	}
	b.check(t, ts.URL)
}

// TestABrowserOpensTheTrendFromTheRuns follows the runs page's link to the
// trend, then to another metric: the chart is drawn (a line per arm), with
// no console error and nothing fetched off the origin.
func TestABrowserOpensTheTrendFromTheRuns(t *testing.T) {
	_, ts, b := browseFixture(t)
	b.do(t, "runs page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(css("table.runs")))
	b.do(t, "trend", chromedp.Click(css(`a.trend`)), chromedp.WaitVisible(css("svg.trend")))
	if loc := result(t, b, "location", chromedp.Location()); !strings.HasSuffix(loc, "/trend?by=day&metric=strict_pass_rate") {
		t.Errorf("the trend link went to %s", loc)
	}
	b.do(t, "cost", chromedp.Click(css(`nav.trend-links a[href*="metric=cost_usd"]`)), chromedp.WaitVisible(css("svg.trend")))
	if title := result(t, b, "title", chromedp.Title()); title != "Trend of cost (USD) by day · wfb view" {
		t.Errorf("title %q", title)
	}
	lines := result(t, b, "lines", chromedp.Evaluate[int](`document.querySelectorAll("svg.trend g.series path.line").length`))
	drawn := result(t, b, "drawn", chromedp.Evaluate[bool](`(ms => ms.length > 0 && ms.every(c => c.getBBox().width > 0))(Array.from(document.querySelectorAll("svg.trend path.marker")))`))
	if lines != 2 || !drawn {
		t.Errorf("%d lines drawn (want one per arm, 2); every point drawn: %v", lines, drawn)
	}
	b.check(t, ts.URL)
}

// TestABrowserStepsThroughFailedAttemptsWithTheKeys: k from an attempt
// after the failed one goes back to it, j from one before goes forward to
// it, u goes up to the run.
func TestABrowserStepsThroughFailedAttemptsWithTheKeys(t *testing.T) {
	f, ts, b := browseFixture(t)
	after := f.transcriptAttempts[2] // run A, task t2, arm a
	for _, step := range []struct {
		from, key, want, lands string
	}{
		{"/attempt/" + after, "k", "/attempt/" + f.failed, "p.outcome"},
		{"/attempt/" + f.ok, "j", "/attempt/" + f.failed, "p.outcome"},
		{"/attempt/" + f.failed, "u", "/run/" + f.runA, "table.grid"},
	} {
		// A mark on the page the key leaves: gone once the next one loads.
		b.do(t, step.from, chromedp.Navigate(ts.URL+step.from), chromedp.WaitVisible(css("p.outcome")))
		result(t, b, "mark", chromedp.Evaluate[bool](`(document.body.appendChild(document.createElement("i")).id = "before-key") !== ""`))
		b.do(t, step.key, chromedp.KeyEvent(step.key), chromedp.WaitNotPresent(css("#before-key")), chromedp.WaitVisible(css(step.lands)))
		if loc := result(t, b, "location", chromedp.Location()); loc != ts.URL+step.want {
			t.Errorf("%s on %s went to %s, want %s", step.key, step.from, loc, step.want)
		}
	}
	b.check(t, ts.URL)
}
