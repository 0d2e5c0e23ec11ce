package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wfbench/wfb/examples/demo"
	"github.com/wfbench/wfb/store"
)

// wfb view refuses to listen beyond loopback without a token, before it
// opens anything, as bad input.
func TestViewBeyondLoopbackWithoutATokenIsBadInput(t *testing.T) {
	_, errOut, code := wfbCmd(t, "view", "--db", filepath.Join(t.TempDir(), "none.db"), "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "--token") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --token", code, errOut)
	}
}

// wfb view --export writes the static site of a real results file (the
// demo's) and prints where its index is.
func TestViewExportWritesTheSiteOfTheDemo(t *testing.T) {
	t.Parallel()
	dir, db := demoResults(t)
	site := filepath.Join(dir, "site")
	out, errOut, code := wfbCmd(t, "view", "--db", db, "--export", site)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); first != filepath.Join(site, "index.html") {
		t.Errorf("first line %q, want the index", first)
	}
	attempts, _ := filepath.Glob(filepath.Join(site, "attempt", "*.html"))
	if len(attempts) != 45 {
		t.Errorf("%d attempt pages, want the demo's 45", len(attempts))
	}
	b, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil || !strings.Contains(string(b), "66.7%") {
		t.Errorf("index lacks the demo's strict rate: %v", err)
	}
}

