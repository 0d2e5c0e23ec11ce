package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/internal/testkit/gate"
)

// traversableDir returns a fresh directory that any uid can traverse. The
// directories t.TempDir makes sit under a 0700 root-owned parent, which the
// unprivileged session uid of a root wfb could not enter.
func traversableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// newWorkspace makes the seed's clone: one source file in a directory.
func newWorkspace(t *testing.T, parent string) string {
	t.Helper()
	ws := filepath.Join(parent, "clone")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "source.ts"), "export const answer = 42;\n", 0o644)
	return ws
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// privateTmp points TMPDIR (where private roots are made) at a fresh
// traversable directory and returns it, so a test can see what is left.
func privateTmp(t *testing.T) string {
	t.Helper()
	dir := traversableDir(t)
	t.Setenv("TMPDIR", dir)
	return dir
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func asRefused(t *testing.T, err error) *RefusedError {
	t.Helper()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("want a *RefusedError, got %T: %v", err, err)
	}
	return refused
}

// TestPrepareRefusesWithASpecificReason stops a preflight that says "no"
// without saying why, or says yes to a layout whose boundary cannot hold
// (an artifact dir inside the workspace, reached through a symlink or not).
func TestPrepareRefusesWithASpecificReason(t *testing.T) {
	base := traversableDir(t)
	ws := newWorkspace(t, base)
	notDir := filepath.Join(base, "file")
	writeFile(t, notDir, "x", 0o644)
	wsLink := filepath.Join(base, "clone-link")
	if err := os.Symlink(ws, wsLink); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(ws, "out")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	artLink := filepath.Join(base, "art-link")
	if err := os.Symlink(filepath.Join(base, "elsewhere"), artLink); err != nil {
		t.Fatal(err)
	}
	// A path outside the workspace by its spelling that resolves inside it.
	sneaky := filepath.Join(base, "sneaky")
	if err := os.Symlink(ws, sneaky); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(base, "agent")
	writeFile(t, notExec, "#!/bin/sh\n", 0o644)

	ok := Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "/bin/true"}
	with := func(f func(*Options)) Options { o := ok; f(&o); return o }
	tests := []struct {
		name    string
		opts    Options
		env     map[string]string
		backend string
		reason  string
	}{
		{"no backend", with(func(o *Options) { o.Backend = "" }), nil, "", "no sandbox backend named"},
		{"landlock has no pid namespace", with(func(o *Options) { o.Backend = Landlock; o.RequirePIDNamespace = true }), nil, Landlock, "landlock runs the session in wfb's own PID namespace"},
		{"auto with a layout no backend accepts", with(func(o *Options) { o.Backend = Auto; o.ArtifactDir = inside }), nil, Auto, "lies inside the workspace " + ws},
		{"unknown backend", with(func(o *Options) { o.Backend = "docker" }), nil, "docker", `unknown backend "docker"`},
		{"pid namespace", with(func(o *Options) { o.RequirePIDNamespace = true }), nil, HostUnsafe, "cannot provide one of its own"},
		{"no workspace", with(func(o *Options) { o.Workspace = "" }), nil, HostUnsafe, "no workspace given"},
		{"workspace missing", with(func(o *Options) { o.Workspace = filepath.Join(base, "nope") }), nil, HostUnsafe, "workspace " + filepath.Join(base, "nope") + " does not exist"},
		{"workspace not a dir", with(func(o *Options) { o.Workspace = notDir }), nil, HostUnsafe, "workspace " + notDir + " is not a directory"},
		{"workspace symlink", with(func(o *Options) { o.Workspace = wsLink }), nil, HostUnsafe, "workspace " + wsLink + " is a symlink (to " + ws + ")"},
		{"no agent", with(func(o *Options) { o.AgentBin = "" }), nil, HostUnsafe, "no agent binary given"},
		{"artifact dir inside workspace", with(func(o *Options) { o.ArtifactDir = inside }), nil, HostUnsafe, "lies inside the workspace " + ws},
		{"artifact dir is the workspace", with(func(o *Options) { o.ArtifactDir = ws }), nil, HostUnsafe, "lies inside the workspace"},
		{"artifact dir inside workspace via symlink", with(func(o *Options) { o.ArtifactDir = filepath.Join(sneaky, "out") }), nil, HostUnsafe, "(resolved: " + inside + ") lies inside the workspace"},
		{"artifact dir not yet made inside workspace via symlink", with(func(o *Options) { o.ArtifactDir = filepath.Join(sneaky, "new") }), nil, HostUnsafe, "lies inside the workspace"},
		{"workspace inside artifact dir", with(func(o *Options) { o.ArtifactDir = base }), nil, HostUnsafe, "lies inside the artifact dir"},
		{"artifact dir symlink", with(func(o *Options) { o.ArtifactDir = artLink }), nil, HostUnsafe, "artifact dir " + artLink + " is a symlink"},
		{"artifact dir not a dir", with(func(o *Options) { o.ArtifactDir = notDir }), nil, HostUnsafe, "artifact dir " + notDir + " is not a directory"},
		{"artifact dir parent missing", with(func(o *Options) { o.ArtifactDir = filepath.Join(base, "a", "b") }), nil, HostUnsafe, "neither does its parent"},
		{"agent not executable", with(func(o *Options) { o.AgentBin = notExec }), nil, HostUnsafe, "cannot execute the agent binary " + notExec},
		{"bad uid env", ok, map[string]string{EnvSessionUID: "nobody"}, HostUnsafe, `WFB_SANDBOX_UID="nobody" is not a numeric id`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := privateTmp(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			sb, err := Prepare(context.Background(), tc.opts)
			if err == nil {
				sb.Close()
				t.Fatalf("Prepare succeeded; want refusal containing %q", tc.reason)
			}
			refused := asRefused(t, err)
			if refused.Backend != tc.backend {
				t.Errorf("Backend = %q, want %q", refused.Backend, tc.backend)
			}
			if !strings.Contains(refused.Reason, tc.reason) {
				t.Errorf("reason %q does not contain %q", refused.Reason, tc.reason)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("refusal left %v behind in TMPDIR", left)
			}
		})
	}
}

