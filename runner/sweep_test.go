package runner

// Sweeps end to end: a real bench file, a real mock provider per cell over
// HTTP, the stand-in agent as a real subprocess (this test binary), the real
// sandbox, and rows in a real SQLite file.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// benchRig is a bench directory any uid can traverse, with one workspace
// (ws/) and the mock scripts a test writes, and a results file.
type benchRig struct {
	t   *testing.T
	dir string
	db  *store.DB
	env map[string]string
}

func newBenchRig(t *testing.T) *benchRig {
	t.Helper()
	dir := openTempDir(t)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &benchRig{t: t, dir: dir, db: db, env: map[string]string{}}
}

// file writes a file of the bench directory.
func (r *benchRig) file(name, text string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// checkScript validates a mock script a bench names, as wfb run does.
func checkScript(path string, data []byte) error {
	_, err := provider.ParseScript(path, data)
	return err
}

func (r *benchRig) bench(text string) *bench.Bench {
	r.t.Helper()
	b, err := bench.Load(r.file("bench.yaml", text), checkScript)
	if err != nil {
		r.t.Fatalf("bench: %v", err)
	}
	return b
}

// opts are the sweep options a `wfb run` would pass, with this test binary
// as the stand-in agent.
func (r *benchRig) opts(b *bench.Bench) SweepOptions {
	return SweepOptions{
		Bench: b, DB: r.db, Harness: "test",
		Getenv:     func(k string) string { return r.env[k] },
		StartMock:  r.startMock,
		StartMeter: StartTestMeter,
		StandInBin: testBinary(r.t), StandInArgs: []string{"mock", "agent"},
		AgentEnv: map[string]string{"WFB_TEST_AGENT": "1"},
		TempDir:  r.dir,
	}
}

func (r *benchRig) startMock(path string) (string, func(), error) {
	sc, err := provider.LoadScript(path)
	if err != nil {
		return "", nil, err
	}
	return provider.Serving(sc)
}

// sweep runs a sweep to its end and returns its summary and rows.
func (r *benchRig) sweep(ctx context.Context, o SweepOptions) (Summary, []store.Result) {
	r.t.Helper()
	sw, err := NewSweep(ctx, o)
	if err != nil {
		r.t.Fatalf("NewSweep: %v", err)
	}
	defer sw.Close()
	sum, err := sw.Run(ctx)
	if err != nil {
		r.t.Fatalf("Run: %v", err)
	}
	rows, err := r.db.Results(context.Background(), sum.RunID)
	if err != nil {
		r.t.Fatal(err)
	}
	return sum, rows
}

func (r *benchRig) run(id string) store.Run {
	r.t.Helper()
	run, err := r.db.Run(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return run
}

// cellOutcome is a row reduced to what a test asserts on.
type cellOutcome struct {
	Cell    string
	Attempt int
	Kind    string
	RetryOf int // the attempt number it retries; 0 for none
}

func cellOutcomes(rows []store.Result) []cellOutcome {
	num := map[string]int{}
	for _, r := range rows {
		num[r.AttemptID] = r.Attempt
	}
	var out []cellOutcome
	for _, r := range rows {
		out = append(out, cellOutcome{Cell: fmt.Sprintf("%s/%s/%d", r.Task, r.Arm, r.Rep), Attempt: r.Attempt, Kind: r.ErrorKind, RetryOf: num[r.RetryOf]})
	}
	slices.SortFunc(out, func(a, b cellOutcome) int {
		if c := strings.Compare(a.Cell, b.Cell); c != 0 {
			return c
		}
		return a.Attempt - b.Attempt
	})
	return out
}

const okScript = `default:
  text: "done"
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// Every cell of a bench gets exactly one row, committed as it ends, and the
// run records its fingerprint and ends complete: the basic promise that a
// sweep neither drops nor doubles a cell.
func TestASweepRecordsEveryCellOnceAndCompletesTheRun(t *testing.T) {
	r := newBenchRig(t)
	r.file("ok.yaml", okScript)
	b := r.bench(`runs: 2
workers: 2
sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks:
  - {id: t1, workspace: ws, prompt: "review the change"}
  - {id: t2, workspace: ws, prompt: "review it again"}
arms:
  - {id: a, agent: stand-in}
  - {id: b, agent: stand-in, prompt_prefix: "Be thorough. "}
`)
	o := r.opts(b)
	o.Label = "nightly"
	sum, rows := r.sweep(context.Background(), o)
	var want []cellOutcome
	for _, c := range []string{"t1/a/0", "t1/a/1", "t1/b/0", "t1/b/1", "t2/a/0", "t2/a/1", "t2/b/0", "t2/b/1"} {
		want = append(want, cellOutcome{Cell: c, Attempt: 1})
	}
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	run := r.run(sum.RunID)
	if run.Status != wfb.RunComplete || run.FinishedAt == nil || run.Label != "nightly" || run.Kind != "run" {
		t.Errorf("run = %+v, want complete, finished, labelled nightly", run)
	}
	if !strings.HasPrefix(run.Fingerprint, "sha256:") || !strings.Contains(run.Config, `"bench_sha256":"`+b.Digest+`"`) {
		t.Errorf("fingerprint %q / config %s do not record the bench digest", run.Fingerprint, run.Config)
	}
	if sum.Status != wfb.RunComplete || sum.OK != 8 || sum.Failed != 0 || sum.Attempts != 8 {
		t.Errorf("summary = %+v", sum)
	}
}

// A cell whose agent cannot even start is a row of its own; the cells
// beside it, running at the same time, keep theirs.
func TestAFailingCellNeverLosesASiblingsRow(t *testing.T) {
	r := newBenchRig(t)
	r.file("ok.yaml", okScript)
	b := r.bench(`runs: 3
workers: 2
breaker: 0
sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks:
  - {id: t1, workspace: ws, prompt: "p"}
arms:
  - {id: good, agent: stand-in}
  - {id: broken, agent: claude, agent_bin: ./no-such-claude}
`)
	sum, rows := r.sweep(context.Background(), r.opts(b))
	var want []cellOutcome
	for rep := range 3 {
		want = append(want, cellOutcome{Cell: fmt.Sprintf("t1/broken/%d", rep), Attempt: 1, Kind: wfb.KindSpawnFailure})
	}
	for rep := range 3 {
		want = append(want, cellOutcome{Cell: fmt.Sprintf("t1/good/%d", rep), Attempt: 1})
	}
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if sum.Status != wfb.RunComplete {
		t.Errorf("status %s, want complete: failed cells are measurements", sum.Status)
	}
}

// A retry is a new attempt linked to the one it retries, never an
// overwrite; the per-kind count and the run's budget both bind. This stops
// retries from hiding the failures they retried (a 529 rate that vanishes
// from the results because the retry succeeded).
func TestRetriesAreNewAttemptsLinkedToTheOneTheyRetry(t *testing.T) {
	r := newBenchRig(t)
	// Each cell's own provider: two 529s, then answers.
	r.file("flaky.yaml", `replies:
  - {status: 529}
  - {status: 529}
`+okScript)
	tests := []struct {
		name    string
		retries string
		want    []cellOutcome
	}{
		{"enough retries", "retries: {provider-error: 2}", []cellOutcome{
			{"t1/a/0", 1, wfb.KindProviderError, 0}, {"t1/a/0", 2, wfb.KindProviderError, 1}, {"t1/a/0", 3, "", 2},
			{"t1/a/1", 1, wfb.KindProviderError, 0}, {"t1/a/1", 2, wfb.KindProviderError, 1}, {"t1/a/1", 3, "", 2},
		}},
		{"per-kind limit", "retries: {provider-error: 1}", []cellOutcome{
			{"t1/a/0", 1, wfb.KindProviderError, 0}, {"t1/a/0", 2, wfb.KindProviderError, 1},
			{"t1/a/1", 1, wfb.KindProviderError, 0}, {"t1/a/1", 2, wfb.KindProviderError, 1},
		}},
		{"run budget", "retries: {provider-error: 2}\nretry_budget: 2", []cellOutcome{
			{"t1/a/0", 1, wfb.KindProviderError, 0}, {"t1/a/0", 2, wfb.KindProviderError, 1}, {"t1/a/0", 3, "", 2},
			{"t1/a/1", 1, wfb.KindProviderError, 0},
		}},
		{"kind not retried", "retries: {timeout: 3}", []cellOutcome{
			{"t1/a/0", 1, wfb.KindProviderError, 0},
			{"t1/a/1", 1, wfb.KindProviderError, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := r.bench(`runs: 2
workers: 1
breaker: 0
sandbox: host-unsafe
` + tt.retries + `
provider: {mock: flaky.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
			sum, rows := r.sweep(context.Background(), r.opts(b))
			if diff := cmp.Diff(tt.want, cellOutcomes(rows)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if sum.Status != wfb.RunComplete {
				t.Errorf("status %s", sum.Status)
			}
		})
	}
}

