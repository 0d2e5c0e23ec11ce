package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// shareWorkspace makes ws writable by the session identity the way wfb run
// makes a cell's copy: as root, the session's group with group write; as
// any other user the session is wfb's own uid, which owns it already.
func shareWorkspace(t *testing.T, ws string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, DefaultSessionID); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		add := os.FileMode(0o060)
		if d.IsDir() {
			add = 0o070
		}
		return os.Chmod(p, info.Mode().Perm()|add)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnEditingSessionsWritesLandOnEveryBackend stops the bug that made
// bwrap and landlock useless for a bug-fix task: the workspace was bound
// read-only for every session, so the agent's fix never landed. With
// WorkspaceWritable the session, as its own identity, can overwrite,
// create and rename inside the workspace and the host sees it; the same
// backend still holds a review off the same (group-writable) tree.
func TestAnEditingSessionsWritesLandOnEveryBackend(t *testing.T) {
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			ws := newWorkspace(t, traversableDir(t))
			shareWorkspace(t, ws)
			sb, err := Prepare(context.Background(), Options{Workspace: ws, WorkspaceWritable: true, Backend: backend, AgentBin: "/bin/sh"})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			defer sb.Close()
			if !sb.WorkspaceWritable() {
				t.Error("WorkspaceWritable() = false for a sandbox prepared writable")
			}
			if note := sb.Note(); !strings.Contains(note, "temp+rename probed") || !strings.Contains(note, "workspace") {
				t.Errorf("note %q does not say the writable workspace was probed", note)
			}
			if left, _ := filepath.Glob(filepath.Join(ws, ".wfb-preflight-*")); len(left) != 0 {
				t.Errorf("the probe left %v in the workspace", left)
			}
			if out, err := runAs(t, sb, "printf fixed > source.ts.tmp && mv source.ts.tmp source.ts && echo new > added.txt"); err != nil {
				t.Fatalf("the editing session could not edit its workspace: %v: %s", err, out)
			}
			if got := readFile(t, filepath.Join(ws, "source.ts")); got != "fixed" {
				t.Errorf("source.ts on the host = %q, want the session's edit", got)
			}
			if got := readFile(t, filepath.Join(ws, "added.txt")); got != "new\n" {
				t.Errorf("added.txt on the host = %q", got)
			}

			if backend == HostUnsafe {
				return // a review's boundary there is the runner's (WorkspaceWriteBoundary)
			}
			review := newWorkspace(t, traversableDir(t))
			shareWorkspace(t, review)
			rsb, err := Prepare(context.Background(), Options{Workspace: review, Backend: backend, AgentBin: "/bin/sh"})
			if err != nil {
				t.Fatalf("Prepare the review: %v", err)
			}
			defer rsb.Close()
			if out, err := runAs(t, rsb, "echo tampered > source.ts"); err == nil {
				t.Errorf("a review wrote its group-writable workspace: %s", out)
			}
			if got := readFile(t, filepath.Join(review, "source.ts")); got != "export const answer = 42;\n" {
				t.Errorf("the review's source.ts = %q", got)
			}
		})
	}
}

