package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
)

func helperSpec(t *testing.T, mode string, extraEnv ...string) Spec {
	t.Helper()
	return Spec{
		Argv:    []string{testBinary(t)},
		Env:     append([]string{"WFB_PROC_HELPER=" + mode}, extraEnv...),
		Timeout: 30 * time.Second,
		Grace:   200 * time.Millisecond,
	}
}

// alive reports whether pid is a live (not zombie, not gone) process.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitDead polls briefly: the kernel reaps a killed orphan asynchronously.
func waitDead(pid int) bool {
	for i := 0; i < 100; i++ {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the helper never wrote its grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	return pid
}

// A session that times out while its grandchild ignores SIGTERM must leave
// no process behind: the original harness killed only the leader.
func TestTimeoutKillsAGrandchildThatIgnoresSIGTERM(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "gc.pid")
	ps := helperSpec(t, "ignore-term-with-grandchild", "WFB_PIDFILE="+pidfile)
	ps.Timeout = 3 * time.Second // time for the helper (behind agent-exec) to ignore SIGTERM, even under -race
	res := Run(context.Background(), ps)
	if res.State != wfb.StateForcedKill {
		t.Errorf("state = %q, want %q (the leader ignores SIGTERM)", res.State, wfb.StateForcedKill)
	}
	if res.ExitCode != nil {
		t.Errorf("exit code = %d, want none (killed by a signal)", *res.ExitCode)
	}
	if gc := readPid(t, pidfile); !waitDead(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Fatalf("grandchild %d outlived the session", gc)
	}
}

// Descendants must not outlive a leader that exits on its own either.
func TestDescendantsDieWithTheLeader(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "gc.pid")
	res := Run(context.Background(), helperSpec(t, "exit-leaving-grandchild", "WFB_PIDFILE="+pidfile))
	if res.State != wfb.StateExited || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("state %q exit %v, want exited 0", res.State, res.ExitCode)
	}
	if gc := readPid(t, pidfile); !waitDead(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Fatalf("grandchild %d outlived its leader", gc)
	}
}

// A descendant that calls setsid leaves the process group, so a group kill
// misses it; the session's cgroup does not. Without a cgroup (not root) the
// row must say the descendants were contained by the process group only.
func TestADescendantThatLeftTheProcessGroupStillDies(t *testing.T) {
	probe, err := newSessionCgroup()
	if err != nil {
		if os.Getenv("WFB_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("no session cgroup on a machine that must have one: %v", err)
		}
		gate.Skipf(t, "WFB_REQUIRE_SANDBOX", "no session cgroup here (%v); descendants are contained by the process group only", err)
	}
	if err := probe.close(); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "gc.pid")
	res := Run(context.Background(), helperSpec(t, "exit-leaving-setsid-grandchild", "WFB_PIDFILE="+pidfile))
	if res.State != wfb.StateExited {
		t.Fatalf("state %q: %s", res.State, res.StderrTail)
	}
	if res.Containment != "cgroup" || res.KillFailure != "" {
		t.Errorf("containment %q, kill failure %q, with a cgroup available", res.Containment, res.KillFailure)
	}
	if gc := readPid(t, pidfile); !waitDead(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Fatalf("grandchild %d escaped the session by setsid", gc)
	}
}

// A leader that honours SIGTERM within the grace period is a timeout, not
// a forced kill.
func TestTimeoutThenSIGTERMIsRecordedAsTimeout(t *testing.T) {
	ps := helperSpec(t, "exit-on-term")
	// Long enough for the helper (this test binary, under -race on a
	// loaded machine) to be past its start-up when the timeout comes: a
	// SIGTERM during it was once seen to be lost, ending in SIGKILL.
	ps.Timeout = time.Second
	ps.Grace = 10 * time.Second
	res := Run(context.Background(), ps)
	if res.State != wfb.StateTimeout {
		t.Errorf("state = %q, want %q", res.State, wfb.StateTimeout)
	}
	if res.Signal != syscall.SIGTERM.String() {
		t.Errorf("signal = %q, want SIGTERM", res.Signal)
	}
}