// TestPrepareMakesAPrivateRootThatCloseRemoves stops a private root that
// others can read, that lacks a writable home/tmp/artifact dir, or that
// outlives the sandbox.
func TestPrepareMakesAPrivateRootThatCloseRemoves(t *testing.T) {
	exactSessionUID(t)
	tmp := privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "true"})
	if err != nil {
		t.Fatal(err)
	}
	wantOwner := uint32(os.Geteuid())
	if os.Geteuid() == 0 {
		wantOwner = DefaultSessionID
	}
	type dir struct {
		Mode  os.FileMode
		Owner uint32
	}
	got := map[string]dir{}
	for name, p := range map[string]string{"root": sb.Root(), "home": sb.Home(), "tmp": sb.TmpDir(), "artifacts": sb.ArtifactDir()} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = dir{fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid}
	}
	want := map[string]dir{}
	for _, name := range []string{"root", "home", "tmp", "artifacts"} {
		want[name] = dir{os.ModeDir | 0o700, wantOwner}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("private root layout (-want +got):\n%s", diff)
	}
	if filepath.Dir(sb.Root()) != tmp {
		t.Errorf("Root() = %s, want it under TMPDIR %s", sb.Root(), tmp)
	}
	if within(sb.ArtifactDir(), ws) {
		t.Errorf("ArtifactDir() %s lies inside the workspace", sb.ArtifactDir())
	}
	if sb.Workspace() != ws || sb.Backend() != HostUnsafe || sb.AgentBin() != "/usr/bin/true" && sb.AgentBin() != "/bin/true" {
		t.Errorf("Workspace, Backend, AgentBin = %s, %s, %s", sb.Workspace(), sb.Backend(), sb.AgentBin())
	}
	if p := sb.CommandPrefix(); p == nil || len(p) != 0 {
		t.Errorf("CommandPrefix() = %#v, want empty for host-unsafe", p)
	}
	if sb.RequirePIDNamespace() {
		t.Error("RequirePIDNamespace() = true, want false")
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if left := entries(t, tmp); len(left) != 0 {
		t.Errorf("Close left %v behind", left)
	}
	if err := sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseRemovesWhatTheSessionLockedUp stops a leak when a session left a
// directory without write or search permission in its private root.
func TestCloseRemovesWhatTheSessionLockedUp(t *testing.T) {
	tmp := privateTmp(t)
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: HostUnsafe, AgentBin: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(sb.TmpDir(), "locked")
	if err := os.MkdirAll(filepath.Join(locked, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(locked, "inner", "f"), "x", 0o444)
	if err := os.Chmod(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if left := entries(t, tmp); len(left) != 0 {
		t.Errorf("Close left %v behind", left)
	}
}

// TestPrepareLeavesNothingBehindWhenPreflightFailsLate stops a leak on the
// error paths that run after the private root (and a requested artifact dir)
// were created.
func TestPrepareLeavesNothingBehindWhenPreflightFailsLate(t *testing.T) {
	tmp := privateTmp(t)
	base := traversableDir(t)
	ws := newWorkspace(t, base)
	agent := filepath.Join(base, "agent")
	writeFile(t, agent, "\x7fELF", 0o600) // exists, so the probe (not the spawn) must judge it
	art := filepath.Join(base, "artifacts")
	_, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: agent, ArtifactDir: art})
	refused := asRefused(t, err)
	if !strings.Contains(refused.Reason, "cannot execute the agent binary "+agent) {
		t.Errorf("reason = %q", refused.Reason)
	}
	if left := entries(t, tmp); len(left) != 0 {
		t.Errorf("private root left behind: %v", left)
	}
	if _, err := os.Lstat(art); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the artifact dir Prepare created survived its failure: %v", err)
	}
}