// TestPreflightHoldsEachConfigurationToItsOwnPromise stops a preflight that
// checks one configuration's promise for both: an editing session is
// refused a workspace its uid cannot write (it would fail at the agent's
// first edit, as a confusing tool error) — unless wfb is root, which gives
// it a writable copy whose edits it applies back — while a review runs
// there; and a
// review is refused a workspace holding a file the session uid owns (it
// could chmod the boundary away), while an editing session, which has no
// boundary to undo, runs there.
func TestPreflightHoldsEachConfigurationToItsOwnPromise(t *testing.T) {
	exactSessionUID(t)
	readOnly := func(t *testing.T, ws string) {
		// 0555: neither the session uid of a root wfb nor a non-root owner
		// may write it.
		if err := os.Chmod(ws, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ws, 0o755) })
	}
	ownedBySessionUID := func(t *testing.T, ws string) {
		gate.RequireRoot(t, "giving a file to the session uid needs root")
		shareWorkspace(t, ws)
		if err := os.Lchown(filepath.Join(ws, "source.ts"), DefaultSessionID, DefaultSessionID); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		layout   func(t *testing.T, ws string)
		writable bool
		reason   string // "" when Prepare must pass
	}{
		{"editing session, workspace it cannot write", readOnly, true, map[bool]string{true: "", false: "cannot write the workspace"}[os.Geteuid() == 0]},
		{"review, workspace it cannot write", readOnly, false, ""},
		{"review, file owned by the session uid", ownedBySessionUID, false, "is owned by the session uid 65534, which could chmod the write boundary away"},
		{"editing session, file owned by the session uid", ownedBySessionUID, true, ""},
	}
	for _, backend := range Strength {
		for _, tc := range tests {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				requireBackend(t, backend)
				tmp := privateTmp(t)
				ws := newWorkspace(t, traversableDir(t))
				tc.layout(t, ws)
				before, err := Digest(ws)
				if err != nil {
					t.Fatal(err)
				}
				sb, err := Prepare(context.Background(), Options{Workspace: ws, WorkspaceWritable: tc.writable, Backend: backend, AgentBin: "/bin/sh"})
				if tc.reason == "" {
					if err != nil {
						t.Fatalf("Prepare: %v", err)
					}
					if copied := sb.Origin() == ws; copied != (tc.writable && os.Geteuid() == 0 && tc.name == tests[0].name) {
						t.Errorf("the session works in a copy: %v (workspace %s)", copied, sb.Workspace())
					}
					sb.Close()
				} else {
					if err == nil {
						sb.Close()
						t.Fatal("Prepare succeeded")
					}
					if r := asRefused(t, err); !strings.Contains(r.Reason, tc.reason) || !strings.Contains(r.Reason, ws) {
						t.Errorf("reason %q, want it to name %s and contain %q", r.Reason, ws, tc.reason)
					}
					if left := entries(t, tmp); len(left) != 0 {
						t.Errorf("refusal left %v behind", left)
					}
				}
				after, err := Digest(ws)
				if err != nil {
					t.Fatal(err)
				}
				if before != after {
					t.Error("preflight left the workspace changed")
				}
			})
		}
	}
}

// rewritingBwrap is a "bwrap" that runs the real one with its argv passed
// through one rewrite: a backend that accepts the request for a writable
// workspace but does not keep it. The rewrite sees each argument as $a and
// the next as $1, and may change $a or append to "$@".
func rewritingBwrap(t *testing.T, rewrite string) string {
	t.Helper()
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	return fakeTool(t, "bwrap", "#!/bin/sh\nn=$#; i=0\nwhile [ $i -lt $n ]; do\n\ta=$1; shift; i=$((i+1))\n\t"+
		rewrite+"\n\tset -- \"$@\" \"$a\"\ndone\nexec "+real+" \"$@\"\n")
}

// rewritingLauncher is rewritingBwrap's twin for the landlock launcher: a
// "wfb" (for Options.Launcher) that runs this test binary, which serves
// `sandbox-exec`, with its argv passed through one rewrite.
func rewritingLauncher(t *testing.T, rewrite string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(fakeTool(t, "wfb", "#!/bin/sh\nn=$#; i=0\nwhile [ $i -lt $n ]; do\n\ta=$1; shift; i=$((i+1))\n\t"+
		rewrite+"\n\tset -- \"$@\" \"$a\"\ndone\nexec "+self+" \"$@\"\n"), "wfb")
}

