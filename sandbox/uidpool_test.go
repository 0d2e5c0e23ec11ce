package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// startIn starts script with /bin/sh in the sandbox as its session identity,
// the way the runner starts an agent, with extra variables in its
// environment. It returns once the script printed its first line (its
// "ready"); closing the returned writer ends a script that waits on stdin.
func startIn(t *testing.T, sb *Sandbox, env []string, script string) (pid int, stdin io.WriteCloser) {
	t.Helper()
	l, err := sb.Launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	argv := append(append([]string{}, l.Prefix...), "/bin/sh", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = sb.Workspace()
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + sb.Home(), "TMPDIR=" + sb.TmpDir()}, env...)
	cmd.ExtraFiles = l.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: l.Credential}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	if err := l.Started(context.Background(), cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("the session never got ready: %q, %v", line, err)
	}
	return cmd.Process.Pid, in
}

// TestConcurrentSessionsCannotReachEachOther stops two sessions of a root
// wfb that run at once from sharing uid 65534, which let one read the
// other's /proc/PID/environ (its API key), signal its processes and open
// its private root. Each open sandbox holds its own uid of the pool; on
// the kernel backends the other session's files and processes are out of
// sight anyway, and stay so.
func TestConcurrentSessionsCannotReachEachOther(t *testing.T) {
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			if backend == HostUnsafe {
				gate.RequireRoot(t, "as an ordinary user host-unsafe runs every session as wfb's own uid, so sessions can reach each other; docs/sandboxes.md's limits say so (the pool needs root to switch uids)")
			}
			requireBackend(t, backend)
			privateTmp(t)
			t.Setenv(EnvSessionUIDPool, "4")
			base := traversableDir(t)
			prepare := func(name string) *Sandbox {
				dir := filepath.Join(base, name)
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, dir), Backend: backend, AgentBin: "/bin/sh"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sb.Close() })
				return sb
			}
			a, b := prepare("a"), prepare("b")
			if os.Geteuid() == 0 {
				ua, ub := a.Credential().Uid, b.Credential().Uid
				if ua == ub {
					t.Fatalf("both sessions run as uid %d", ua)
				}
				for _, u := range []uint32{ua, ub} {
					if u > DefaultSessionID || u <= DefaultSessionID-4 {
						t.Errorf("session uid %d lies outside the pool %d..%d", u, DefaultSessionID-3, DefaultSessionID)
					}
				}
			}
			token := "token-of-b-" + strconv.Itoa(os.Getpid())
			secret := filepath.Join(b.Home(), "secret")
			bpid, stop := startIn(t, b, []string{"WFB_TOKEN=" + token}, `echo "$WFB_TOKEN" > "$HOME/secret" && echo ready && read x`)
			defer stop.Close()
			if got := strings.TrimSpace(readFile(t, secret)); got != token {
				t.Fatalf("b's secret = %q; the control write failed, so the test proves nothing", got)
			}
			attacks := []string{
				"cat " + secret,
				"cat /proc/" + strconv.Itoa(bpid) + "/environ",
				"ls " + b.Home(),
			}
			if os.Geteuid() == 0 || backend != Landlock {
				// As an ordinary user both landlock sessions are wfb's uid,
				// and Landlock v3 does not scope signals (docs/sandboxes.md's limits).
				attacks = append(attacks, "kill -STOP "+strconv.Itoa(bpid))
			}
			for _, attack := range attacks {
				out, err := runAs(t, a, attack)
				if err == nil || strings.Contains(out, token) {
					t.Errorf("session a reached session b with %q: %v: %q", attack, err, out)
				}
			}
		})
	}
}

