package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/store"
)

// reportFixture writes a results file with two nightly runs of one bench
// (labels base and cand; agent 2.0.0 then 2.0.1): arms baseline and
// candidate, tasks t1 and t2, five repetitions. In run r2 the candidate
// costs 30% less. Run r1 holds a provider error that was retried, a refused
// sandbox, and an attempt with no measured cost.
func reportFixture(t *testing.T) string {
	t.Helper()
	return reportFixtureIDs(t, "r1", "r2")
}

// reportFixtureIDs is reportFixture with runs r1 and r2 named id1 and
// id2, as long as real run ids when a test needs them to be.
func reportFixtureIDs(t *testing.T, id1, id2 string) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close() // a reader then finds the file whole, its log checkpointed
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	for n, label := range []string{"base", "cand"} {
		id := []string{id1, id2}[n]
		start := time.Date(2026, 11, 29+n, 2, 0, 0, 0, time.UTC)
		end := start.Add(time.Hour)
		if err := db.CreateRun(ctx, store.Run{ID: id, Label: label, Kind: "run", StartedAt: start, FinishedAt: &end,
			Status: wfb.RunComplete, Fingerprint: "fp-" + label, Harness: "test"}); err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, task := range []string{"t1", "t2"} {
			for _, arm := range []string{"baseline", "candidate"} {
				for rep := range 5 {
					i++
					cost := 0.10 + 0.01*float64(rep) + 0.05*float64(len(task)-2)
					if arm == "candidate" && id == id2 {
						cost *= 0.7
					}
					r := store.Result{RunID: id, AttemptID: fmt.Sprintf("%s-%02d", id, i), Task: task, Arm: arm, Rep: rep, Attempt: 1,
						Agent: "stand-in", AgentVersion: fmt.Sprintf("2.0.%d", n), Sandbox: "host-unsafe",
						StartedAt: start.Add(time.Duration(i) * time.Minute), DurationMS: i64(int64(10000 + 500*rep)),
						OK: true, ProcessState: wfb.StateExited, ExitCode: i64(0),
						InputTokens: i64(int64(1000 + 10*rep)), OutputTokens: i64(200), CacheReadInputTokens: i64(0),
						CacheCreationInputTokens: i64(50), CostUSD: f64(cost), CostSource: "reported", NumTurns: i64(int64(2 + rep%3))}
					switch {
					case id == id1 && task == "t1" && arm == "baseline" && rep == 1:
						failed := r
						failed.AttemptID += "-try1"
						failed.OK, failed.ErrorKind, failed.ErrorDetail = false, wfb.KindProviderError, "529 overloaded"
						failed.InputTokens, failed.OutputTokens, failed.CacheReadInputTokens, failed.CacheCreationInputTokens = nil, nil, nil, nil
						failed.CostUSD, failed.CostSource, failed.NumTurns, failed.ExitCode = nil, "", nil, i64(1)
						if err := db.InsertResult(ctx, &failed); err != nil {
							t.Fatal(err)
						}
						r.Attempt, r.RetryOf = 2, failed.AttemptID
					case id == id1 && task == "t2" && arm == "candidate" && rep == 4:
						r = store.Result{RunID: id, AttemptID: r.AttemptID, Task: task, Arm: arm, Rep: rep, Attempt: 1,
							Agent: "stand-in", AgentVersion: r.AgentVersion, Sandbox: "bwrap", StartedAt: r.StartedAt,
							ErrorKind: wfb.KindSandboxRefused, ErrorDetail: "bwrap: no user namespaces", ProcessState: wfb.StateNotStarted}
					case id == id1 && task == "t2" && arm == "baseline" && rep == 2:
						r.CostUSD, r.CostSource = nil, ""
					case id == id2 && task == "t2" && arm == "baseline" && rep == 3:
						r.OK, r.ErrorKind = false, wfb.KindVerifyFailed
					}
					if err := db.InsertResult(ctx, &r); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	return path
}

// runWFB runs wfb in process with stdout not a terminal unless terminal.
func runWFB(t *testing.T, terminal bool, args ...string) (string, string, int) {
	t.Helper()
	s, out, errOut := testStreams("", nil)
	s.OutIsTerminal = terminal
	code := run(context.Background(), args, s)
	return out.String(), errOut.String(), code
}

// TestReportCommandsPrintWhatTheFileHolds pins the output of runs, report,
// diff and export through the CLI on a real results file. It stops a
// regression anywhere on the path (flags, selection, loading, building,
// rendering) from going unnoticed.
func TestReportCommandsPrintWhatTheFileHolds(t *testing.T) {
	db := reportFixture(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"runs_table", []string{"runs", "--format", "table"}},
		{"runs_csv", []string{"runs", "--format", "csv"}},
		{"report_latest_markdown", []string{"report", "--format", "markdown"}},
		{"report_r1_by_task_table", []string{"report", "r1", "--by", "task,arm", "--format", "table"}},
		{"report_both_json", []string{"report", "base", "cand", "--format", "json"}},
		{"report_filter_tsv", []string{"report", "day=2026-11-29,arm=candidate"}},
		{"diff_runs_markdown", []string{"diff", "base", "cand", "--format", "markdown"}},
		{"diff_arms_table", []string{"diff", "arm=baseline,run=r2", "arm=candidate,run=r2", "--format", "table"}},
		{"diff_runs_csv", []string{"diff", "r1", "r2", "--by", "task,arm", "--alpha", "0.1", "--format", "csv"}},
		{"trend_day_table", []string{"trend", "--by", "day", "--metric", "pass_rate,cost_usd", "--format", "table"}},
		{"trend_label_tsv", []string{"trend", "--by", "label", "--metric", "cost_usd"}},
		{"trend_run_markdown", []string{"trend", "arm=candidate", "--by", "run", "--format", "markdown"}},
		{"trend_day_csv", []string{"trend", "--by", "day", "--baseline", "2026-11-29", "--metric", "pass_rate,cost_usd", "--format", "csv"}},
		{"trend_day_json", []string{"trend", "--by", "day", "--baseline", "2026-11-29", "--metric", "cost_usd", "--format", "json"}},
		{"diff_gate_markdown", []string{"diff", "base", "cand", "--fail-on", "cost_usd>+10%", "--accept-inconclusive", "--format", "markdown"}},
		{"diff_detect_table", []string{"diff", "base", "cand", "--detect", "10%,5pp", "--format", "table"}},
		{"diff_detect_json", []string{"diff", "base", "cand", "--detect", "25%", "--format", "json"}},
		{"diff_detect_tsv", []string{"diff", "r1", "r2", "--detect", "20pp"}},
		{"trend_detect_markdown", []string{"trend", "--by", "day", "--metric", "pass_rate,cost_usd", "--detect", "10%,5pp", "--format", "markdown"}},
		{"trend_detect_csv", []string{"trend", "--by", "run", "--metric", "pass_rate,cost_usd", "--detect", "10%", "--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := runWFB(t, false, append(tt.args, "--db", db)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			path := filepath.Join("testdata", "report_cmd_"+tt.golden+".golden")
			golden.Check(t, path, []byte(out))
		})
	}
}

// TestExportWritesEveryAttemptOfTheRun stops an export that loses rows or
// writes NULL as 0 through the CLI. (Column values are pinned by the report
// package's golden files; here the header follows whatever the schema has.)
func TestExportWritesEveryAttemptOfTheRun(t *testing.T) {
	db := reportFixture(t)
	out, errOut, code := runWFB(t, false, "export", "base", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 22 || !strings.HasPrefix(lines[0], "run_id,attempt_id,task,arm,rep,attempt,retry_of,") {
		t.Fatalf("want a header and 21 attempts, got %d lines starting %q", len(lines), lines[0])
	}
	if !strings.Contains(out, "\nr1,r1-02-try1,t1,baseline,1,1,,stand-in,2.0.0,,host-unsafe,2026-11-29T02:02:00.000Z,10500,0,provider-error,529 overloaded,exited,1,,,,,,,") {
		t.Errorf("the retried provider error is not exported with its usage empty (NULL):\n%s", out)
	}
	jl, _, code := runWFB(t, false, "export", "r2", "--format", "jsonl", "--db", db)
	if code != 0 || strings.Count(jl, "\n") != 20 || !strings.Contains(jl, `"error_kind":null`) {
		t.Errorf("jsonl export of r2: exit %d, %d lines, want 20 and null error kinds:\n%s", code, strings.Count(jl, "\n"), jl)
	}
}

// TestDiffFindsTheRealChangeAndOnlyIt stops a diff that misses a real 30%
// cost drop, or flags metrics that did not move.
func TestDiffFindsTheRealChangeAndOnlyIt(t *testing.T) {
	out, errOut, code := runWFB(t, false, "diff", "base", "cand", "--format", "csv", "--db", reportFixture(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var significant []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	col := slices.Index(strings.Split(lines[0], ","), "significant")
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "#") {
			continue // a footnote
		}
		f := strings.Split(line, ",")
		if f[col] == "true" {
			significant = append(significant, f[0]+" "+f[1])
		}
	}
	if diff := cmp.Diff([]string{"candidate cost_usd"}, significant); diff != "" {
		t.Errorf("significant changes (-want +got):\n%s\n%s", diff, out)
	}
}

// TestDiffThroughAPipeKeepsItsFootnotes stops `wfb diff A B | cat`
// (tsv) dropping the caveats the terminal table shows: different bench
// fingerprints, an arm only one side has.
func TestDiffThroughAPipeKeepsItsFootnotes(t *testing.T) {
	out, errOut, code := runWFB(t, false, "diff", "base", "arm=candidate,run=r2", "--db", reportFixture(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# [", "different bench fingerprints", "arm baseline only in A: not compared"} {
		if !strings.Contains(out, want) {
			t.Errorf("piped diff lacks %q:\n%s", want, out)
		}
	}
}

// TestReportCommandsRefuseBadInputWithExit2 stops a typo from printing an
// empty report (which reads as "nothing happened") or a Go error dump:
// every mistake is exit 2 with a message that names it.
func TestReportCommandsRefuseBadInputWithExit2(t *testing.T) {
	db := reportFixture(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"report", "nightly-9"}, `no run or label "nightly-9"; latest runs: r2 (cand), r1 (base)`},
		{[]string{"report", "colour=blue"}, `unknown key "colour"`},
		{[]string{"report", "r1", "arm=x"}, "a filter (arm=x) must be the only argument"},
		{[]string{"report", "arm=nobody"}, "filter arm=nobody: no attempts recorded"},
		{[]string{"report", "--by", "model"}, `--by "model": the groupings are arm and task,arm`},
		{[]string{"report", "--by", "arm,task"}, `--by "arm,task": the groupings are arm and task,arm`},
		{[]string{"diff", "r1", "r2", "--by", "arm,task"}, `--by "arm,task": the groupings are arm and task,arm`},
		{[]string{"report", "--format", "xml"}, `unknown format "xml"`},
		{[]string{"diff", "r1"}, "diff takes exactly two arguments"},
		{[]string{"trend", "--by", "week"}, `--by "week": the buckets are day, label and run`},
		{[]string{"trend", "--metric", "colour"}, `--metric "colour": unknown metric`},
		{[]string{"trend", "r1"}, "the selection spans 1 day bucket(s); a trend needs two (every run started on one UTC date; try --by label or --by run (wfb trend --help shows how to get two)"},
		{[]string{"trend", "--baseline", "2020-01-01"}, `--baseline "2020-01-01": no such day among 2026-11-29, 2026-11-30`},
		{[]string{"diff", "r1", "r2", "--alpha", "2"}, "--alpha 2: want a number between 0 and 1"},
		{[]string{"diff", "r1", "arm=nobody"}, "side B (arm=nobody) selects no attempts"},
		{[]string{"export", "arm=baseline"}, "export takes a run id or label, not a filter"},
		{[]string{"export", "r1", "--format", "parquet"}, `unknown export format "parquet"`},
		{[]string{"runs", "--db", filepath.Join(t.TempDir(), "missing.db")}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--db") {
				args = append(args, "--db", db)
			}
			out, errOut, code := runWFB(t, false, args...)
			if code != 2 {
				t.Errorf("exit %d; want 2 (stdout %q)", code, out)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q; want it to contain %q", errOut, tt.want)
			}
		})
	}
}

