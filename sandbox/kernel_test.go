package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeBwrapScript is a "bwrap" that speaks the launch protocol (reports a
// child pid on --info-fd, waits on --block-fd) but creates no namespace at
// all: the argv looks right, the kernel's answer does not.
const fakeBwrapScript = `#!/bin/sh
if [ "$1" = --version ]; then echo "bubblewrap 0.9.0"; exit 0; fi
info= block=
while [ $# -gt 0 ]; do
	case "$1" in
	--info-fd) info=$2; shift 2 ;;
	--block-fd) block=$2; shift 2 ;;
	--) shift; break ;;
	*) shift ;;
	esac
done
eval "printf '{\"child-pid\": %d}' $$ >&$info"
eval "read x <&$block"
exec "$@"
`

// fakeTool writes an executable script named name into a fresh directory any
// uid can traverse and returns the directory.
func fakeTool(t *testing.T, name, script string) string {
	t.Helper()
	dir := traversableDir(t)
	writeFile(t, filepath.Join(dir, name), script, 0o755)
	return dir
}

// TestBwrapRefusesAPrefixThatCreatesNoPIDNamespace stops a PID-namespace
// "proof" that trusts the argv: a bwrap that reports a child but creates no
// namespace is refused, at preflight and at launch, and the command it held
// never runs.
func TestBwrapRefusesAPrefixThatCreatesNoPIDNamespace(t *testing.T) {
	requireBackend(t, Bwrap)
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	fake := fakeTool(t, "bwrap", fakeBwrapScript)

	t.Run("preflight", func(t *testing.T) {
		t.Setenv("PATH", fake+":/usr/bin:/bin")
		sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: Bwrap, AgentBin: "/bin/sh", RequirePIDNamespace: true})
		if err == nil {
			sb.Close()
			t.Fatal("Prepare accepted a bwrap that creates no PID namespace")
		}
		if r := asRefused(t, err); !strings.Contains(r.Reason, "runs in wfb's own PID namespace") {
			t.Errorf("reason = %q", r.Reason)
		}
	})

	t.Run("launch", func(t *testing.T) {
		sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: Bwrap, AgentBin: "/bin/sh", RequirePIDNamespace: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		// The real bwrap passed preflight; the one that starts the agent
		// is swapped, as a broken or replaced binary would be.
		sb.backend.(*bwrap).path = filepath.Join(fake, "bwrap")
		marker := filepath.Join(sb.ArtifactDir(), "agent-ran")
		out, _, started, _ := sb.runInside(context.Background(), "/bin/sh", "-c", "echo ran > "+marker)
		var refused *RefusedError
		if !errors.As(started, &refused) || !strings.Contains(refused.Reason, "runs in wfb's own PID namespace") {
			t.Fatalf("Started = %v, want a refusal naming the shared PID namespace (output %q)", started, out)
		}
		time.Sleep(100 * time.Millisecond) // a released agent would have written by now
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the agent ran although the proof failed (marker: %v)", err)
		}
	})
}

