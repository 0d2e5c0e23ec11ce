package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// runFixture writes a bench directory any uid can traverse: a workspace
// ws/, the mock script replies.yaml (text given) and bench.yaml (text
// given). It returns the bench path and a results file path.
func runFixture(t *testing.T, script, bench string) (benchPath, db string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-run-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"ws/source.ts": "export const answer = 42;\n", "replies.yaml": script, "bench.yaml": bench}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "bench.yaml"), filepath.Join(t.TempDir(), "wfb.db")
}

const runOKScript = `default:
  text: "done"
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// buildWFB returns a wfb executable for tests whose wfb must be a real
// process of its own (signals must reach it, not this test binary): a copy
// of this test binary named wfb, which TestMain runs as wfb. The copy is
// made once per test binary, in a directory any uid can traverse, and
// removed when the tests end. (Each test used to `go build` wfb: 20 links
// of a 35 MB binary, seconds each.)
func buildWFB(t *testing.T) string {
	t.Helper()
	wfbCopy.once.Do(func() { wfbCopy.path, wfbCopy.err = copySelfAsWFB() })
	if wfbCopy.err != nil {
		t.Fatalf("copy the test binary as wfb: %v", wfbCopy.err)
	}
	return wfbCopy.path
}

var wfbCopy struct {
	once sync.Once
	path string
	err  error
}

// copySelfAsWFB copies this test binary to <a new directory>/wfb.
func copySelfAsWFB() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "wfb-test-bin-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	src, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer src.Close()
	bin := filepath.Join(dir, wfbName)
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", err
	}
	return bin, dst.Close()
}

// removeWFBCopy removes what buildWFB made, if it made anything.
func removeWFBCopy() {
	if wfbCopy.path != "" {
		os.RemoveAll(filepath.Dir(wfbCopy.path))
	}
}

// resultsOf reads every row of a results file, read-only.
func resultsOf(t *testing.T, db string) ([]store.Run, []store.Result) {
	t.Helper()
	ctx := context.Background()
	d, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runs, err := d.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows []store.Result
	for _, r := range runs {
		rs, err := d.Results(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return runs, rows
}

// countRows counts results rows, or -1 while the file cannot be read yet.
func countRows(db string) int {
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		return -1
	}
	defer d.Close()
	_, rows, err := d.Query(context.Background(), "SELECT count(*) FROM results")
	if err != nil {
		return -1
	}
	return int(rows[0][0].(int64))
}

func integrityOK(t *testing.T, db string) {
	t.Helper()
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, rows, err := d.Query(context.Background(), "PRAGMA integrity_check")
	if err != nil || len(rows) != 1 || rows[0][0] != "ok" {
		t.Errorf("integrity_check = %v, %v; want ok", rows, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A run killed with SIGKILL mid-sweep, then resumed, ends with every cell
// recorded exactly once and a sound file: the rows committed before the
// kill are kept, the cells in flight (no row) run again, nothing is
// duplicated. This is the crash the results file must survive.
func TestSIGKILLMidSweepThenResumeLosesNoCellAndDuplicatesNone(t *testing.T) {
	t.Parallel()
	slowPath(t, "SIGKILL to a real wfb mid-sweep")
	wfbBin := buildWFB(t)
	bench, db := runFixture(t, `default:
  text: "done"
  delay_ms: 150
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`, `runs: 8
workers: 2
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}]
`)
	// A process killed by SIGKILL cannot remove its sandboxes and cell
	// copies: keep them in a directory this test removes. Any uid must be
	// able to traverse it (as root the sessions run as 65534).
	scratch, err := os.MkdirTemp("", "wfb-killed-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	if err := os.Chmod(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+scratch)
	var stderr bytes.Buffer
	cmd := exec.Command(wfbBin, "run", bench, "--db", db)
	cmd.Env = env
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "4 committed rows", func() bool { return countRows(db) >= 4 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	runs, before := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunRunning || len(before) >= 16 {
		t.Fatalf("after SIGKILL: runs %+v, %d rows; want one run still marked running, some cells left", runs, len(before))
	}
	integrityOK(t, db)

	resume := exec.Command(wfbBin, "run", bench, "--db", db, "--resume", runs[0].ID)
	resume.Env = env
	out, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	runs, after := resultsOf(t, db)
	cells := map[string]int{}
	for _, r := range after {
		if !r.OK {
			t.Errorf("%s/%s/%d attempt %d: %s %s", r.Task, r.Arm, r.Rep, r.Attempt, r.ErrorKind, r.ErrorDetail)
		}
		cells[fmt.Sprintf("%s/%d", r.Arm, r.Rep)]++
	}
	want := map[string]int{}
	for _, arm := range []string{"a", "b"} {
		for rep := range 8 {
			want[fmt.Sprintf("%s/%d", arm, rep)] = 1
		}
	}
	if diff := cmp.Diff(want, cells); diff != "" {
		t.Errorf("attempts per cell (-want +got):\n%s", diff)
	}
	kept := map[string]bool{}
	for _, r := range after {
		kept[r.AttemptID] = true
	}
	for _, r := range before {
		if !kept[r.AttemptID] {
			t.Errorf("row %s committed before the kill is gone", r.AttemptID)
		}
	}
	if len(runs) != 1 || runs[0].Status != wfb.RunComplete || runs[0].FinishedAt == nil {
		t.Errorf("runs after resume: %+v; want the one run, complete", runs)
	}
	integrityOK(t, db)
}

// Ctrl-C (SIGINT to the real process) ends the run as interrupted with exit
// 130, the sessions in flight killed and recorded as cancelled, and says
// how to resume.
func TestCtrlCInterruptsTheRunRecordsCancelledCellsAndExits130(t *testing.T) {
	t.Parallel()
	slowPath(t, "an interrupt to a real wfb mid-run")
	wfbBin := buildWFB(t)
	bench, db := runFixture(t, `default:
  text: "slow"
  delay_ms: 30000
  usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`, `runs: 5