// TestPrepareLeavesAMissingAgentToTheSpawn stops the preflight from turning a
// missing agent binary (a spawn-failure row) into a sandbox refusal.
func TestPrepareLeavesAMissingAgentToTheSpawn(t *testing.T) {
	privateTmp(t)
	missing := filepath.Join(traversableDir(t), "no-such-agent")
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: HostUnsafe, AgentBin: missing})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.AgentBin() != missing {
		t.Errorf("AgentBin() = %q, want %q", sb.AgentBin(), missing)
	}
}

// TestPrepareCreatesAGivenArtifactDirTheSessionCanWrite stops a user-named
// artifact dir that the session cannot write into (the empty-artifact run),
// and its removal by Close (artifacts must outlive the sandbox).
func TestPrepareCreatesAGivenArtifactDirTheSessionCanWrite(t *testing.T) {
	exactSessionUID(t)
	privateTmp(t)
	base := traversableDir(t)
	art := filepath.Join(base, "artifacts")
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, base), Backend: HostUnsafe, AgentBin: "/bin/true", ArtifactDir: art})
	if err != nil {
		t.Fatal(err)
	}
	if sb.ArtifactDir() != art {
		t.Errorf("ArtifactDir() = %s, want %s", sb.ArtifactDir(), art)
	}
	fi, err := os.Lstat(art)
	if err != nil {
		t.Fatal(err)
	}
	wantOwner := uint32(os.Geteuid())
	if os.Geteuid() == 0 {
		wantOwner = DefaultSessionID
	}
	if got := fi.Sys().(*syscall.Stat_t).Uid; got != wantOwner || fi.Mode() != os.ModeDir|0o700 {
		t.Errorf("artifact dir mode %v owner %d, want drwx------ owner %d", fi.Mode(), got, wantOwner)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(art); err != nil {
		t.Errorf("Close removed the user's artifact dir: %v", err)
	}
}