// TestBwrapProvesTheAgentsPIDNamespaceFromTheParent stops a launch that
// releases the agent before the proof, or proves the wrong process: the
// pid Started learned must be the agent's namespace, and it differs from
// wfb's.
func TestBwrapProvesTheAgentsPIDNamespaceFromTheParent(t *testing.T) {
	requireBackend(t, Bwrap)
	privateTmp(t)
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: Bwrap, AgentBin: "/bin/sh", RequirePIDNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// Inside, the agent's shell is pid 2 (bwrap's reaper is 1); its PID
	// namespace is not wfb's.
	out, errOut, started, err := sb.runInside(context.Background(), "/bin/sh", "-c", `echo $$; readlink /proc/self/ns/pid`)
	if started != nil || err != nil {
		t.Fatalf("started %v, exit %v, stderr %s", started, err, errOut)
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	lines := strings.Fields(out)
	if len(lines) != 2 || lines[0] != "2" || lines[1] == self {
		t.Errorf("inside: %q; want pid 2 in a namespace other than wfb's %s", out, self)
	}
}

// TestKernelBackendsReportWhyTheyCannotRun stops vague or missing refusals
// for the machines this one is not: each reason names the cause and the fix.
// The tool's absence and age are real (PATH and a fake bwrap); the kernel's
// settings are read from a stand-in /proc/sys and a stand-in ABI answer,
// since a test must not change the machine's.
func TestKernelBackendsReportWhyTheyCannotRun(t *testing.T) {
	ws := newWorkspace(t, traversableDir(t))
	sysctl := func(settings map[string]string) string {
		dir := t.TempDir()
		for k, v := range settings {
			p := filepath.Join(dir, k)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, v+"\n", 0o644)
		}
		return dir
	}
	tests := []struct {
		name    string
		backend string
		path    string // PATH; empty: unchanged
		procSys string // empty: the real /proc/sys
		abi     func() (int, error)
		reason  string
	}{
		{"bwrap missing", Bwrap, traversableDir(t), "", nil, "bubblewrap is not installed: no bwrap on PATH"},
		{"bwrap too old", Bwrap, fakeTool(t, "bwrap", "#!/bin/sh\necho bubblewrap 0.6.1\n"), "", nil, "is bubblewrap 0.6.1, older than 0.8.0"},
		{"bwrap version unreadable", Bwrap, fakeTool(t, "bwrap", "#!/bin/sh\necho bubblewrap\n"), "", nil, "cannot tell the version of"},
		{"user namespaces disabled", Bwrap, "", sysctl(map[string]string{"user/max_user_namespaces": "0"}), nil, "user namespaces are disabled (user.max_user_namespaces = 0)"},
		{"unprivileged user namespaces disabled", Bwrap, "", sysctl(map[string]string{"user/max_user_namespaces": "100", "kernel/unprivileged_userns_clone": "0"}), nil, "kernel.unprivileged_userns_clone = 0"},
		{"landlock not built", Landlock, "", "", func() (int, error) { return 0, unix.ENOSYS }, "this kernel has no Landlock support"},
		{"landlock not enabled", Landlock, "", "", func() (int, error) { return 0, unix.EOPNOTSUPP }, "add landlock to the lsm= kernel boot parameter"},
		{"landlock abi too old", Landlock, "", "", func() (int, error) { return 2, nil }, "the kernel's Landlock ABI is v2, older than v3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := privateTmp(t)
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			} else if tc.backend == Bwrap {
				requireBackend(t, Bwrap) // the sysctl reasons come after bwrap is found
			}
			if tc.procSys != "" {
				old := procSys
				procSys = tc.procSys
				t.Cleanup(func() { procSys = old })
			}
			if tc.abi != nil {
				old := landlockABI
				landlockABI = tc.abi
				t.Cleanup(func() { landlockABI = old })
			}
			sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: tc.backend, AgentBin: "/bin/sh"})
			if err == nil {
				sb.Close()
				t.Fatalf("Prepare succeeded; want a refusal containing %q", tc.reason)
			}
			r := asRefused(t, err)
			if r.Backend != tc.backend || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("refused %s: %q; want %s: ...%q...", r.Backend, r.Reason, tc.backend, tc.reason)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("refusal left %v behind", left)
			}
		})
	}
}

// TestLiveProbeRefusesALauncherThatDoesNotBind stops a preflight that checks
// the kernel's version instead of the boundary: a "launcher" that execs the
// command without restricting anything passes every static check and must
// still be refused by the live probe.
func TestLiveProbeRefusesALauncherThatDoesNotBind(t *testing.T) {
	requireBackend(t, Landlock)
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	before, err := Digest(ws)
	if err != nil {
		t.Fatal(err)
	}
	noop := filepath.Join(fakeTool(t, "wfb", "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n"), "wfb")
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: Landlock, AgentBin: "/bin/sh", Launcher: noop})
	if err == nil {
		sb.Close()
		t.Fatal("Prepare accepted a launcher that restricts nothing")
	}
	want := "could create a file in the workspace " + ws
	if os.Geteuid() != 0 {
		// As non-root the session owns the workspace: the write is what
		// gives it away too.
		want = "could create a file in the workspace"
	}
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
}

// TestLauncherRefusesWhatItCannotEnforce stops a launcher that execs the
// agent after a bad command line or a failed restriction: it must exit
// LauncherRefused and run nothing.
func TestLauncherRefusesWhatItCannotEnforce(t *testing.T) {
	requireBackend(t, Landlock)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"--ro", "/usr", "--"}, "no command after --"},
		{"unknown flag", []string{"--rx", "/usr", "--", "/bin/sh", "-c", "touch " + marker}, `unknown flag "--rx"`},
		{"root uid", []string{"--ro", "/usr", "--uid", "0", "--gid", "0", "--", "/bin/sh", "-c", "touch " + marker}, "want a positive numeric id"},
		{"uid without gid", []string{"--ro", "/usr", "--uid", "65534", "--", "/bin/sh", "-c", "touch " + marker}, "--uid and --gid go together"},
		{"missing path", []string{"--ro", filepath.Join(dir, "nope"), "--", "/bin/sh", "-c", "touch " + marker}, "landlock:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self, append([]string{LauncherCommand}, tc.args...)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != LauncherRefused {
				t.Fatalf("exit %v, want %d; output %s", err, LauncherRefused, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output %q does not contain %q", out, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

// TestDoctorChecksEveryBackendLive stops a doctor that reports a backend
// usable without running it: every backend appears, strongest first, and a
// usable kernel backend's note says its probe ran.
func TestDoctorChecksEveryBackendLive(t *testing.T) {
	privateTmp(t)
	got, err := Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Backend)
		if s.Reason == "" {
			t.Errorf("%s: no reason given", s.Backend)
		}
		if s.Usable && s.Backend != HostUnsafe && !strings.Contains(s.Reason, "temp+rename probed") {
			t.Errorf("%s usable without a probe: %q", s.Backend, s.Reason)
		}
		if _, reason := newBackend(Options{Backend: s.Backend}); reason != "" && s.Usable {
			t.Errorf("%s usable although %s", s.Backend, reason)
		}
	}
	if diff := cmp.Diff(Strength, names); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
}