workers: 2
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	var stderr syncBuffer
	cmd := exec.Command(wfbBin, "run", bench, "--db", db)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to start", func() bool { return strings.Contains(stderr.String(), "5 cells") })
	// Both workers' sessions are in flight once two stand-in agents are
	// children of wfb (host-unsafe starts them directly).
	waitFor(t, "two sessions in flight", func() bool { return countAgents(cmd.Process.Pid) >= 2 })
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", code, err, stderr.String())
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || runs[0].FinishedAt == nil {
		t.Errorf("runs %+v, want one interrupted run", runs)
	}
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, r.ErrorKind+"/"+r.ProcessState)
	}
	if diff := cmp.Diff([]string{"cancelled/cancelled", "cancelled/cancelled"}, kinds); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr.String(), "--resume "+runs[0].ID) {
		t.Errorf("stderr does not say how to resume:\n%s", stderr.String())
	}
}

// countAgents counts the stand-in agents (wfb mock agent) that are
// descendants of the process parent (its agent-exec's children).
func countAgents(parent int) int {
	entries, _ := os.ReadDir("/proc")
	ppid := map[string]string{}
	var agents []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so read after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid[e.Name()] = fields[1]
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 2 && args[1] == "mock" && args[2] == "agent" {
			agents = append(agents, e.Name())
		}
	}
	n := 0
	for _, a := range agents {
		for p, depth := ppid[a], 0; p != "" && depth < 8; p, depth = ppid[p], depth+1 {
			if p == strconv.Itoa(parent) {
				n++
				break
			}
		}
	}
	return n
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec and a
// reader polling it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A bad bench file is refused whole, with exit 2, before the results file
// is even created: nothing starts on a half-valid experiment.
func TestRunRefusesABadBenchBeforeAnythingStarts(t *testing.T) {
	bench, db := runFixture(t, "default: {text: 5}\n", `runs: 0
provider: {mock: replies.yaml}
tasks:
  - {id: t1, workspace: ./missing, prompt: p}
arms:
  - {id: a, agent: aider}
`)
	s, out, errOut := testStreams("", nil)
	code := run(context.Background(), []string{"run", bench, "--db", db}, s)
	if code != exitBadInput {
		t.Fatalf("exit %d, want %d\n%s", code, exitBadInput, errOut)
	}
	got := strings.ReplaceAll(errOut.String(), filepath.Dir(bench), "BENCHDIR")
	checkRunGolden(t, "run_bad_bench.golden", got)
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the results file was created (%v)", err)
	}
}

func checkRunGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	golden.Check(t, path, []byte(got))
}