// TestPrepareReviewWorkspaceNamesAnUnwrittenPathOutsideTheWorkspace stops an
// artifact pre-created (never-written then looks written), placed inside the
// workspace, escaping the artifact dir, or a stale one scored as new.
func TestPrepareReviewWorkspaceNamesAnUnwrittenPathOutsideTheWorkspace(t *testing.T) {
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	p, err := PrepareReviewWorkspace(sb, "review-output.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sb.ArtifactDir(), "review-output.json"); p != want {
		t.Errorf("path = %s, want %s", p, want)
	}
	if within(p, ws) {
		t.Errorf("artifact path %s lies inside the workspace", p)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("artifact was pre-created: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "../x.json", "a/b.json", "/etc/passwd", "x..json"} {
		if _, err := PrepareReviewWorkspace(sb, bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	writeFile(t, p, "{}", 0o644)
	_, err = PrepareReviewWorkspace(sb, "review-output.json")
	if refused := asRefused(t, err); !strings.Contains(refused.Reason, "already exists") {
		t.Errorf("reason = %q", refused.Reason)
	}
}

// TestSessionCredential stops a root wfb from handing the session root's
// identity (or its supplementary groups), and a non-root wfb from silently
// ignoring a uid it cannot switch to.
func TestSessionCredential(t *testing.T) {
	u := func(n uint32) *uint32 { return &n }
	tests := []struct {
		name   string
		euid   int
		opts   Options
		env    map[string]string
		want   *syscall.Credential
		reason string
	}{
		{"root default", 0, Options{}, nil, &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}, ""},
		{"root env", 0, Options{}, map[string]string{EnvSessionUID: "1234", EnvSessionGID: "5678"}, &syscall.Credential{Uid: 1234, Gid: 5678, Groups: []uint32{}}, ""},
		{"root field beats env", 0, Options{SessionUID: u(42), SessionGID: u(43)}, map[string]string{EnvSessionUID: "1234"}, &syscall.Credential{Uid: 42, Gid: 43, Groups: []uint32{}}, ""},
		{"root as root refused", 0, Options{SessionUID: u(0)}, nil, nil, "is root's"},
		{"bad gid env", 0, Options{}, map[string]string{EnvSessionGID: "-1"}, nil, `WFB_SANDBOX_GID="-1" is not a numeric id`},
		{"non-root runs as itself", 1000, Options{}, nil, nil, ""},
		{"non-root cannot switch", 1000, Options{}, map[string]string{EnvSessionUID: "1234"}, nil, "WFB_SANDBOX_UID asks for a session uid/gid, but wfb is not root"},
		{"non-root field", 1000, Options{SessionGID: u(7)}, nil, nil, "Options.SessionGID asks for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvSessionUID, "")
			t.Setenv(EnvSessionGID, "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, reason := sessionCredential(tc.opts, tc.euid)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
			if tc.reason == "" && reason != "" || !strings.Contains(reason, tc.reason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tc.reason)
			}
		})
	}
}

// TestLaunchOnHostUnsafeCarriesTheCredentialAndNoPrefix stops the runner
// from receiving a prefix or extra files host-unsafe does not have, or a
// launch that forgets the session identity.
func TestLaunchOnHostUnsafeCarriesTheCredentialAndNoPrefix(t *testing.T) {
	privateTmp(t)
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: HostUnsafe, AgentBin: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	l, err := sb.Launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if diff := cmp.Diff(sb.Credential(), l.Credential); diff != "" {
		t.Errorf("credential (-sandbox +launch):\n%s", diff)
	}
	if len(l.Prefix) != 0 || len(l.ExtraFiles) != 0 {
		t.Errorf("Prefix %v, ExtraFiles %v; want none", l.Prefix, l.ExtraFiles)
	}
	if err := l.Started(context.Background(), os.Getpid()); err != nil {
		t.Errorf("Started without require_pid_namespace: %v", err)
	}
	if (sb.Credential() == nil) != (os.Geteuid() != 0) {
		t.Errorf("Credential() = %+v with euid %d", sb.Credential(), os.Geteuid())
	}
}

// TestPIDNamespaceProofComparesTheKernelsAnswer stops a proof that trusts
// the argv: a process in wfb's namespace is refused, one in a new namespace
// passes.
func TestPIDNamespaceProofComparesTheKernelsAnswer(t *testing.T) {
	err := provePIDNamespace("test", os.Getpid())
	if refused := asRefused(t, err); !strings.Contains(refused.Reason, "runs in wfb's own PID namespace") {
		t.Errorf("reason = %q", refused.Reason)
	}
	gate.RequireRoot(t, "creating a PID namespace needs root here; the refusing half ran")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := newSleeper(r)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if err := cmd.Start(); err != nil {
		w.Close()
		// bwrap needs the same namespace, so a machine that must run the
		// sandbox (CI, as root) cannot excuse itself here.
		if os.Getenv(EnvRequireSandbox) == "1" {
			t.Fatalf("%s=1 and a root wfb cannot create a PID namespace: %v", EnvRequireSandbox, err)
		}
		t.Skipf("cannot create a PID namespace on this machine: %v", err)
	}
	defer func() { w.Close(); cmd.Wait() }()
	if err := provePIDNamespace("test", cmd.Process.Pid); err != nil {
		t.Errorf("process in a new PID namespace refused: %v", err)
	}
}
