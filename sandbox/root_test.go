package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// newSleeper is a process that lives until w's other end is closed.
func newSleeper(r *os.File) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", "read x")
	cmd.Stdin = r
	return cmd
}

func requireRoot(t *testing.T) {
	t.Helper()
	gate.RequireRoot(t, "this test proves the boundary a root wfb builds by running the session as another uid; as non-root host-unsafe is best-effort by design")
}

// runAs runs script with /bin/sh in the sandbox as its session identity, the
// way the runner starts the agent (prefix, extra files, credential, Started),
// and returns its combined output.
func runAs(t *testing.T, sb *Sandbox, script string) (string, error) {
	t.Helper()
	l, err := sb.Launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	argv := append(append([]string{}, l.Prefix...), "/bin/sh", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = sb.Workspace()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + sb.Home(), "TMPDIR=" + sb.TmpDir()}
	cmd.ExtraFiles = l.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: l.Credential}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := l.Started(context.Background(), cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	return out.String(), err
}

// TestRootSessionCannotWriteTheWorkspaceButCanRenameIntoTheArtifactDir is the
// seed's boundary test as root, where the original failed: mode bits do not
// bind root, so the session must run as another uid. The workspace is made
// world-writable first, and a control write proves that without the boundary
// the session COULD write: what stops it afterwards is the boundary.
func TestRootSessionCannotWriteTheWorkspaceButCanRenameIntoTheArtifactDir(t *testing.T) {
	requireRoot(t)
	privateTmp(t)
	base := traversableDir(t)
	ws := newWorkspace(t, base)
	for p, m := range map[string]os.FileMode{ws: 0o777, filepath.Join(ws, "source.ts"): 0o666} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "/bin/sh"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if out, err := runAs(t, sb, "echo control > source.ts && rm -f control-new && echo x > control-new && rm control-new"); err != nil {
		t.Fatalf("control write without the boundary failed, so the test proves nothing: %v: %s", err, out)
	}
	writeFile(t, filepath.Join(ws, "source.ts"), "export const answer = 42;\n", 0o666)
	before, err := Digest(ws)
	if err != nil {
		t.Fatal(err)
	}

	restore, err := WorkspaceWriteBoundary(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	for _, attack := range []string{
		"echo tampered > source.ts",
		"echo new > new-file",
		"rm -f source.ts",
		"chmod u+w source.ts",
		"chmod 777 .",
		"mv source.ts moved.ts",
	} {
		if out, err := runAs(t, sb, attack); err == nil {
			t.Errorf("%q succeeded inside the boundary: %s", attack, out)
		}
	}
	artifact, err := PrepareReviewWorkspace(sb, "review-output.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "verdict": "approve", "findings": []}`
	tmp := artifact + ".tmp.1"
	if out, err := runAs(t, sb, "printf '%s' '"+doc+"' > '"+tmp+"' && mv '"+tmp+"' '"+artifact+"'"); err != nil {
		t.Fatalf("atomic write into the artifact dir failed: %v: %s", err, out)
	}
	got, err := os.ReadFile(artifact)
	if err != nil || string(got) != doc {
		t.Errorf("artifact = %q, %v; want %q", got, err, doc)
	}
	if matches, _ := filepath.Glob(filepath.Join(sb.ArtifactDir(), "*.tmp.*")); len(matches) != 0 {
		t.Errorf("temp files left: %v", matches)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	after, err := Digest(ws)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Error("the workspace moved during the session")
	}
}

// TestRootPreflightNamesThePathThatBlocksTheSessionUID stops a preflight that
// passes a layout the unprivileged session cannot use (it would fail later,
// obscurely, as an empty artifact or a spawn error) or refuses without naming
// where. (A workspace or artifact dir the session cannot reach or write is
// no longer among them: root_layout_test.go shows wfb copies it.)
func TestRootPreflightNamesThePathThatBlocksTheSessionUID(t *testing.T) {
	exactSessionUID(t)
	requireRoot(t)
	tests := []struct {
		name   string
		setup  func(t *testing.T, base string) Options
		reason func(base string) string
	}{
		{
			"unreadable file in the workspace",
			func(t *testing.T, base string) Options {
				ws := newWorkspace(t, base)
				writeFile(t, filepath.Join(ws, "secret.env"), "k=v", 0o600)
				return Options{Workspace: ws, AgentBin: "/bin/true"}
			},
			func(base string) string {
				return "session uid 65534 cannot read " + filepath.Join(base, "clone", "secret.env") + " in the workspace"
			},
		},
		{
			"agent under a private dir",
			func(t *testing.T, base string) Options {
				bin := filepath.Join(base, "bin")
				os.Mkdir(bin, 0o700)
				writeFile(t, filepath.Join(bin, "agent"), "#!/bin/sh\n", 0o755)
				return Options{Workspace: newWorkspace(t, base), AgentBin: filepath.Join(bin, "agent")}
			},
			func(base string) string {
				return "session uid 65534 cannot traverse " + filepath.Join(base, "bin") + ", on the way to the agent binary"
			},
		},
		{
			"agent script it cannot read",
			func(t *testing.T, base string) Options {
				writeFile(t, filepath.Join(base, "agent"), "#!/bin/sh\n", 0o711)
				return Options{Workspace: newWorkspace(t, base), AgentBin: filepath.Join(base, "agent")}
			},
			func(base string) string { return "cannot read the agent script " + filepath.Join(base, "agent") },
		},
		{
			"workspace owned by the session uid",
			func(t *testing.T, base string) Options {
				ws := newWorkspace(t, base)
				os.Lchown(filepath.Join(ws, "source.ts"), DefaultSessionID, DefaultSessionID)
				return Options{Workspace: ws, AgentBin: "/bin/true"}
			},
			func(base string) string {
				return filepath.Join(base, "clone", "source.ts") + " in the workspace is owned by the session uid 65534, which could chmod the write boundary away"
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := privateTmp(t)
			base := traversableDir(t)
			opts := tc.setup(t, base)
			opts.Backend = HostUnsafe
			sb, err := Prepare(context.Background(), opts)
			if err == nil {
				sb.Close()
				t.Fatal("Prepare succeeded")
			}
			refused := asRefused(t, err)
			if want := tc.reason(base); !strings.Contains(refused.Reason, want) {
				t.Errorf("reason:\n got %q\nwant it to contain %q", refused.Reason, want)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("refusal left %v behind", left)
			}
		})
	}
}

// TestRootPreflightRefusesAPrivateRootTheSessionCannotReach stops a TMPDIR
// under a private directory from yielding a home the session cannot enter.
func TestRootPreflightRefusesAPrivateRootTheSessionCannotReach(t *testing.T) {
	requireRoot(t)
	locked := filepath.Join(traversableDir(t), "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", locked)
	_, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: HostUnsafe, AgentBin: "/bin/true"})
	refused := asRefused(t, err)
	if want := "cannot traverse " + locked + ", on the way to the private root"; !strings.Contains(refused.Reason, want) {
		t.Errorf("reason %q does not contain %q", refused.Reason, want)
	}
	if left := entries(t, locked); len(left) != 0 {
		t.Errorf("refusal left %v behind", left)
	}
}

// TestTheLiveProbeLeavesNoProcessAsTheSessionUID: once Prepare's live
// probe has answered, nothing runs — not even a zombie — as the session
// uid. bubblewrap's own reaper inside the probe's PID namespace outlived
// bwrap and was orphaned to the machine's init, which reaps when it likes
// (never, in a container whose init reaps nothing); the uid pool counts
// such a uid in use, and a sweep of quick cells ran out of uids and waited
// about a second a cell.
func TestTheLiveProbeLeavesNoProcessAsTheSessionUID(t *testing.T) {
	requireRoot(t)
	requireBackend(t, Bwrap)
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	for i := range 5 {
		sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: Bwrap, AgentBin: "/bin/sh"})
		if err != nil {
			t.Fatal(err)
		}
		uid := sb.Credential().Uid
		pid := uidInUse(uid)
		sb.Close()
		if pid != 0 {
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			t.Fatalf("probe %d: process %d still runs as the session uid %d after the probe answered:\n%s", i, pid, uid, status)
		}
	}
}
