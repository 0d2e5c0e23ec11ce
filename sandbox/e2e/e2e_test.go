// Package e2e_test runs the seed's boundary test through the real session
// path on every sandbox backend: runner.RunCell prepares the sandbox, the
// stand-in agent (this test binary) runs inside it as a real subprocess,
// the mock provider scripts the model over real HTTP, and the row lands in
// a real SQLite file. The scripted model writes the review artifact AND
// tries, as Bash tool calls, every way a root session has to tamper with
// the workspace.
package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/internal/testkit/standin"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// TestMain makes the test binary, with WFB_TEST_AGENT=1, the stand-in agent
// a session runs. (It serves as the landlock launcher without help: the
// sandbox package's init takes `sandbox-exec` before TestMain runs, which
// matters because the launcher runs with the agent's environment.)
func TestMain(m *testing.M) {
	standin.MainIfAsked()
	code := m.Run()
	gate.Report("sandbox/e2e")
	os.Exit(code)
}

const reviewJSON = `{"schema_version": 1, "verdict": "approve", "findings": []}`

// requireBackend skips a test whose backend this machine cannot run, or
// fails it under WFB_REQUIRE_SANDBOX=1 (see sandboxtest.RequireBackend).
func requireBackend(t *testing.T, name string) {
	t.Helper()
	sandboxtest.RequireBackend(t, name)
}