// TestTheLiveProbeRefusesABackendThatDropsTheWritePromise stops a preflight
// that believes the argv: a bwrap that binds the workspace read-only after
// all, one that hides it under a tmpfs (writes succeed and vanish), and a
// landlock launcher that grants it read only are each refused, with the
// reason, and the workspace is left as it was.
func TestTheLiveProbeRefusesABackendThatDropsTheWritePromise(t *testing.T) {
	tests := []struct {
		name, backend string
		// fake returns Options.Launcher, or "" after putting a fake bwrap
		// first on PATH.
		fake   func(t *testing.T, ws string) string
		reason string
		// reviewPasses: the same fake still keeps a review's promise (a
		// tmpfs over the workspace does not: the review could write it).
		reviewPasses bool
	}{
		{"bwrap binding it read-only", Bwrap, func(t *testing.T, ws string) string {
			t.Setenv("PATH", rewritingBwrap(t, `if [ "$a" = --bind ] && [ "$1" = "`+ws+`" ]; then a=--ro-bind; fi`)+":"+os.Getenv("PATH"))
			return ""
		}, "could not create a file in the workspace", true},
		{"bwrap hiding it under a tmpfs", Bwrap, func(t *testing.T, ws string) string {
			t.Setenv("PATH", rewritingBwrap(t, `if [ "$a" = --chdir ]; then set -- "$@" --tmpfs "`+ws+`"; fi`)+":"+os.Getenv("PATH"))
			return ""
		}, "did not land in WS on the host", false},
		{"landlock granting it read only", Landlock, func(t *testing.T, ws string) string {
			return rewritingLauncher(t, `if [ "$a" = --rw ] && [ "$1" = "`+ws+`" ]; then a=--ro; fi`)
		}, "could not create a file in the workspace", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			requireBackend(t, tc.backend)
			privateTmp(t)
			ws := newWorkspace(t, traversableDir(t))
			shareWorkspace(t, ws)
			launcher := tc.fake(t, ws)
			before, err := Digest(ws)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Prepare(context.Background(), Options{Workspace: ws, WorkspaceWritable: true, Backend: tc.backend, AgentBin: "/bin/sh", Launcher: launcher})
			if err == nil {
				sb.Close()
				t.Fatal("Prepare accepted a backend that does not keep the workspace writable")
			}
			want := strings.ReplaceAll(tc.reason, "WS", ws)
			if r := asRefused(t, err); !strings.Contains(r.Reason, want) {
				t.Errorf("reason = %q, want it to contain %q", r.Reason, want)
			}
			after, err := Digest(ws)
			if err != nil {
				t.Fatal(err)
			}
			if before != after {
				t.Error("the probe left the workspace changed")
			}

			if !tc.reviewPasses {
				return
			}
			// The same backend keeps a review's promise: it is not broken,
			// it just does not give writes.
			sb, err = Prepare(context.Background(), Options{Workspace: ws, Backend: tc.backend, AgentBin: "/bin/sh", Launcher: launcher})
			if err != nil {
				t.Fatalf("the review configuration of the same backend: %v", err)
			}
			sb.Close()
		})
	}
}

// TestResolveChoosesABackendThatKeepsEveryPromiseOfTheRun stops a run from
// resolving auto with the review configuration alone and then giving its
// bug-fix cells a backend that cannot let them write: with a bwrap that
// only ever binds read-only, auto still picks bwrap for reviews alone, but
// passes it over (saying why) for a run that also edits, and a run that
// names bwrap is refused, never handed a weaker backend.
func TestResolveChoosesABackendThatKeepsEveryPromiseOfTheRun(t *testing.T) {
	requireBackend(t, Bwrap)
	privateTmp(t)
	reviewWS := newWorkspace(t, traversableDir(t))
	editWS := newWorkspace(t, traversableDir(t))
	shareWorkspace(t, editWS)
	t.Setenv("PATH", rewritingBwrap(t, `if [ "$a" = --bind ] && [ "$1" = "`+editWS+`" ]; then a=--ro-bind; fi`)+":"+os.Getenv("PATH"))
	review := Options{Workspace: reviewWS, AgentBin: "/bin/sh"}
	edit := Options{Workspace: editWS, WorkspaceWritable: true, AgentBin: "/bin/sh"}
	ctx := context.Background()

	got, passed, err := Resolve(ctx, Auto, review)
	if err != nil || got != Bwrap || len(passed) != 0 {
		t.Errorf("Resolve(auto, review) = %q, %+v, %v; want bwrap, nothing passed over", got, passed, err)
	}

	got, passed, err = Resolve(ctx, Auto, review, edit)
	if err != nil {
		t.Fatalf("Resolve(auto, review, edit): %v", err)
	}
	if got == Bwrap || got == "" {
		t.Errorf("Resolve(auto, review, edit) = %q; want a backend other than the read-only bwrap", got)
	}
	if len(passed) == 0 || passed[0].Backend != Bwrap || !strings.Contains(passed[0].Reason, "could not create a file in the workspace "+editWS) {
		t.Errorf("passed over %+v; want bwrap first, with the failed write in %s", passed, editWS)
	}

	_, _, err = Resolve(ctx, Bwrap, review, edit)
	if r := asRefused(t, err); r.Backend != Bwrap || !strings.Contains(r.Reason, "could not create a file in the workspace") {
		t.Errorf("Resolve(bwrap) refused as %q: %q", r.Backend, r.Reason)
	}
	if _, _, err := Resolve(ctx, "bwrapp", review); !strings.Contains(asRefused(t, err).Reason, `unknown backend "bwrapp"`) {
		t.Errorf("Resolve of an unknown name: %v", err)
	}
}

