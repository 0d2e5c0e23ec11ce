package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// TestStageExecutableLinksOnlyWhatNoSessionCanChange: staging links the
// executable when nobody but root or wfb's user can change it and anyone
// may run it, and copies it (mode 0755) otherwise — a group- or
// other-writable file, one only its owner can run, one another user owns.
func TestStageExecutableLinksOnlyWhatNoSessionCanChange(t *testing.T) {
	cases := []struct {
		name  string
		mode  os.FileMode
		chown int // -1: keep wfb's own uid
		link  bool
	}{
		{"wfb's, 0755", 0o755, -1, true},
		{"wfb's, 0555", 0o555, -1, true},
		{"group-writable", 0o775, -1, false},
		{"other-writable", 0o757, -1, false},
		{"owner-only", 0o700, -1, false},
		{"another user's", 0o755, 12345, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.chown >= 0 {
				gate.RequireRoot(t, "giving a file to another user needs root")
			}
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "agent"), filepath.Join(dir, "staged")
			if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(src, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.chown >= 0 {
				if err := os.Chown(src, c.chown, c.chown); err != nil {
					t.Fatal(err)
				}
			}
			// Through a symlink, as `go run` and npm's .bin present binaries.
			link := filepath.Join(dir, "via-symlink")
			if err := os.Symlink(src, link); err != nil {
				t.Fatal(err)
			}
			if err := StageExecutable(link, dst); err != nil {
				t.Fatal(err)
			}
			si, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			di, err := os.Lstat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if got := os.SameFile(si, di); got != c.link {
				t.Errorf("staged as a link: %v; want %v", got, c.link)
			}
			if !c.link && di.Mode().Perm() != 0o755 {
				t.Errorf("the copy's mode is %v; want 0755", di.Mode().Perm())
			}
			if b, err := os.ReadFile(dst); err != nil || string(b) != "#!/bin/sh\necho hi\n" {
				t.Errorf("staged content %q, %v", b, err)
			}
		})
	}
}

// TestTheProbeThreadAloneTakesTheSessionsIdentity: preflight's probe asks
// the kernel as the session uid from a thread of wfb's own — the session
// uid is refused what root's mode bits keep from it — while every other
// thread stays wfb's, during the probes and after, and no thread is left
// with the session's identity.
func TestTheProbeThreadAloneTakesTheSessionsIdentity(t *testing.T) {
	gate.RequireRoot(t, "switching a thread's identity needs root; as an ordinary user the probe runs as wfb's own uid")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: 61234, Gid: 61234}
	cs := []check{{"-x", dir, "cannot enter"}, {"-r", secret, "cannot read"}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			r, err := probe(context.Background(), cred, cs, "")
			if err != nil || r.failed != 0 {
				t.Errorf("probe as uid %d: %+v, %v; want the first check refused", cred.Uid, r, err)
				return
			}
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if _, err := os.ReadFile(secret); err != nil {
			t.Fatalf("wfb's own thread lost root's reach during a probe: %v", err)
		}
	}
	if r, err := probe(context.Background(), nil, cs, dir); err != nil || !r.ok() {
		t.Errorf("probe as wfb's own identity: %+v, %v; want every check passed", r, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := threadsOf(t, cred.Uid)
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of this process still have uid %d after the probes", left, cred.Uid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// threadsOf counts this process's threads whose real uid is uid.
func threadsOf(t *testing.T, uid uint32) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.FormatUint(uint64(uid), 10) {
				n++
			}
		}
	}
	return n
}