// Flags select cells; --resume refuses flags that would change a run's
// cells; a run id that does not exist is bad input. Each of these is exit 2
// with nothing new recorded.
func TestRunFlagsSelectCellsAndResumeKeepsTheRunsOwn(t *testing.T) {
	bench, db := runFixture(t, runOKScript, `runs: 3
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}]
`)
	s, out, errOut := testStreams("", nil)
	code := run(context.Background(), []string{"run", bench, "--db", db, "--tasks", "t2", "--arms", "b", "--runs", "2", "--label", "pick", "--format", "json"}, s)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	runs, rows := resultsOf(t, db)
	var cells []string
	for _, r := range rows {
		cells = append(cells, fmt.Sprintf("%s/%s/%d", r.Task, r.Arm, r.Rep))
	}
	if diff := cmp.Diff([]string{"t2/b/0", "t2/b/1"}, cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	var summary struct{ Rows []map[string]any }
	if err := json.Unmarshal(out.Bytes(), &summary); err != nil || len(summary.Rows) == 0 || summary.Rows[0]["arm"] != "b" {
		t.Errorf("the per-arm summary (json) is %s (%v)", out, err)
	}

	for _, args := range [][]string{
		{"run", bench, "--db", db, "--resume", runs[0].ID, "--arms", "a"},
		{"run", bench, "--db", db, "--resume", "run-nope"},
		{"run", bench, "--db", db, "--tasks", "t9"},
		{"run", bench, "--db", db, "--shard", "3/3"},
		{"run", bench, bench},
	} {
		s, _, errOut := testStreams("", nil)
		if code := run(context.Background(), args, s); code != exitBadInput {
			t.Errorf("%v: exit %d, want 2\n%s", args[3:], code, errOut)
		}
	}
	if _, after := resultsOf(t, db); len(after) != len(rows) {
		t.Errorf("refused invocations recorded %d rows", len(after)-len(rows))
	}

	// Resuming a complete run runs nothing and says so.
	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db, "--resume", runs[0].ID}, s); code != exitOK {
		t.Fatalf("resume of a complete run: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut.String(), "nothing to run") {
		t.Errorf("stderr: %s", errOut)
	}
}

// wfb demo runs its embedded bench offline and says every cell behaved: the
// README's first command must work on a fresh machine, as root too.
func TestDemoRunsTheEmbeddedBenchOffline(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "wfb.db")
	s, out, errOut := testStreams("", map[string]string{"COLUMNS": "100"})
	s.OutIsTerminal = true
	code := run(context.Background(), []string{"demo", "--db", db}, s)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Label != "demo" || runs[0].Status != wfb.RunComplete {
		t.Errorf("runs %+v", runs)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r.ErrorKind]++
	}
	// 36 cells; the 9 summarize cells outside the gateway arm are retried
	// once after their 529; code-intel's 3 summarize cells never call the
	// tool their workflow expects.
	want := map[string]int{"": 24, wfb.KindSessionError: 9, wfb.KindProviderError: 9, wfb.KindWorkflowNotUsed: 3}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rows by kind (-want +got):\n%s", diff)
	}
	// The test binary, like `go run`'s, lives in a go-build directory: the
	// closing hint must be one that works without wfb installed.
	// Its screen: what to look for, the outcome table by task × arm, and
	// the next commands (the full report is one of them, not printed).
	for _, s := range []string{"What to look for:", "│ review-auth │ baseline   │     3 │  3 │", "│ summarize   │ code-intel │     3 │  0 │ workflow-not-used ×3 │       3 │",
		"Every cell behaved as expected", "\n  go run ./cmd/wfb report --db " + db + " --by task,arm run-", "\n  go run ./cmd/wfb view --db " + db + "\n"} {
		if !strings.Contains(out.String()+errOut.String(), s) {
			t.Errorf("output lacks %q", s)
		}
	}
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, scored, err := d.Query(context.Background(), "SELECT tp, fp, fn, verdict_correct FROM scored_results_v WHERE task = 'review-auth' AND score_id IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	if len(scored) != 9 {
		t.Fatalf("%d review attempts scored, want 9", len(scored))
	}
	for _, sc := range scored {
		if diff := cmp.Diff([]any{int64(1), int64(1), int64(1), int64(1)}, sc); diff != "" {
			t.Errorf("score (-want +got):\n%s", diff)
		}
	}
}