// TestSessionCredentialIsTheIdentityPrepareUses stops the runner's commands
// that run as the session outside a sandbox (verify) from disagreeing with
// the sandbox about who the session is, or from ignoring an environment
// the sandbox refuses.
func TestSessionCredentialIsTheIdentityPrepareUses(t *testing.T) {
	tests := []struct {
		name    string
		euid    int
		env     map[string]string
		wantUID int // -1: nil credential
		err     string
	}{
		{"root default", 0, nil, DefaultSessionID, ""},
		{"root env", 0, map[string]string{EnvSessionUID: "1234", EnvSessionGID: "1234"}, 1234, ""},
		{"root env names root", 0, map[string]string{EnvSessionUID: "0"}, -1, "is root's"},
		{"bad uid", 0, map[string]string{EnvSessionUID: "nobody"}, -1, `WFB_SANDBOX_UID="nobody" is not a numeric id`},
		{"non-root runs as itself", 1000, nil, -1, ""},
		{"non-root asked to switch", 1000, map[string]string{EnvSessionUID: "1234"}, -1, "wfb is not root (euid 1000) and cannot switch identity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvSessionUID, "")
			t.Setenv(EnvSessionGID, "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cred, err := SessionCredential(tc.euid)
			gotUID := -1
			if cred != nil {
				gotUID = int(cred.Uid)
				if len(cred.Groups) != 0 {
					t.Errorf("supplementary groups %v ride along", cred.Groups)
				}
			}
			if gotUID != tc.wantUID {
				t.Errorf("uid = %d, want %d", gotUID, tc.wantUID)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want it to contain %q", err, tc.err)
			}
		})
	}
}

// TestAGatedLaunchReleasesTheAgentOnlyOnceTheLiveProbePassed: with the
// live probe moved to the launch (Options.ProbeAtLaunch), a backend that
// breaks a review's read-only promise (a bwrap binding the workspace
// writable, a landlock launcher granting it writes) is still caught — by
// the probe that runs beside the agent's start — and the agent, held at
// the backend's barrier, never runs; the launch's Close leaves the
// workspace as it was. With the same backend, Prepare without the option
// refuses at once (the control: the fake does break the promise).
func TestAGatedLaunchReleasesTheAgentOnlyOnceTheLiveProbePassed(t *testing.T) {
	tests := []struct {
		backend string
		// fake returns Options.Launcher, or "" after putting a fake bwrap
		// first on PATH.
		fake func(t *testing.T, ws string) string
	}{
		{Bwrap, func(t *testing.T, ws string) string {
			t.Setenv("PATH", rewritingBwrap(t, `if [ "$a" = --ro-bind ] && [ "$1" = "`+ws+`" ]; then a=--bind; fi`)+":"+os.Getenv("PATH"))
			return ""
		}},
		{Landlock, func(t *testing.T, ws string) string {
			return rewritingLauncher(t, `if [ "$a" = --ro ] && [ "$1" = "`+ws+`" ]; then a=--rw; fi`)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.backend, func(t *testing.T) {
			requireBackend(t, tc.backend)
			privateTmp(t)
			ws := newWorkspace(t, traversableDir(t))
			shareWorkspace(t, ws)
			launcher := tc.fake(t, ws)
			before, err := Digest(ws)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			opts := Options{Workspace: ws, Backend: tc.backend, AgentBin: "/bin/sh", Launcher: launcher}
			if sb, err := Prepare(ctx, opts); err == nil {
				sb.Close()
				t.Fatal("control: Prepare accepted a backend that lets a review write its workspace, so the test proves nothing")
			}
			opts.ProbeAtLaunch = true
			sb, err := Prepare(ctx, opts)
			if err != nil {
				t.Fatalf("Prepare with the probe moved to the launch: %v", err)
			}
			defer sb.Close()
			marker := filepath.Join(sb.ArtifactDir(), "agent-ran")
			l, err := sb.Launch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			started := runLaunched(t, l, ws, "echo ran > "+marker+"; echo ran > "+filepath.Join(ws, "agent-ran"))
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			var refused *RefusedError
			if !errors.As(started, &refused) || !strings.Contains(refused.Reason, "could create a file in the workspace") {
				t.Fatalf("Started = %v; want the live probe's refusal of a writable workspace", started)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the agent ran although the probe refused the sandbox (marker: %v)", err)
			}
			after, err := Digest(ws)
			if err != nil {
				t.Fatal(err)
			}
			if before != after {
				t.Error("the gated probe or the agent left the workspace changed")
			}
		})
	}
}

// TestTheLiveProbeScriptReadsItsCapabilities: the probe's shell reads its
// own CapEff (no sed) and refuses a non-zero set, naming it; without the
// capability check, or with none held, its verdict is ok. Run on the host:
// as root the shell holds root's capabilities, the very thing a kernel
// backend must have dropped.
func TestTheLiveProbeScriptReadsItsCapabilities(t *testing.T) {
	ws, art := t.TempDir(), t.TempDir()
	own := ""
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "CapEff:" {
			own = f[1]
		}
	}
	run := func(caps string) (string, int) {
		cmd := exec.Command("/bin/sh", "-c", liveProbeScript, "wfb-preflight", ws, art, "rw", caps, "t")
		out, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out)), cmd.ProcessState.ExitCode()
	}
	if out, code := run("-"); out != "ok" || code != 0 {
		t.Errorf("without the capability check: %q, exit %d; want ok", out, code)
	}
	out, code := run("caps")
	switch {
	case own == "0000000000000000" && (out != "ok" || code != 0):
		t.Errorf("holding no capabilities: %q, exit %d; want ok", out, code)
	case own != "0000000000000000" && (out != "capabilities "+own || code != 3):
		t.Errorf("holding CapEff %s: %q, exit %d; want the set named and exit 3", own, out, code)
	}
}