// After K systemic failures in a row the breaker stops starting cells,
// records each one left as not run (with the reason), and aborts the run;
// --resume later runs exactly those, linked to their not-run rows. This
// stops an outage from burning a night's budget on errors, and from
// leaving cells silently missing.
func TestTheOutageBreakerStopsTheRunAndResumeRunsWhatWasLeft(t *testing.T) {
	r := newBenchRig(t)
	// One provider for the whole run, so the outage spans cells: three 529s,
	// then it recovers. The base URL is in the bench; the key comes from
	// the environment.
	p, err := provider.Start(&provider.Script{
		Replies: []provider.Reply{{Status: 529}, {Status: 529}, {Status: 529}},
		Default: &provider.Reply{Text: "ok", Usage: provider.FullUsage(10, 5, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r.env["TEST_KEY"] = "sk-test-not-a-real-key"
	b := r.bench(`runs: 6
workers: 1
breaker: 3
sandbox: host-unsafe
provider: {base_url: "` + p.URL() + `", api_key_env: TEST_KEY}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	sum, rows := r.sweep(context.Background(), r.opts(b))
	want := []cellOutcome{
		{"t1/a/0", 1, wfb.KindProviderError, 0}, {"t1/a/1", 1, wfb.KindProviderError, 0}, {"t1/a/2", 1, wfb.KindProviderError, 0},
		{"t1/a/3", 1, wfb.KindInfraError, 0}, {"t1/a/4", 1, wfb.KindInfraError, 0}, {"t1/a/5", 1, wfb.KindInfraError, 0},
	}
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	for _, row := range rows[3:] {
		if !strings.HasPrefix(row.ErrorDetail, "not run: the outage breaker opened after 3 consecutive systemic failures (the last: provider-error") ||
			row.ProcessState != wfb.StateNotStarted {
			t.Errorf("not-run row: %s %q", row.ProcessState, row.ErrorDetail)
		}
	}
	if run := r.run(sum.RunID); sum.Status != wfb.RunAborted || run.Status != wfb.RunAborted || sum.Breaker == "" {
		t.Errorf("summary %+v, run status %s: want aborted with the breaker's reason", sum, run.Status)
	}

	o := r.opts(b)
	o.Resume = sum.RunID
	sum2, rows := r.sweep(context.Background(), o)
	want = append(want[:3],
		cellOutcome{"t1/a/3", 1, wfb.KindInfraError, 0}, cellOutcome{"t1/a/3", 2, "", 1},
		cellOutcome{"t1/a/4", 1, wfb.KindInfraError, 0}, cellOutcome{"t1/a/4", 2, "", 1},
		cellOutcome{"t1/a/5", 1, wfb.KindInfraError, 0}, cellOutcome{"t1/a/5", 2, "", 1})
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		t.Errorf("rows after resume (-want +got):\n%s", diff)
	}
	if sum2.RunID != sum.RunID || sum2.Skipped != 3 || r.run(sum.RunID).Status != wfb.RunComplete {
		t.Errorf("resume summary %+v, status %s: want the same run, 3 skipped, complete", sum2, r.run(sum.RunID).Status)
	}
	// The key reached the agent, and nothing else.
	for _, req := range p.MessageRequests() {
		if got := req.Header.Get("X-Api-Key"); got != "[REDACTED]" {
			t.Errorf("provider saw x-api-key %q, want the (redacted) key", got)
		}
	}
	for _, row := range rows {
		if strings.Contains(row.ErrorDetail+row.StdoutTail+row.StderrTail+row.ResultEvent, "sk-test") {
			t.Errorf("attempt %s stores the API key", row.AttemptID)
		}
	}
}

// A resume of a run whose bench moved is refused, naming each thing that
// changed: comparing cells measured against different inputs is the bug.
func TestResumeRefusesAChangedBenchAndSaysWhatChanged(t *testing.T) {
	r := newBenchRig(t)
	r.file("ok.yaml", okScript)
	text := `sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`
	sum, _ := r.sweep(context.Background(), r.opts(r.bench(text)))

	r.file("ok.yaml", okScript+"# edited\n")
	r.file("ws/new.txt", "x")
	o := r.opts(r.bench(text + "# edited too\n"))
	o.Resume, o.Harness = sum.RunID, "test-2"
	_, err := NewSweep(context.Background(), o)
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("NewSweep = %v, want an InputError", err)
	}
	var named []string
	for _, p := range ie.Problems[1:] {
		named = append(named, strings.SplitN(strings.TrimSpace(p), ":", 2)[0])
	}
	want := []string{"bench file", "mock script ok.yaml", "workspace of task t1", "agent version of arm a", "harness"}
	if diff := cmp.Diff(want, named); diff != "" {
		t.Errorf("changes named (-want +got):\n%s\nfull error:\n%v", diff, err)
	}

	// Unknown run: refused too.
	o.Resume = "run-nope"
	if _, err := NewSweep(context.Background(), o); !errors.As(err, &ie) {
		t.Errorf("resume of an unknown run = %v, want an InputError", err)
	}
}

// setup runs before the agent and verify after it, in the cell's own copy;
// a failing setup is an infra-error row with the output (the agent never
// runs), a failing verify turns an ok session into verify-failed. verify
// runs what the agent left, so it runs with the agent's identity, never
// root's. The arm's
// environment reaches the agent, which can edit its copy as the session
// uid; the task's directory itself is never touched.
func TestSetupAndVerifyBracketTheAgentInTheCellsOwnCopy(t *testing.T) {
	r := newBenchRig(t)
	r.env["SOURCE_VALUE"] = "from-the-environment"
	r.file("edit.yaml", `default:
  tools:
    - name: Bash
      input: {command: "echo \"$MY_VALUE\" > out.txt"}
  usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`)
	b := r.bench(`sandbox: host-unsafe
breaker: 0
provider: {mock: edit.yaml}
tasks:
  - {id: ok, workspace: ws, prompt: p, setup: "echo ready > setup.txt", verify: "grep -q from-the-environment out.txt && grep -q ready setup.txt && test $(id -u) = $(stat -c %u out.txt) && ` + sessionUIDCheck() + `"}
  - {id: bad-verify, workspace: ws, prompt: p, verify: "echo expected 42; exit 3"}
  - {id: bad-setup, workspace: ws, prompt: p, setup: "echo cannot install deps >&2; exit 1"}
arms:
  - {id: a, agent: stand-in, env: {MY_VALUE: {from_env: SOURCE_VALUE}}}
`)
	_, rows := r.sweep(context.Background(), r.opts(b))
	got := map[string]store.Result{}
	for _, row := range rows {
		got[row.Task] = row
	}
	if row := got["ok"]; !row.OK {
		t.Errorf("ok task: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	if row := got["bad-verify"]; row.ErrorKind != wfb.KindVerifyFailed || !strings.Contains(row.ErrorDetail, `exited 3: expected 42`) || row.InputTokens == nil {
		t.Errorf("bad-verify: %s %q (tokens %v): want verify-failed with the output and the session's measurements", row.ErrorKind, row.ErrorDetail, row.InputTokens)
	}
	if row := got["bad-setup"]; row.ErrorKind != wfb.KindInfraError || !strings.Contains(row.ErrorDetail, "cannot install deps") || row.ProcessState != wfb.StateNotStarted {
		t.Errorf("bad-setup: %s %s %q: want infra-error, not started, with the output", row.ErrorKind, row.ProcessState, row.ErrorDetail)
	}
	if entries, _ := os.ReadDir(filepath.Join(r.dir, "ws")); len(entries) != 1 {
		t.Errorf("the task's own directory changed: %v", entries)
	}
}

// sessionUIDCheck is a shell test that the uid running it is a session's:
// one of the unprivileged pool when the test runs as root, else the test's
// own.
func sessionUIDCheck() string {
	if os.Geteuid() == 0 {
		return fmt.Sprintf("test $(id -u) -le %d -a $(id -u) -gt %d", sandbox.DefaultSessionID, sandbox.DefaultSessionID-sandbox.DefaultUIDPool)
	}
	return "test $(id -u) = " + strconv.Itoa(os.Geteuid())
}

// A git workspace is cloned at its pinned commit, whatever the branch has
// moved to since, into copies that share no objects or remote with the
// source; a ref that names no commit stops the run before it starts.
func TestAGitWorkspaceIsAPrivateCopyAtThePinnedCommit(t *testing.T) {
	r := newBenchRig(t)
	repo := filepath.Join(r.dir, "repo")
	gitT := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = []string{"PATH=" + DefaultPath, "HOME=" + r.dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.Mkdir(repo, 0o755)
	gitT("init", "-q", "-b", "main")
	r.file("repo/f.txt", "pinned\n")
	gitT("add", "f.txt")
	gitT("commit", "-q", "-m", "one")
	pinned := gitT("rev-parse", "HEAD")
	r.file("repo/f.txt", "moved on\n")
	gitT("commit", "-q", "-am", "two")

	// The agent runs git in its copy (as the session uid when wfb is root).
	r.file("git.yaml", `default:
  tools:
    - name: Bash
      input: {command: "git rev-parse HEAD > head.txt 2>&1"}
  usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`)
	b := r.bench(`sandbox: host-unsafe
provider: {mock: git.yaml}
tasks:
  - id: g
    workspace: {git: repo, ref: ` + pinned[:10] + `}
    prompt: p
    verify: >-
      grep -q pinned f.txt &&
      grep -qx ` + pinned + ` head.txt &&
      test "$(git rev-parse HEAD)" = ` + pinned + ` &&
      test -z "$(git remote)" &&
      test ! -e .git/objects/info/alternates
arms: [{id: a, agent: stand-in}]
`)
	sum, rows := r.sweep(context.Background(), r.opts(b))
	if len(rows) != 1 || !rows[0].OK {
		t.Fatalf("row: %s %s", rows[0].ErrorKind, rows[0].ErrorDetail)
	}
	if !strings.Contains(r.run(sum.RunID).Config, `"g":"git `+pinned+`"`) {
		t.Errorf("config does not record the resolved commit: %s", r.run(sum.RunID).Config)
	}

	bad := r.bench(strings.Replace(benchText(t, b), pinned[:10], "no-such-ref", 1))
	_, err := NewSweep(context.Background(), r.opts(bad))
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `ref "no-such-ref" does not name a commit`) {
		t.Errorf("NewSweep with a bad ref = %v, want an InputError naming the ref", err)
	}
}

// benchText returns the bench file's text.
func benchText(t *testing.T, b *bench.Bench) string {
	t.Helper()
	data, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Variables an arm names but the environment lacks stop the run before
// anything is recorded: a run with half its arms missing a token would
// measure the token's absence.
func TestMissingEnvironmentStopsTheRunBeforeItStarts(t *testing.T) {
	r := newBenchRig(t)
	b := r.bench(`sandbox: host-unsafe
provider: {base_url: "http://127.0.0.1:9", api_key_env: NOT_SET_KEY}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in, env: [GH_TOKEN]}]
`)
	_, err := NewSweep(context.Background(), r.opts(b))
	want := &InputError{Problems: []string{
		"provider http://127.0.0.1:9 needs its API key in $NOT_SET_KEY, which is not set",
		"arm a: env GH_TOKEN comes from $GH_TOKEN, which is not set",
	}}
	var got *InputError
	if !errors.As(err, &got) {
		t.Fatalf("NewSweep = %v, want an InputError", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	runs, _ := r.db.Runs(context.Background())
	if len(runs) != 0 {
		t.Errorf("%d runs recorded, want none", len(runs))
	}
}

// Ctrl-C kills the sessions in flight and records them as cancelled (the
// row is written although the context is gone); cells not started get no
// row; the run is interrupted; --resume runs every cell without an ok
// attempt, a cancelled one as attempt 2 linked to it.
func TestACancelledSweepRecordsTheCellsInFlightAndResumes(t *testing.T) {
	r := newBenchRig(t)
	// One provider for the run: the first two requests hang until the
	// client goes away, then it answers.
	p, err := provider.Start(&provider.Script{
		Replies: []provider.Reply{{Hang: true}, {Hang: true}},
		Default: &provider.Reply{Text: "ok", Usage: provider.FullUsage(10, 5, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r.env["TEST_KEY"] = "k"
	b := r.bench(`runs: 4
workers: 2
sandbox: host-unsafe
provider: {base_url: "` + p.URL() + `", api_key_env: TEST_KEY}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sw, err := NewSweep(ctx, r.opts(b))
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	done := make(chan Summary)
	go func() {
		sum, err := sw.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(p.MessageRequests()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the two workers' sessions never reached the provider")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	sum := <-done
	sw.Close() // it holds the run until closed: the resume below is another writer of it
	rows, _ := r.db.Results(context.Background(), sum.RunID)
	want := []cellOutcome{{"t1/a/0", 1, wfb.KindCancelled, 0}, {"t1/a/1", 1, wfb.KindCancelled, 0}}
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		for _, row := range rows {
			t.Logf("%s rep %d: %s %s %q stderr %q", row.AttemptID, row.Rep, row.ProcessState, row.ErrorKind, row.ErrorDetail, row.StderrTail)
		}
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	if sum.Status != wfb.RunInterrupted || r.run(sum.RunID).Status != wfb.RunInterrupted {
		t.Errorf("status %s / %s, want interrupted", sum.Status, r.run(sum.RunID).Status)
	}

	o := r.opts(b)
	o.Resume = sum.RunID
	sum2, rows := r.sweep(context.Background(), o)
	want = []cellOutcome{
		{"t1/a/0", 1, wfb.KindCancelled, 0}, {"t1/a/0", 2, "", 1},
		{"t1/a/1", 1, wfb.KindCancelled, 0}, {"t1/a/1", 2, "", 1},
		{"t1/a/2", 1, "", 0}, {"t1/a/3", 1, "", 0},
	}
	if diff := cmp.Diff(want, cellOutcomes(rows)); diff != "" {
		t.Errorf("rows after resume (-want +got):\n%s", diff)
	}
	if sum2.Status != wfb.RunComplete || r.run(sum.RunID).Status != wfb.RunComplete {
		t.Errorf("resumed status %s, want complete", sum2.Status)
	}
}

// Two processes resuming one run at once would each take the other's cells
// in flight for cells not yet run, and run them twice. While one sweep
// holds a run, another is refused; once it lets go, the run can be resumed.
func TestOnlyOneSweepHoldsARunAtATime(t *testing.T) {
	r := newBenchRig(t)
	r.file("ok.yaml", okScript)
	b := r.bench(`runs: 1
sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	sum, _ := r.sweep(context.Background(), r.opts(b))
	o := r.opts(b)
	o.Resume = sum.RunID
	first, err := NewSweep(context.Background(), o)
	if err != nil {
		t.Fatalf("first resume: %v", err)
	}
	_, err = NewSweep(context.Background(), o)
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "is being recorded") {
		first.Close()
		t.Fatalf("a second sweep of the same run: %v, want refused as held (store.ErrInUse)", err)
	}
	// A rescore writes rows of the run too.
	if _, err := Rescore(context.Background(), o.DB, sum.RunID, b); !errors.Is(err, store.ErrInUse) {
		t.Errorf("a rescore of the run held: %v, want store.ErrInUse", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := NewSweep(context.Background(), o)
	if err != nil {
		t.Fatalf("resume after the first let go: %v", err)
	}
	again.Close()
}