// Three shards of a run, each in its own file, merged, hold exactly the
// cells of the same bench run unsharded, with the same outcomes: no cell is
// run twice or by no shard, and the shards' run rows combine into one.
func TestShardsMergedEqualOneUnshardedRunCellForCell(t *testing.T) {
	t.Parallel()
	bench, db := runFixture(t, runOKScript, `runs: 4
workers: 2
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws, prompt: q}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}, {id: c, agent: stand-in}]
`)
	cellsOf := func(rows []store.Result) []string {
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s/%s/%d attempt %d ok=%v", r.Task, r.Arm, r.Rep, r.Attempt, r.OK))
		}
		slices.Sort(out)
		return out
	}
	mustRun := func(args ...string) {
		t.Helper()
		s, _, errOut := testStreams("", nil)
		if code := run(context.Background(), args, s); code != exitOK {
			t.Fatalf("wfb %v: exit %d\n%s", args, code, errOut)
		}
	}
	mustRun("run", bench, "--db", db)
	_, whole := resultsOf(t, db)

	dir := t.TempDir()
	var shards []string
	for i := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.db", i))
		shards = append(shards, f)
		mustRun("run", bench, "--db", f, "--shard", fmt.Sprintf("%d/3", i), "--run-id", "nightly-1", "--label", "nightly")
	}
	merged := filepath.Join(dir, "all.db")
	mustRun(append([]string{"merge", "--into", merged}, shards...)...)
	runs, rows := resultsOf(t, merged)
	if diff := cmp.Diff(cellsOf(whole), cellsOf(rows)); diff != "" {
		t.Errorf("merged shards vs one run (-want +got):\n%s", diff)
	}
	if len(runs) != 1 || runs[0].ID != "nightly-1" || runs[0].Status != wfb.RunComplete {
		t.Errorf("merged runs: %+v; want the one run nightly-1, complete", runs)
	}

	// A shard resumes as its shard, never as the whole run.
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", shards[0], "--resume", "nightly-1"}, s); code != exitBadInput {
		t.Errorf("resume of a shard without --shard: exit %d, want 2\n%s", code, errOut)
	}
	mustRun("run", bench, "--db", shards[0], "--resume", "nightly-1", "--shard", "0/3")
	// Without a run id, shards could not be merged into one run.
	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", filepath.Join(dir, "x.db"), "--shard", "0/3"}, s); code != exitBadInput {
		t.Errorf("--shard without --run-id: exit %d, want 2\n%s", code, errOut)
	}
}