// TestAGatedSandboxProbesOnceForAllItsLaunches: a session launches twice
// in its sandbox (the agent's --version, then the agent); the live probe
// runs once, started by the first launch, and both launches run once it
// passed — under bwrap and under the landlock launcher. Two probes at once
// shared file names (their $$ is the same in every PID namespace) and
// failed each other's renames.
func TestAGatedSandboxProbesOnceForAllItsLaunches(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{Bwrap, Landlock} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			ws := newWorkspace(t, traversableDir(t))
			log := filepath.Join(traversableDir(t), "launches.log")
			// bwrap runs as the session uid: the log must take its lines.
			writeFile(t, log, "", 0o666)
			if err := os.Chmod(log, 0o666); err != nil {
				t.Fatal(err)
			}
			opts := Options{Workspace: ws, Backend: backend, AgentBin: "/bin/sh", ProbeAtLaunch: true}
			if backend == Bwrap {
				real, err := exec.LookPath("bwrap")
				if err != nil {
					t.Fatal(err)
				}
				t.Setenv("PATH", fakeTool(t, "bwrap", "#!/bin/sh\necho \"START $*\" >> "+log+"\nexec "+real+" \"$@\"\n")+":"+os.Getenv("PATH"))
			} else {
				opts.Launcher = filepath.Join(fakeTool(t, "wfb", "#!/bin/sh\necho \"START $*\" >> "+log+"\nexec "+self+" \"$@\"\n"), "wfb")
			}
			ctx := context.Background()
			sb, err := Prepare(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			launch := func() *Launch {
				l, err := sb.Launch(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			first, second := launch(), launch()
			for i, l := range []*Launch{first, second} {
				marker := filepath.Join(sb.ArtifactDir(), fmt.Sprintf("ran-%d", i))
				if err := runLaunched(t, l, ws, "echo ran > "+marker); err != nil {
					t.Fatalf("launch %d: %v", i, err)
				}
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("launch %d did not run: %v", i, err)
				}
				l.Close()
			}
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
			// One sandbox per launch and one for the probe (whose script
			// spans lines; each start's line begins with START and the
			// backend's first flag; bwrap's --version is not a sandbox).
			flag := map[string]string{Bwrap: "--unshare-user ", Landlock: LauncherCommand + " "}[backend]
			logged := readFile(t, log)
			if starts := strings.Count("\n"+logged, "\nSTART "+flag); starts != 3 {
				t.Errorf("%d sandboxes for two launches of one sandbox; want 3 (one probe); the backend ran:\n%s", starts, logged)
			}
		})
	}
}

// runLaunched runs script with /bin/sh through the launch the way the
// runner starts an agent, and returns Started's error (the process killed
// when there is one) once the process is gone.
func runLaunched(t *testing.T, l *Launch, dir, script string) error {
	t.Helper()
	argv := append(append([]string{}, l.Prefix...), "/bin/sh", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = dir, []string{"PATH=/usr/bin:/bin"}, l.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: l.Credential}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := l.Started(context.Background(), cmd.Process.Pid)
	if started != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err := cmd.Wait(); err != nil && started == nil {
		t.Fatalf("%s: %v", script, err)
	}
	return started
}