// rig is one test's results file, run and workspace.
type rig struct {
	db     *store.DB
	runID  string
	ws     string
	artDir string
	tmp    string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	run := store.Run{ID: store.NewID("run"), Kind: "session", StartedAt: time.Now().UTC(), Status: wfb.RunRunning}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// The session uid of a root wfb must traverse to the workspace.
	tmp := sandboxtest.SharedDir(t, "wfb-e2e-")
	ws := filepath.Join(tmp, "clone")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// World-writable, so that mode bits alone would let any uid in: what
	// stops the session is the backend's boundary, not the session uid.
	for p, mode := range map[string]os.FileMode{ws: 0o777, filepath.Join(ws, "source.ts"): 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	// Private roots go next to it, not into root's 0700 t.TempDir().
	t.Setenv("TMPDIR", tmp)
	return &rig{db: db, runID: run.ID, ws: ws, artDir: filepath.Join(tmp, "artifacts"), tmp: tmp}
}

func (r *rig) cell(t *testing.T, backend string, p *provider.Provider) runner.Cell {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return runner.Cell{
		SessionKey: runner.SessionKey{
			RunID: r.runID, Task: "seed", Arm: "stand-in", Rep: 1,
			Agent: bench.AgentStandIn, AgentBin: self, AgentArgs: []string{"mock", "agent"},
			Model: "stand-in", Prompt: "review the change", Timeout: 60 * time.Second,
			// Two turns: the tool results go back to the model, where the
			// test reads which attacks failed.
			MaxTurns: 2,
		},
		Workspace: r.ws, Sandbox: backend, Review: true, ArtifactDir: r.artDir,
		BaseURL: p.URL(), APIKey: "offline",
		ExtraEnv: map[string]string{"WFB_TEST_AGENT": "1"},
	}
}

// checkStored proves the row returned is the row in the file.
func (r *rig) checkStored(t *testing.T, row store.Result) {
	t.Helper()
	rows, err := r.db.Results(context.Background(), r.runID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(s store.Result) bool { return s.AttemptID == row.AttemptID })
	if i < 0 {
		t.Fatalf("row %s was not recorded", row.AttemptID)
	}
	if rows[i].OK != row.OK || rows[i].ErrorKind != row.ErrorKind || rows[i].Sandbox != row.Sandbox {
		t.Errorf("stored row ok=%v kind=%q sandbox=%q differs from returned ok=%v kind=%q sandbox=%q",
			rows[i].OK, rows[i].ErrorKind, rows[i].Sandbox, row.OK, row.ErrorKind, row.Sandbox)
	}
}

// attack is what a session that wants the workspace changed would try. Each
// command must exit non-zero: the last step is the write that would land.
type attack struct{ name, command string }

func attacks(ws, artDir, artifact string) []attack {
	src := filepath.Join(ws, "source.ts")
	return []attack{
		{"write", "echo tampered > source.ts"},
		{"create", "echo planted > planted.txt"},
		{"delete", "rm source.ts"},
		{"rename out", "mv source.ts " + filepath.Join(artDir, "stolen.ts")},
		{"truncate", "truncate -s 0 source.ts"},
		{"chmod then write", "chmod u+w source.ts . && echo tampered > source.ts"},
		{"remount rw", "mount -o remount,rw " + ws + " && echo tampered > source.ts"},
		{"remount bind rw", "mount -o remount,bind,rw " + ws + " && echo tampered > source.ts"},
		{"bind over", "mount --bind \"$TMPDIR\" " + ws + " && echo planted > " + filepath.Join(ws, "planted.txt")},
		{"unshare mount ns", "unshare -m sh -c 'mount -o remount,rw " + ws + " && echo tampered > " + src + "'"},
		{"unshare user and mount ns", "unshare -Urm sh -c 'mount -o remount,rw " + ws + " && echo tampered > " + src + "'"},
		{"via /proc/self/root", "echo tampered > /proc/self/root" + src},
		{"via /proc/1/root", "echo tampered > /proc/1/root" + src},
		{"symlink swap of the artifact path", "ln -s " + src + " " + artifact + " && echo tampered > " + artifact},
		{"hard link into the artifact dir", "ln " + src + " " + filepath.Join(artDir, "linked.ts") + " && echo tampered >> " + filepath.Join(artDir, "linked.ts")},
	}
}

// snapshot is the workspace's digest and every file's bytes.
func snapshot(t *testing.T, ws string) (string, map[string]string) {
	t.Helper()
	digest, err := sandbox.Digest(ws)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	err = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[strings.TrimPrefix(p, ws)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return digest, files
}

// toolResults returns the tool_result blocks the agent sent back in the
// request after the tool turn, in the order of the tool calls.
func toolResults(t *testing.T, p *provider.Provider) []map[string]any {
	t.Helper()
	reqs := p.MessageRequests()
	if len(reqs) < 2 {
		t.Fatalf("the agent made %d model requests; want the tool turn answered", len(reqs))
	}
	msgs, _ := reqs[1].Body["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatal("no messages in the second request")
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	var out []map[string]any
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && m["type"] == "tool_result" {
			out = append(out, m)
		}
	}
	return out
}

// TestARootSessionCannotChangeTheWorkspaceOnAnyBackend is the seed's
// boundary test, through the real session, as the root wfb that broke the
// original: the artifact lands (temp+rename, no temp file left) and the
// workspace is byte-identical, although the session tried to write it,
// chmod it, remount it, unshare its way around the mount, reach it through
// /proc and plant a symlink or hard link at the artifact path. Every attack
// must fail, and the row must be recorded all the same.
func TestARootSessionCannotChangeTheWorkspaceOnAnyBackend(t *testing.T) {
	for _, backend := range sandbox.Strength {
		t.Run(backend, func(t *testing.T) {
			if backend != sandbox.Bwrap {
				gate.RequireRoot(t, "as non-root the session owns the workspace: "+backend+" cannot stop chmod (see the sandbox package doc); this test is about a root wfb")
			}
			requireBackend(t, backend)
			r := newRig(t)
			artifact := filepath.Join(r.artDir, review.ReviewOutput)
			var tools []provider.Tool
			as := attacks(r.ws, r.artDir, artifact)
			for _, a := range as {
				tools = append(tools, provider.Tool{Name: "Bash", Input: map[string]any{"command": a.command}})
			}
			// Written last, so it replaces the symlink an attack planted.
			tools = append(tools, provider.Tool{Name: "Write", Input: map[string]any{"file_path": artifact, "content": reviewJSON}})
			p, err := provider.Start(&provider.Script{
				Replies: []provider.Reply{{Text: "reviewing", Tools: tools, Usage: provider.FullUsage(100, 20, 0, 0)}},
				Default: &provider.Reply{Text: "done", Usage: provider.FullUsage(10, 5, 0, 0)},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			digestBefore, filesBefore := snapshot(t, r.ws)

			row, err := runner.RunCell(context.Background(), r.db, r.cell(t, backend, p))
			if err != nil {
				t.Fatalf("RunCell: %v", err)
			}
			r.checkStored(t, row)
			if !row.OK {
				t.Fatalf("row not ok: %s: %s\nstderr: %s", row.ErrorKind, row.ErrorDetail, row.StderrTail)
			}
			if row.Sandbox != backend {
				t.Errorf("row sandbox = %q, want %q", row.Sandbox, backend)
			}

			results := toolResults(t, p)
			if len(results) != len(tools) {
				t.Fatalf("%d tool results for %d tool calls", len(results), len(tools))
			}
			for i, a := range as {
				t.Logf("%-34s %v", a.name, strings.ReplaceAll(fmt.Sprint(results[i]["content"]), "\n", " | "))
				if results[i]["is_error"] != true {
					t.Errorf("attack %q succeeded: %v", a.name, results[i]["content"])
				}
			}
			if w := results[len(results)-1]; w["is_error"] == true {
				t.Errorf("the artifact write failed: %v", w["content"])
			}

			digestAfter, filesAfter := snapshot(t, r.ws)
			if digestAfter != digestBefore {
				t.Errorf("workspace digest moved: %s -> %s", digestBefore, digestAfter)
			}
			if diff := cmp.Diff(filesBefore, filesAfter); diff != "" {
				t.Errorf("workspace files (-before +after):\n%s", diff)
			}
			got, err := os.ReadFile(artifact)
			if err != nil || string(got) != reviewJSON {
				t.Errorf("artifact = %q, %v; want the review", got, err)
			}
			if fi, err := os.Lstat(artifact); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("artifact is not a regular file: %v %v", fi, err)
			}
			// A copy of a workspace file may land there (reading the workspace
			// and writing the artifact dir are both allowed: mv across mounts
			// copies before its unlink fails); a temp file left behind or a
			// hard link to a workspace inode may not.
			wsInodes := inodes(t, r.ws)
			entries, err := os.ReadDir(r.artDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				p := filepath.Join(r.artDir, e.Name())
				if strings.Contains(e.Name(), ".tmp.") {
					t.Errorf("temp file left in the artifact dir: %s", e.Name())
				}
				if ino, ok := inodeOf(t, p); ok && wsInodes[ino] {
					t.Errorf("%s is a hard link to a workspace file", p)
				}
			}
			if row.Verdict != "approve" {
				t.Errorf("verdict = %q", row.Verdict)
			}
		})
	}
}

// TestAFailedPIDNamespaceProofIsARecordedRefusal stops a session that runs
// without the PID namespace it was required to have: with a bwrap that
// creates none, the row says sandbox-refused and why, and the agent never
// reached the model.
func TestAFailedPIDNamespaceProofIsARecordedRefusal(t *testing.T) {
	requireBackend(t, sandbox.Bwrap)
	r := newRig(t)
	fake := filepath.Join(r.tmp, "fakebin")
	if err := os.Mkdir(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = --version ]; then echo bubblewrap 0.9.0; exit 0; fi\n" +
		"info= block=\nwhile [ $# -gt 0 ]; do case \"$1\" in --info-fd) info=$2; shift 2;; --block-fd) block=$2; shift 2;; --) shift; break;; *) shift;; esac; done\n" +
		"eval \"printf '{\\\"child-pid\\\": %d}' $$ >&$info\"\neval \"read x <&$block\"\nexec \"$@\"\n"
	if err := os.WriteFile(filepath.Join(fake, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+":"+os.Getenv("PATH"))
	p, err := provider.Start(&provider.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := r.cell(t, sandbox.Bwrap, p)
	c.RequirePIDNamespace = true
	row, err := runner.RunCell(context.Background(), r.db, c)
	if err != nil {
		t.Fatal(err)
	}
	r.checkStored(t, row)
	if row.OK || row.ErrorKind != wfb.KindSandboxRefused || !strings.Contains(row.ErrorDetail, "runs in wfb's own PID namespace") {
		t.Errorf("row ok=%v %s: %q; want sandbox-refused naming the shared PID namespace", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.ProcessState != wfb.StateNotStarted {
		t.Errorf("process state %q, want %q", row.ProcessState, wfb.StateNotStarted)
	}
	if n := len(p.MessageRequests()); n != 0 {
		t.Errorf("the agent reached the model %d times", n)
	}
}

// TestAutoRecordsTheBackendItChose stops a default that records "auto" (or
// nothing) instead of the backend the session really ran in.
func TestAutoRecordsTheBackendItChose(t *testing.T) {
	r := newRig(t)
	want, _, err := sandbox.Strongest(context.Background(), sandbox.Options{Workspace: r.ws, AgentBin: "/bin/sh"})
	if err != nil || want == "" {
		t.Fatalf("Strongest = %q, %v", want, err)
	}
	p, err := provider.Start(&provider.Script{
		Replies: []provider.Reply{{
			Tools: []provider.Tool{{Name: "Write", Input: map[string]any{"file_path": filepath.Join(r.artDir, review.ReviewOutput), "content": reviewJSON}}},
			Usage: provider.FullUsage(10, 5, 0, 0),
		}},
		Default: &provider.Reply{Text: "done", Usage: provider.FullUsage(10, 5, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := r.cell(t, sandbox.Auto, p)
	row, err := runner.RunCell(context.Background(), r.db, c)
	if err != nil {
		t.Fatal(err)
	}
	r.checkStored(t, row)
	if row.Sandbox != want {
		t.Errorf("row sandbox = %q, want %q (ok=%v %s %s)", row.Sandbox, want, row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if !row.OK {
		t.Errorf("row not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
}

type inode struct{ dev, ino uint64 }

func inodeOf(t *testing.T, p string) (inode, bool) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return inode{}, false
	}
	return inode{uint64(st.Dev), st.Ino}, true
}

func inodes(t *testing.T, dir string) map[inode]bool {
	t.Helper()
	out := map[inode]bool{}
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ino, ok := inodeOf(t, p); ok {
			out[ino] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNothingOfABwrapSessionOutlivesItsTimeout stops escaped descendants:
// a process the agent detached into a session of its own (out of the
// process group the runner kills) still dies with the sandbox's PID
// namespace when the session times out.
func TestNothingOfABwrapSessionOutlivesItsTimeout(t *testing.T) {
	requireBackend(t, sandbox.Bwrap)
	r := newRig(t)
	marker := fmt.Sprintf("wfb-escapee-%d", time.Now().UnixNano())
	escape := provider.Tool{Name: "Bash", Input: map[string]any{"command": "setsid sh -c 'sleep 3600' " + marker + " > /dev/null 2>&1 < /dev/null &"}}
	p, err := provider.Start(&provider.Script{Replies: []provider.Reply{
		{Tools: []provider.Tool{escape}, Usage: provider.FullUsage(10, 5, 0, 0)},
		{Hang: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := r.cell(t, sandbox.Bwrap, p)
	c.Timeout = 2 * time.Second
	row, err := runner.RunCell(context.Background(), r.db, c)
	if err != nil {
		t.Fatal(err)
	}
	r.checkStored(t, row)
	if row.ErrorKind != wfb.KindTimeout {
		t.Errorf("row %s: %s; want a timeout", row.ErrorKind, row.ErrorDetail)
	}
	if n := len(p.MessageRequests()); n < 2 {
		t.Fatalf("the agent made %d requests; the escape never ran", n)
	}
	// Give the kernel a moment to reap the namespace.
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := processesWith(t, marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the session: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	return sandboxtest.ProcessesWith(marker)
}