// An outage aborts the run with exit 1 and says how to continue; the cells
// it kept from starting are rows that say why.
func TestAnOutageAbortsTheRunWithExit1(t *testing.T) {
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Status: 529}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	bench, db := runFixture(t, runOKScript, `runs: 4
breaker: 2
sandbox: host-unsafe
provider: {base_url: "`+p.URL()+`", api_key_env: KEY}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	s, _, errOut := testStreams("", map[string]string{"KEY": "k"})
	if code := run(context.Background(), []string{"run", bench, "--db", db}, s); code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	if !strings.Contains(errOut.String(), "aborted: the outage breaker opened after 2 consecutive systemic failures") {
		t.Errorf("stderr: %s", errOut)
	}
	runs, rows := resultsOf(t, db)
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, r.ErrorKind)
	}
	want := []string{wfb.KindProviderError, wfb.KindProviderError, wfb.KindInfraError, wfb.KindInfraError}
	if diff := cmp.Diff(want, kinds); diff != "" || runs[0].Status != wfb.RunAborted {
		t.Errorf("status %s, kinds (-want +got):\n%s", runs[0].Status, diff)
	}
}

// TestUnboundedInputsAreRefusedWithExit2NamingTheLimit stops wfb from
// reading /dev/zero until it is killed, or spending seconds and gigabytes
// on 20,000 nested "[": the bench file, and a mock script named by run,
// session or mock serve, are refused with exit 2, the limit named, before
// the results file exists.
func TestUnboundedInputsAreRefusedWithExit2NamingTheLimit(t *testing.T) {
	nested := strings.Repeat("[", 20000)
	deepBench, db := runFixture(t, "default: {text: hi}\n", nested)
	scriptBench, _ := runFixture(t, nested, "provider: {mock: replies.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in}]\n")
	deepScript := filepath.Join(filepath.Dir(scriptBench), "replies.yaml")
	workspace := filepath.Join(filepath.Dir(scriptBench), "ws")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run /dev/zero", []string{"run", "/dev/zero"}, "/dev/zero: cannot read the bench file: it is a character device, not a regular file"},
		{"run a nested bench", []string{"run", deepBench}, "bench.yaml:1:100: the bench file nests deeper than 100 levels (the depth limit)"},
		{"run a bench naming a nested script", []string{"run", scriptBench}, "replies.yaml:1:100: the script nests deeper than 100 levels (the depth limit)"},
		{"session --mock-script /dev/zero", []string{"session", "--workspace", workspace, "--prompt", "p", "--mock-script", "/dev/zero"}, "cannot read the script: it is a character device"},
		{"session --mock-script nested", []string{"session", "--workspace", workspace, "--prompt", "p", "--mock-script", deepScript}, "the depth limit"},
		{"mock serve /dev/zero", []string{"mock", "serve", "--script", "/dev/zero"}, "/dev/zero: cannot read the script: it is a character device"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, errOut := testStreams("", nil)
			code := run(context.Background(), append(tc.args, "--db", db), s)
			if tc.args[0] == "mock" {
				code = run(context.Background(), tc.args, s)
			}
			if code != exitBadInput || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, want %d naming %q; stderr:\n%s", code, exitBadInput, tc.want, clipText(errOut.String()))
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("the results file was created (%v)", err)
			}
		})
	}
}

func clipText(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// TestTheDemoHintNamesACommandThatWorks stops the demo's closing hint from
// saying "wfb report" where no wfb is on the PATH (after `go run`, "wfb:
// not found").
func TestTheDemoHintNamesACommandThatWorks(t *testing.T) {
	dir := t.TempDir()
	installed := filepath.Join(dir, "wfb")
	if err := os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	found := func(string) (string, error) { return installed, nil }
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	for _, tc := range []struct {
		exe      string
		lookPath func(string) (string, error)
		want     string
	}{
		{installed, found, "wfb"},
		{"/tmp/go-build1234/b001/exe/wfb", notFound, "go run ./cmd/wfb"},
		{"/tmp/go-build1234/b001/exe/wfb", found, "go run ./cmd/wfb"}, // another wfb on the PATH
		{"/opt/tools/wfb", notFound, "/opt/tools/wfb"},
	} {
		if got := hintCommand(tc.exe, tc.lookPath); got != tc.want {
			t.Errorf("hintCommand(%s) = %q, want %q", tc.exe, got, tc.want)
		}
	}
}

// The manual's example of two workflows (docs/tools-and-skills.md) runs
// as it stands: the arm given an MCP server, a skill and an instruction
// file is seen using them, the baseline is not, and the SQL the manual
// shows answers so.
func TestTheToolsExampleRunsAndShowsItsEvidence(t *testing.T) {
	db := filepath.Join(t.TempDir(), "wfb.db")
	s, _, errOut := testStreams("", nil)
	code := run(context.Background(), []string{"run", "../../examples/tools/bench.yaml", "--db", db, "--sandbox", "host-unsafe", "--runs", "1"}, s)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, rows, err := d.Query(context.Background(), "SELECT arm, tool, attempts_using, attempts_measured, calls FROM arm_tools_v ORDER BY arm, tool")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"baseline", "Write", int64(1), int64(1), int64(1)},
		{"code-intel", "Write", int64(1), int64(1), int64(1)},
		{"code-intel", "mcp__code__find_symbol", int64(1), int64(1), int64(1)},
		{"code-intel", "skill:small-fixes", int64(1), int64(1), int64(1)},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("arm_tools_v (-want +got):\n%s", diff)
	}
}

// TestARunawayRiskAdvisesWhatTheArmsAgentCanDo stops the warning of a mock
// script that may never let a real agent end from advising a turn limit to
// an agent that has none (Codex, opencode: a bench that sets one is
// refused).
func TestARunawayRiskAdvisesWhatTheArmsAgentCanDo(t *testing.T) {
	script := filepath.Join(t.TempDir(), "loop.yaml")
	if err := os.WriteFile(script, []byte("default: {tools: [{name: Glob, input: {pattern: '*'}}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &bench.Bench{
		Provider: bench.Provider{Mock: script},
		Tasks:    []bench.Task{{ID: "t"}},
		Arms:     []bench.Arm{{ID: "c", Agent: bench.AgentClaude}, {ID: "o", Agent: bench.AgentOpencode}, {ID: "q", Agent: bench.AgentQwen, MaxTurns: 3}},
	}
	got := runawayRisks(b, 0)
	if len(got) != 2 || !strings.Contains(got[0], "set max_turns on the arm") || !strings.Contains(got[1], "opencode has no turn limit: end the script's default reply without tools") {
		t.Errorf("warnings %q", got)
	}
}
