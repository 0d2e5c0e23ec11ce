package e2e_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/runner/meterstore"

	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// The run of the tests below: a bug fix whose agent rewrites sum.js (a
// Write, atomic temp+rename inside the workspace; verify then checks the
// fix landed), and a review whose agent writes its artifact and tries to
// tamper with the code under review. The review's workspace holds a file
// only its owner may read: the session can read it only because wfb run
// shares a review's copy with the session's group (read, never write).
const sweepBench = `runs: 1
workers: 2
timeout: 60s
sandbox: auto
provider: {mock: fix.yaml}
tasks:
  - id: fix
    workspace: ws-fix
    prompt: "sum.js subtracts instead of adding. Fix it."
    verify: grep -q "return a + b" sum.js && ! ls -A | grep -q wfb-preflight
    provider: {mock: fix.yaml}
  - id: review
    workspace: ws-review
    prompt: "Review auth.go."
    review: true
    provider: {mock: review.yaml}
arms:
  - {id: stand-in, agent: stand-in, model: stand-in, max_turns: 2}
`

const fixScript = `replies:
  - text: fixing
    tools:
      - name: Write
        input:
          file_path: sum.js
          content: |
            export function sum(a, b) {
              return a + b;
            }
    usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
default: {text: fixed, usage: {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}}
`

// reviewTampers are the review's tool calls after its artifact: each must
// fail.
var reviewTampers = []string{"Write auth.go", "echo tampered > auth.go", "chmod u+w auth.go . && echo tampered > auth.go", "rm auth.go", "echo planted > planted.txt"}

const reviewScript = `replies:
  - text: reviewing
    tools:
      - name: Write
        input: {file_path: "{{review_output}}", content: '{"schema_version": 1, "verdict": "approve", "findings": []}'}
      - name: Write
        input: {file_path: auth.go, content: "package auth // tampered"}
      - {name: Bash, input: {command: "echo tampered > auth.go"}}
      - {name: Bash, input: {command: "chmod u+w auth.go . && echo tampered > auth.go"}}
      - {name: Bash, input: {command: "rm auth.go"}}
      - {name: Bash, input: {command: "echo planted > planted.txt"}}
    usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
default: {text: done, usage: {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}}
`

// sweepRig is a bench directory any uid can traverse, its results file, and
// the mock providers its cells started, by script.
type sweepRig struct {
	dir string
	db  *store.DB

	mu        sync.Mutex
	providers map[string][]*provider.Provider
}

func newSweepRig(t *testing.T, bench string, scripts map[string]string) *sweepRig {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-e2e-sweep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bench.yaml":          bench,
		"ws-fix/sum.js":       "export function sum(a, b) {\n  return a - b;\n}\n",
		"ws-review/auth.go":   "package auth\n\nfunc Check(stored, given string) bool { return stored == given }\n",
		"ws-review/notes.txt": "private to the task's owner\n",
	}
	for name, text := range scripts {
		files[name] = text
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, mode := range map[string]os.FileMode{dir: 0o755, filepath.Join(dir, "ws-fix"): 0o755, filepath.Join(dir, "ws-review"): 0o755, filepath.Join(dir, "ws-review", "notes.txt"): 0o600} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &sweepRig{dir: dir, db: db, providers: map[string][]*provider.Provider{}}
}