// TestTheSessionUIDPoolHandsOutEachUIDOnce stops a pool that gives a held
// uid away again, forgets to take it back on Close, or accepts a size it
// cannot honour.
func TestTheSessionUIDPoolHandsOutEachUIDOnce(t *testing.T) {
	old := uidLockDir
	uidLockDir = filepath.Join(t.TempDir(), "uids")
	t.Cleanup(func() { uidLockDir = old })
	t.Setenv(EnvSessionUIDPool, "2")
	take := func() (*uidSlot, uint32) {
		t.Helper()
		c := &syscall.Credential{Uid: 1000, Gid: 1000}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a full pool answers at once instead of waiting
		slot, reason, err := acquireSessionUID(ctx, c)
		if reason != "" {
			t.Fatal(reason)
		}
		if err != nil {
			return nil, 0
		}
		return slot, c.Uid
	}
	s1, u1 := take()
	s2, u2 := take()
	if s1 == nil || s2 == nil || u1 != 1000 || u2 != 999 {
		t.Fatalf("uids %d, %d; want 1000 then 999", u1, u2)
	}
	if s3, u3 := take(); s3 != nil {
		t.Fatalf("a third session got uid %d from a pool of two", u3)
	}
	if err := s1.release(); err != nil {
		t.Fatal(err)
	}
	if s4, u4 := take(); s4 == nil || u4 != 1000 {
		t.Errorf("after a release the pool gave %v, uid %d; want 1000 back", s4, u4)
	}
	for _, bad := range []string{"0", "x", "100000"} {
		t.Setenv(EnvSessionUIDPool, bad)
		if _, reason, _ := acquireSessionUID(context.Background(), &syscall.Credential{Uid: 1000}); !strings.Contains(reason, EnvSessionUIDPool) {
			t.Errorf("%s=%s: reason %q", EnvSessionUIDPool, bad, reason)
		}
	}
}

// TestAUIDAnEarlierSessionStillHoldsIsNotHandedOut: a pool uid whose lock
// is free but which a process still has — a straggler of an earlier session,
// or only its zombie, which init has not reaped yet — is skipped: the
// kernel counts the zombie against the next session's RLIMIT_NPROC (a
// session that forks at once was refused its first fork), and a live one
// could signal the next session or read its environment.
func TestAUIDAnEarlierSessionStillHoldsIsNotHandedOut(t *testing.T) {
	gate.RequireRoot(t, "starting a process as another uid needs root; as an ordinary user wfb never switches uids")
	old := uidLockDir
	uidLockDir = filepath.Join(t.TempDir(), "uids")
	t.Cleanup(func() { uidLockDir = old })
	t.Setenv(EnvSessionUIDPool, "2")
	const base = 61234
	take := func() uint32 {
		t.Helper()
		c := &syscall.Credential{Uid: base, Gid: base}
		slot, reason, err := acquireSessionUID(context.Background(), c)
		if reason != "" || err != nil {
			t.Fatal(reason, err)
		}
		if err := slot.release(); err != nil {
			t.Fatal(err)
		}
		return c.Uid
	}
	if u := take(); u != base {
		t.Fatalf("an idle pool gave uid %d; want %d (the control failed, so the test proves nothing)", u, base)
	}
	cmd := exec.Command("/bin/sh", "-c", "read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: base, Gid: base}}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if u := take(); u != base-1 {
		t.Errorf("with a live process of uid %d the pool gave uid %d; want %d", base, u, base-1)
	}
	// A pool of one waits, and says who holds its uid when it gives up.
	t.Setenv(EnvSessionUIDPool, "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = acquireSessionUID(ctx, &syscall.Credential{Uid: base, Gid: base})
	if want := fmt.Sprintf("%d by process %d", base, cmd.Process.Pid); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a pool of one whose uid a process holds: %v; want it to say %q", err, want)
	}
	t.Setenv(EnvSessionUIDPool, "2")
	// The process exits but is not reaped: a zombie of uid base.
	in.Close()
	var st syscall.WaitStatus
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if u := take(); u != base-1 {
		t.Errorf("with a zombie of uid %d the pool gave uid %d; want %d", base, u, base-1)
	}
	if _, err := syscall.Wait4(cmd.Process.Pid, &st, 0, nil); err != nil {
		t.Fatal(err)
	}
	if u := take(); u != base {
		t.Errorf("once the zombie was reaped the pool gave uid %d; want %d back", u, base)
	}
}