// TestAutoPicksTheStrongestBackendThatPassesAndSaysWhy stops a default that
// silently runs weaker than the machine allows, or forgets why it passed a
// stronger backend over.
func TestAutoPicksTheStrongestBackendThatPassesAndSaysWhy(t *testing.T) {
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	var want string
	for _, name := range Strength {
		if _, reason := newBackend(Options{Backend: name}); reason == "" {
			want = name
			break
		}
	}
	got, passed, err := Strongest(context.Background(), Options{Workspace: ws, AgentBin: "/bin/sh"})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Strongest = %q (passed over %+v), want %q", got, passed, want)
	}

	// Without bwrap on PATH, auto falls to the next and says why.
	t.Setenv("PATH", traversableDir(t))
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: Auto, AgentBin: "/bin/sh"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Backend() == Bwrap {
		t.Fatal("auto chose bwrap with no bwrap on PATH")
	}
	over := sb.PassedOver()
	if len(over) == 0 || over[0].Backend != Bwrap || !strings.Contains(over[0].Reason, "bubblewrap is not installed") {
		t.Errorf("PassedOver = %+v; want bwrap first, not installed", over)
	}
}

// TestBwrapLaunchClosesItsPipesOnEveryPath stops a launch that leaks the
// block pipe: a released agent must not be able to read the barrier, and a
// launch that never started must not keep descriptors.
func TestBwrapLaunchClosesItsPipesOnEveryPath(t *testing.T) {
	requireBackend(t, Bwrap)
	privateTmp(t)
	sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: Bwrap, AgentBin: "/bin/sh"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	before := openFDs(t)
	for range 3 {
		l, err := sb.Launch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The agent sees only its standard streams: bwrap's fds 3 and 4 do not
	// reach it.
	out, _, started, err := sb.runInside(context.Background(), "/bin/sh", "-c", "ls /proc/$$/fd")
	if started != nil || err != nil {
		t.Fatalf("started %v, err %v", started, err)
	}
	for _, fd := range strings.Fields(out) {
		if fd == "3" || fd == "4" {
			t.Errorf("the agent holds fd %s (bwrap's launch protocol): %q", fd, out)
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors %d before, %d after three unused launches", before, after)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}

// TestBwrapIsAskedItsVersionOncePerBinary stops a sweep from starting
// `bwrap --version` for every cell, and a cache from answering for a
// binary it never asked: the same file is asked once; the file rewritten
// (another size and mtime) is asked again, and so is another path.
func TestBwrapIsAskedItsVersionOncePerBinary(t *testing.T) {
	dir := traversableDir(t)
	log := filepath.Join(dir, "asked")
	fake := filepath.Join(fakeTool(t, "bwrap", "#!/bin/sh\necho x >> "+log+"\necho bubblewrap 0.9.0\n"), "bwrap")
	asked := func() int {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Count(string(b), "x\n")
	}
	c := versionCache{m: map[binaryIdentity][3]int{}}
	for range 3 {
		if v, reason := c.of(fake); reason != "" || v != [3]int{0, 9, 0} {
			t.Fatalf("of(%s) = %v, %q; want 0.9.0", fake, v, reason)
		}
	}
	if n := asked(); n != 1 {
		t.Errorf("bwrap asked %d times for three sandboxes; want once", n)
	}
	writeFile(t, fake, "#!/bin/sh\necho x >> "+log+"\n# rewritten\necho bubblewrap 0.6.1\n", 0o755)
	if v, _ := c.of(fake); v != [3]int{0, 6, 1} {
		t.Errorf("after the binary changed: %v; want its own answer, 0.6.1", v)
	}
	other := filepath.Join(fakeTool(t, "bwrap", "#!/bin/sh\necho x >> "+log+"\necho bubblewrap 0.10.0\n"), "bwrap")
	if v, _ := c.of(other); v != [3]int{0, 10, 0} {
		t.Errorf("another binary: %v; want 0.10.0", v)
	}
	if n := asked(); n != 3 {
		t.Errorf("bwrap asked %d times; want 3 (once per binary)", n)
	}
}