// demoResults is a results file the demo wrote, in a directory of its own:
// a copy (each test may change its own) of the one file the demo writes
// once per test binary for the tests that read one. The tests of the demo
// itself (TestDemoRunsTheEmbeddedBenchOffline, the schema test's `demo`,
// TestDemoFitsOneScreen) run it themselves.
func demoResults(t *testing.T) (dir, db string) {
	t.Helper()
	demoOnce.once.Do(func() {
		demoOnce.dir, demoOnce.err = os.MkdirTemp("", "wfb-test-demo-")
		if demoOnce.err != nil {
			return
		}
		s, _, errOut := testStreams("", nil)
		if code := run(context.Background(), []string{"demo", "--db", filepath.Join(demoOnce.dir, "wfb.db")}, s); code != 0 {
			demoOnce.err = fmt.Errorf("demo: exit %d: %s", code, errOut)
		}
	})
	if demoOnce.err != nil {
		t.Fatal(demoOnce.err)
	}
	dir = t.TempDir()
	files, err := filepath.Glob(filepath.Join(demoOnce.dir, "wfb.db*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "wfb.db")
}

// demoOnce is the demo's results file that demoResults copies; TestMain
// removes its directory.
var demoOnce struct {
	once sync.Once
	dir  string
	err  error
}

// A review attempt of the demo, viewed as the run scored it and again
// after a rescore: its findings are marked by the scorer's matching (F1 on
// label timing, F2 matched by nothing) and each label found or missed, from
// the score alone (no bench file given to the viewer), and both scorings
// are in its score history.
func TestViewMarksAReviewsFindingsAgainstTheLabels(t *testing.T) {
	t.Parallel()
	dir, db := demoResults(t)
	ctx := context.Background()
	rdb, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var runID, attempt string
	err = rdb.Each(ctx, `SELECT r.run_id, a.attempt_id FROM artifacts a JOIN results r USING (attempt_id) ORDER BY r.rowid LIMIT 1`, nil,
		func(sc store.Scanner) error { return sc.Scan(&runID, &attempt) })
	rdb.Close()
	if err != nil || attempt == "" {
		t.Fatalf("the demo stored no review artifact: %v", err)
	}
	marked := []string{
		`<span class="mark TP">TP 1</span> <span class="mark FP">FP 1</span> <span class="mark FN">FN 1</span>`,
		`<tr class="TP"><td><span class="mark TP">TP</span> label timing</td> <td>F1</td>`,
		`<tr class="FP"><td><span class="mark FP">FP</span></td> <td>F2</td>`,
		`<tr class="TP"><td><span class="mark TP">TP</span> finding F1</td><td>timing</td>`,
		`<tr class="FN"><td><span class="mark FN">FN</span></td><td>swallowed-error</td>`,
		"the labels this score used",
	}
	page := func(site string) string {
		t.Helper()
		if _, errOut, code := wfbCmd(t, "view", "--db", db, "--export", site); code != 0 {
			t.Fatalf("view: exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(site, "attempt", attempt+".html"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}
	scorings := func(page string) int {
		history := page[strings.Index(page, "<h2>scores (oldest first)</h2>"):]
		return strings.Count(history[:strings.Index(history, "</table>")], "<tr><td")
	}
	// As the run scored it.
	p := page(filepath.Join(dir, "site"))
	for _, want := range marked {
		if !strings.Contains(p, want) {
			t.Errorf("the review attempt's page, as the run scored it, lacks %q", want)
		}
	}
	if n := scorings(p); n != 1 {
		t.Errorf("%d scorings in the history, want the run's", n)
	}
	// After a rescore: the same marks, from the newest score.
	benchFile, err := demo.Unpack(filepath.Join(dir, "bench"))
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := wfbCmd(t, "rescore", "--db", db, "--bench", benchFile, runID); code != 0 {
		t.Fatalf("rescore: exit %d: %s", code, errOut)
	}
	p = page(filepath.Join(dir, "site2"))
	for _, want := range marked {
		if !strings.Contains(p, want) {
			t.Errorf("the review attempt's page, after a rescore, lacks %q", want)
		}
	}
	if n := scorings(p); n != 2 {
		t.Errorf("%d scorings in the history, want the run's and the rescore's", n)
	}
}

// wfb view --export --compare A:B writes the comparison of any two runs or
// labels and links it from the index; a name the file lacks is bad input
// (exit 2) naming it, and nothing is written; A:B must be two names.
func TestViewExportWritesTheComparisonsNamed(t *testing.T) {
	t.Parallel()
	dir, db := demoResults(t)
	ctx := context.Background()
	rdb, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var runID string
	err = rdb.Each(ctx, `SELECT run_id FROM runs LIMIT 1`, nil, func(sc store.Scanner) error { return sc.Scan(&runID) })
	rdb.Close()
	if err != nil || runID == "" {
		t.Fatalf("the demo's run: %q, %v", runID, err)
	}
	site := filepath.Join(dir, "site")
	if _, errOut, code := wfbCmd(t, "view", "--db", db, "--export", site, "--compare", "demo:"+runID); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	name := "demo.." + runID + ".html"
	page, err := os.ReadFile(filepath.Join(site, "compare", name))
	if err != nil || !strings.Contains(string(page), "<h1>Compare demo with "+runID+"</h1>") {
		t.Errorf("the comparison asked for: %v", err)
	}
	if index, _ := os.ReadFile(filepath.Join(site, "index.html")); !strings.Contains(string(index), `<a href="compare/`+name+`">demo with `+runID+`</a>`) {
		t.Error("the index does not link the comparison asked for")
	}

	for _, tc := range []struct {
		compare []string
		want    string
	}{
		{[]string{"demo:" + runID, "--compare", "nightly:demo", "--compare", runID + ":gone"}, `no run or label "nightly", "gone"`},
		{[]string{"demo"}, `--compare "demo": want A:B`},
		{[]string{"a:b:c"}, `--compare "a:b:c": want A:B`},
	} {
		empty := filepath.Join(dir, "empty")
		_, errOut, code := wfbCmd(t, append([]string{"view", "--db", db, "--export", empty, "--compare"}, tc.compare...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("--compare %q: exit %d, stderr %q; want 2 with %q", tc.compare, code, errOut, tc.want)
		}
		if _, err := os.Stat(empty); !os.IsNotExist(err) {
			t.Errorf("--compare %q: %s exists after a refused export (%v); want nothing written", tc.compare, empty, err)
		}
	}
	if _, errOut, code := wfbCmd(t, "view", "--db", db, "--compare", "demo:"+runID); code != 2 || !strings.Contains(errOut, "--export") {
		t.Errorf("--compare without --export: exit %d, %q; want 2 naming --export", code, errOut)
	}
}