// TestReportCommandsNeverWriteTheResultsFile stops a report command from
// migrating, journaling into or otherwise touching the file people keep as
// the record of their runs.
func TestReportCommandsNeverWriteTheResultsFile(t *testing.T) {
	db := reportFixture(t)
	// SQLite's WAL readers create the -shm index (and an empty -wal)
	// beside the file; what must not change is the database itself, and
	// nothing may be written to the log.
	digest := func() string {
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		if wal, err := os.Stat(db + "-wal"); err == nil && wal.Size() > 0 {
			t.Errorf("%d bytes were written to the write-ahead log", wal.Size())
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	before := digest()
	html := filepath.Join(t.TempDir(), "r.html")
	for _, args := range [][]string{
		{"runs"}, {"report", "--html", html}, {"report", "day=2026-11-30"}, {"diff", "r1", "r2"}, {"export", "r1", "--format", "jsonl"},
	} {
		if _, errOut, code := runWFB(t, false, append(args, "--db", db)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	if after := digest(); after != before {
		t.Errorf("the results file changed under read-only commands")
	}
}

// TestReportHTMLFlagWritesASelfContainedPage stops --html from writing a
// page that needs the network, or nothing at all.
func TestReportHTMLFlagWritesASelfContainedPage(t *testing.T) {
	html := filepath.Join(t.TempDir(), "report.html")
	out, errOut, code := runWFB(t, false, "report", "r1", "--html", html, "--db", reportFixture(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?i)https?://|<script|<link`).Match(page) {
		t.Errorf("page refers to something outside itself")
	}
	for _, want := range []string{"<svg", "Cost vs strict pass rate per arm", "sandbox-refused", "run r1 (base), complete"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "wrote "+html) || !strings.Contains(out, "strict") {
		t.Errorf("stdout %q / stderr %q: want the report on stdout and the file named on stderr", out, errOut)
	}
}

// TestReportFormatAutoFollowsTheTerminal stops box-drawing characters
// landing in a pipe, and TSV on a terminal.
func TestReportFormatAutoFollowsTheTerminal(t *testing.T) {
	db := reportFixture(t)
	for _, terminal := range []bool{true, false} {
		out, errOut, code := runWFB(t, terminal, "report", "--db", db)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if boxed := strings.Contains(out, "┌"); boxed != terminal {
			t.Errorf("terminal=%v: box drawn = %v:\n%s", terminal, boxed, out)
		}
	}
}

// newResultsFile creates a results file in the test's temp dir for a
// fixture to fill; the fixture closes it before it returns.
func newResultsFile(t *testing.T) (string, *store.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return path, db
}

// TestABareReportSaysWhichRunItPickedAndPassesOverSessions stops `wfb
// report` without arguments from silently reporting whatever run started
// last — a one-cell `wfb session` run after a bench run: it reports the
// newest bench run, says so on stderr with the run's label and cells and
// how to name another, and its TSV carries the report's title as a
// comment line, as JSON carries it.
func TestABareReportSaysWhichRunItPickedAndPassesOverSessions(t *testing.T) {
	ctx := context.Background()
	path := reportFixture(t)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "s1", Kind: "session", StartedAt: start, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertResult(ctx, &store.Result{RunID: "s1", AttemptID: "s1-1", Task: "t1", Arm: "stand-in", Attempt: 1,
		Agent: "stand-in", StartedAt: start, OK: true, ProcessState: wfb.StateExited}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out, errOut, code := wfbCmd(t, "report", "--db", path, "--format", "tsv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "wfb report: report of run r2 (label cand, 20 cells), the newest bench run; passed over the 1 ad-hoc session (wfb session) started since; name another: wfb report RUN|LABEL\n"
	if errOut != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; !strings.HasPrefix(first, "# wfb report: run r2 (cand)") {
		t.Errorf("the tsv starts %q, want its title as a comment line", first)
	}

	// Named, the session is reported, and nothing is said of picking.
	if _, errOut, code := wfbCmd(t, "report", "s1", "--db", path, "--format", "tsv"); code != 0 || errOut != "" {
		t.Errorf("report s1: exit %d, stderr %q", code, errOut)
	}
}