// opts are what `wfb run` would pass, with this test binary as the
// stand-in agent.
func (r *sweepRig) opts(t *testing.T, backend string) runner.SweepOptions {
	t.Helper()
	b, err := bench.Load(filepath.Join(r.dir, "bench.yaml"), func(path string, data []byte) error {
		_, err := provider.ParseScript(path, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return runner.SweepOptions{
		Bench: b, DB: r.db, Harness: "e2e", Selection: bench.Selection{Sandbox: backend},
		Getenv: func(string) string { return "" }, StartMock: r.startMock,
		StartMeter: func(db *store.DB) (runner.Meter, error) { return meterstore.Start(db) },
		StandInBin: self, StandInArgs: []string{"mock", "agent"},
		AgentEnv: map[string]string{"WFB_TEST_AGENT": "1"}, TempDir: r.dir,
	}
}

func (r *sweepRig) startMock(path string) (string, func(), error) {
	sc, err := provider.LoadScript(path)
	if err != nil {
		return "", nil, err
	}
	p, err := provider.Start(sc)
	if err != nil {
		return "", nil, err
	}
	r.mu.Lock()
	r.providers[filepath.Base(path)] = append(r.providers[filepath.Base(path)], p)
	r.mu.Unlock()
	return p.URL(), func() { p.Close() }, nil
}

func (r *sweepRig) provider(t *testing.T, script string) *provider.Provider {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if ps := r.providers[script]; len(ps) == 1 {
		return ps[0]
	}
	t.Fatalf("%d providers started for %s; want 1", len(r.providers[script]), script)
	return nil
}

func rowsByTask(t *testing.T, db *store.DB, runID string) map[string]store.Result {
	t.Helper()
	rows, err := db.Results(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Result{}
	for _, row := range rows {
		if _, dup := out[row.Task]; dup {
			t.Errorf("task %s has more than one row", row.Task)
		}
		out[row.Task] = row
	}
	return out
}

// firstUsable is the backend doctor finds strongest on this machine.
func firstUsable(t *testing.T) string {
	t.Helper()
	for _, s := range sandboxtest.Statuses(t) {
		if s.Usable {
			return s.Backend
		}
	}
	t.Fatal("no backend usable on this machine")
	return ""
}

// TestABugFixCellEditsItsWorkspaceWhileAReviewInTheSameRunCannot stops the
// bug that left every kernel backend unusable for a bug-fix task (the
// workspace was bound read-only for every session, so auto's choice, bwrap,
// failed every fix), without giving up a review's boundary: in one run, on
// each backend, the fix lands (verify, run after the agent, finds it) and
// the review's tampering fails with its workspace unchanged (the runner's
// digest would mark the row workspace-modified). Under auto, the run's
// backend is resolved once, before any cell, and every row names it.
func TestABugFixCellEditsItsWorkspaceWhileAReviewInTheSameRunCannot(t *testing.T) {
	for _, backend := range append(slices.Clone(sandbox.Strength), sandbox.Auto) {
		t.Run(backend, func(t *testing.T) {
			if backend != sandbox.Bwrap && backend != sandbox.Auto {
				gate.RequireRoot(t, "as non-root the session owns the review's copy: "+backend+" cannot stop chmod (see the sandbox package doc); this test is about a root wfb")
			}
			want := backend
			if backend == sandbox.Auto {
				want = firstUsable(t)
			} else {
				requireBackend(t, backend)
			}
			r := newSweepRig(t, sweepBench, map[string]string{"fix.yaml": fixScript, "review.yaml": reviewScript})
			ctx := context.Background()
			sw, err := runner.NewSweep(ctx, r.opts(t, backend))
			if err != nil {
				t.Fatalf("NewSweep: %v", err)
			}
			defer sw.Close()
			if got, _ := sw.Sandbox(); got != want {
				t.Errorf("the sweep resolved %s to %q, want %q", backend, got, want)
			}
			sum, err := sw.Run(ctx)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if sum.Status != wfb.RunComplete {
				t.Errorf("run %s, want complete", sum.Status)
			}
			rows := rowsByTask(t, r.db, sum.RunID)
			for _, task := range []string{"fix", "review"} {
				row, ok := rows[task]
				switch {
				case !ok:
					t.Errorf("no row for %s", task)
				case !row.OK:
					t.Errorf("%s: %s: %s", task, row.ErrorKind, row.ErrorDetail)
				}
				if row.Sandbox != want {
					t.Errorf("%s row sandbox = %q, want %q (the backend resolved once for the run)", task, row.Sandbox, want)
				}
			}
			if row := rows["review"]; row.Verdict != "approve" {
				t.Errorf("review verdict %q", row.Verdict)
			}

			fix := toolResults(t, r.provider(t, "fix.yaml"))
			if len(fix) != 1 || fix[0]["is_error"] == true {
				t.Errorf("the fix's Write failed: %v", fix)
			}
			review := toolResults(t, r.provider(t, "review.yaml"))
			if len(review) != 1+len(reviewTampers) {
				t.Fatalf("%d tool results for the review, want %d", len(review), 1+len(reviewTampers))
			}
			if review[0]["is_error"] == true {
				t.Errorf("the review's artifact write failed: %v", review[0]["content"])
			}
			for i, what := range reviewTampers {
				if review[i+1]["is_error"] != true {
					t.Errorf("the review's %q succeeded: %v", what, review[i+1]["content"])
				}
			}
		})
	}
}

// TestARunRefusesABackendThatFailsPreflightBeforeAnySession stops a run that
// asked for a backend this machine cannot give from starting anyway (with a
// weaker one, or with a sandbox-refused row per cell that a later resume
// would count as final): the sweep is refused before anything is recorded,
// naming the backend and the reason, and no provider is ever started.
func TestARunRefusesABackendThatFailsPreflightBeforeAnySession(t *testing.T) {
	tests := []struct {
		name, sandbox string
		requirePID    bool
		want          []string
	}{
		{"named bwrap, not installed", sandbox.Bwrap, false, []string{"sandbox bwrap refused before any session started", "bubblewrap is not installed"}},
		{"named landlock, PID namespace required", sandbox.Landlock, true, []string{"sandbox landlock refused before any session started", "require_pid_namespace"}},
		{"auto, PID namespace required, no bwrap", sandbox.Auto, true, []string{"sandbox auto refused before any session started", "bwrap: bubblewrap is not installed", "host-unsafe: host-unsafe runs the session in wfb's own PID namespace"}},
		{"unknown name", "docker", false, []string{`sandbox docker refused before any session started: unknown backend "docker"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bench := sweepBench
			if tc.requirePID {
				bench = "require_pid_namespace: true\n" + bench
			}
			r := newSweepRig(t, bench, map[string]string{"fix.yaml": fixScript, "review.yaml": reviewScript})
			// A PATH with no bwrap on it.
			empty := t.TempDir()
			t.Setenv("PATH", empty)
			_, err := runner.NewSweep(context.Background(), r.opts(t, tc.sandbox))
			var input *runner.InputError
			if !errors.As(err, &input) {
				t.Fatalf("NewSweep error %T %v; want an *InputError (wfb run: exit 2)", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			runs, err := r.db.Runs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 0 {
				t.Errorf("%d runs recorded; want none", len(runs))
			}
			if len(r.providers) != 0 {
				t.Errorf("providers started for %v", r.providers)
			}
		})
	}
}

// TestAResumedAutoRunKeepsTheBackendItStartedWith stops a resume from
// re-resolving auto to another backend than the run's earlier sessions
// had, which would mix backends in one run's comparison: a run that
// started under landlock (bwrap was not on PATH) and was interrupted
// continues under landlock once bwrap is back.
func TestAResumedAutoRunKeepsTheBackendItStartedWith(t *testing.T) {
	gate.RequireRoot(t, "the review cell under landlock needs a root wfb (see the first test)")
	requireBackend(t, sandbox.Bwrap)
	requireBackend(t, sandbox.Landlock)
	hang := "replies:\n  - {hang: true}\n"
	bench := strings.Replace(sweepBench, "workers: 2", "workers: 1", 1)
	bench = strings.Replace(bench, "tasks:\n", "tasks:\n  - {id: slow, workspace: ws-fix, prompt: wait, provider: {mock: hang.yaml}}\n", 1)
	r := newSweepRig(t, bench, map[string]string{"fix.yaml": fixScript, "review.yaml": reviewScript, "hang.yaml": hang})

	pathWithBwrap := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir()) // no bwrap; nothing else of the run looks on PATH
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sw, err := runner.NewSweep(ctx, r.opts(t, sandbox.Auto))
	if err != nil {
		t.Fatalf("NewSweep: %v", err)
	}
	if got, _ := sw.Sandbox(); got != sandbox.Landlock {
		t.Fatalf("without bwrap auto resolved to %q, want landlock", got)
	}
	go func() {
		// Interrupt once the slow cell's agent is waiting on its model.
		for ctx.Err() == nil {
			r.mu.Lock()
			ps := r.providers["hang.yaml"]
			r.mu.Unlock()
			if len(ps) == 1 && len(ps[0].MessageRequests()) > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	sum, err := sw.Run(ctx)
	sw.Close()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sum.Status != wfb.RunInterrupted {
		t.Fatalf("first run %s, want interrupted", sum.Status)
	}

	t.Setenv("PATH", pathWithBwrap)
	r.mu.Lock()
	r.providers = map[string][]*provider.Provider{}
	r.mu.Unlock()
	// A new run here would get bwrap: what keeps the resume on landlock is
	// the run's own history.
	fresh, err := runner.NewSweep(context.Background(), r.opts(t, sandbox.Auto))
	if err != nil {
		t.Fatalf("NewSweep: %v", err)
	}
	if got, _ := fresh.Sandbox(); got != sandbox.Bwrap {
		t.Errorf("with bwrap back a new run resolved auto to %q, want bwrap", got)
	}
	fresh.Close()
	o := r.opts(t, "")
	o.Resume = sum.RunID
	sw, err = runner.NewSweep(context.Background(), o)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer sw.Close()
	if got, _ := sw.Sandbox(); got != sandbox.Landlock {
		t.Errorf("the resume resolved auto to %q, want landlock, the run's backend", got)
	}
}

// TestARefusedAutoCellNamesABackendNotAuto stops a row whose sandbox column
// says "auto": a cell run on its own under auto that no backend accepts
// (here: a workspace that is a symlink) records the first backend auto
// tried, with every reason in its detail.
func TestARefusedAutoCellNamesABackendNotAuto(t *testing.T) {
	r := newRig(t)
	link := filepath.Join(r.tmp, "link")
	if err := os.Symlink(r.ws, link); err != nil {
		t.Fatal(err)
	}
	p, err := provider.Start(&provider.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := r.cell(t, sandbox.Auto, p)
	c.Workspace = link
	row, err := runner.RunCell(context.Background(), r.db, c)
	if err != nil {
		t.Fatal(err)
	}
	r.checkStored(t, row)
	if row.ErrorKind != wfb.KindSandboxRefused || !strings.Contains(row.ErrorDetail, "is a symlink") {
		t.Errorf("row %s: %q; want sandbox-refused naming the symlink", row.ErrorKind, row.ErrorDetail)
	}
	if row.Sandbox != sandbox.Strength[0] {
		t.Errorf("row sandbox = %q, want %q", row.Sandbox, sandbox.Strength[0])
	}
}