func TestCancellationStopsTheSession(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res := Run(ctx, helperSpec(t, "exit-on-term"))
	if res.State != wfb.StateCancelled {
		t.Errorf("state = %q, want %q", res.State, wfb.StateCancelled)
	}
}

// The agent's environment is built from scratch: the harness's own
// variables (API keys among them) never leak in wholesale.
func TestTheEnvironmentIsExactlyWhatTheSpecNames(t *testing.T) {
	t.Setenv("WFB_TEST_SECRET_IN_PARENT", "sk-ant-should-not-leak")
	var lines []string
	ps := helperSpec(t, "print-env-and-stdin", "ONLY_THIS=1")
	ps.Stdin = "the prompt"
	ps.OnStdoutLine = func(l []byte, _ bool) { lines = append(lines, string(l)) }
	res := Run(context.Background(), ps)
	if res.State != wfb.StateExited {
		t.Fatalf("state %q: %s", res.State, res.StderrTail)
	}
	want := []string{"env WFB_PROC_HELPER=print-env-and-stdin", "env ONLY_THIS=1", "stdin the prompt"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("child saw (-want +got):\n%s", diff)
	}
}

// Output is unbounded; what the runner keeps is bounded.
func TestHugeOutputIsBounded(t *testing.T) {
	var last string
	var truncated int
	ps := helperSpec(t, "huge-output")
	ps.OnStdoutLine = func(l []byte, tr bool) {
		if tr {
			truncated++
			if len(l) > MaxLineBytes {
				t.Errorf("a line of %d bytes was handed on; cap is %d", len(l), MaxLineBytes)
			}
		}
		last = string(l)
	}
	res := Run(context.Background(), ps)
	if res.State != wfb.StateExited {
		t.Fatalf("state %q", res.State)
	}
	if len(res.StdoutTail) > tailBytes+100 {
		t.Errorf("stdout tail is %d bytes; bound is %d", len(res.StdoutTail), tailBytes)
	}
	if !strings.Contains(res.StdoutTail, "earlier bytes dropped") {
		t.Errorf("the tail does not say it dropped bytes")
	}
	if truncated != 1 {
		t.Errorf("%d lines flagged truncated, want 1", truncated)
	}
	if last != `{"type":"result","last":true}` {
		t.Errorf("the last line was %q: lines after a huge one were lost", wfb.Clip(last, 80))
	}
	if res.StdoutBytes < 30_000_000 {
		t.Errorf("counted %d stdout bytes, want over 30 MB", res.StdoutBytes)
	}
}

func TestAMissingBinaryIsASpawnFailure(t *testing.T) {
	res := Run(context.Background(), Spec{Argv: []string{"/nonexistent/agent"}, Grace: time.Second})
	if res.State != wfb.StateSpawnFailure || res.SpawnErr == nil {
		t.Fatalf("state %q err %v, want spawn-failure with an error", res.State, res.SpawnErr)
	}
}

// A wfb killed by SIGKILL cannot remove its sessions' cgroups; the next
// session reaps the empty ones, and never a populated one. The test works
// in a parent cgroup of its own, so that it never reaps a session of a test
// running beside it.
func TestStaleSessionCgroupsAreReaped(t *testing.T) {
	probe, err := newSessionCgroup()
	if err != nil {
		t.Skipf("no session cgroup here (%v)", err)
	}
	parent := probe.dir // an empty cgroup of our own, used as the parent
	probe.fd.Close()
	defer os.Remove(parent)
	stale, err := os.MkdirTemp(parent, "wfb-session-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(stale)
	busyDir, err := os.MkdirTemp(parent, "wfb-session-")
	if err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(busyDir)
	if err != nil {
		t.Fatal(err)
	}
	busy := &sessionCgroup{dir: busyDir, fd: fd}
	defer busy.close()
	// Put a process in the busy one: it must survive the reaping.
	cmd := exec.Command("/bin/sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { busy.kill(); cmd.Wait() }()

	reapStaleCgroups(parent, 0)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the empty stale cgroup %s was not reaped (%v)", stale, err)
	}
	if _, err := os.Stat(busyDir); err != nil {
		t.Errorf("a populated session cgroup was removed: %v", err)
	}
}
