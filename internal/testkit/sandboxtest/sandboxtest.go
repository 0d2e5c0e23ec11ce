// Package sandboxtest holds what tests outside the sandbox package share to
// decide whether a sandbox backend can run on this machine.
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/sandbox"
)

var (
	doctorOnce   sync.Once
	doctorStatus []sandbox.Status
	doctorErr    error
)

// RequireBackend skips a test whose backend this machine cannot run (by
// sandbox.Doctor's live preflight), or fails it under WFB_REQUIRE_SANDBOX=1.
// A kernel without Landlock stays a skip even then: the backend is refused
// with the kernel's reason, which is what must happen, not a weaker run.
func RequireBackend(t testing.TB, name string) {
	t.Helper()
	statuses := Statuses(t)
	i := slices.IndexFunc(statuses, func(s sandbox.Status) bool { return s.Backend == name })
	if i < 0 {
		t.Fatalf("doctor does not know the %s backend", name)
	}
	st := statuses[i]
	if st.Usable {
		return
	}
	if name == sandbox.Landlock && (strings.Contains(st.Reason, "no Landlock support") || strings.Contains(st.Reason, "Landlock is built into this kernel but not enabled") || strings.Contains(st.Reason, "Landlock ABI is v")) {
		t.Skipf("landlock refused on this kernel, as it must be: %s", st.Reason)
	}
	if os.Getenv("WFB_REQUIRE_SANDBOX") == "1" {
		t.Fatalf("WFB_REQUIRE_SANDBOX=1 and the %s backend is not usable here: %s", name, st.Reason)
	}
	gate.Skipf(t, "WFB_REQUIRE_SANDBOX", "the %s backend is not usable here (WFB_REQUIRE_SANDBOX=1 makes this a failure): %s", name, st.Reason)
}

// Statuses is sandbox.Doctor's answer on this machine, asked once per test
// binary.
func Statuses(t testing.TB) []sandbox.Status {
	t.Helper()
	doctorOnce.Do(func() { doctorStatus, doctorErr = sandbox.Doctor(context.Background()) })
	if doctorErr != nil {
		t.Fatalf("doctor: %v", doctorErr)
	}
	return doctorStatus
}

// SharedDir is a fresh directory any uid can traverse and read (a root
// wfb's sessions run as another uid), its real path, removed after the
// test.
func SharedDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ProcessesWith lists the pids whose command line holds marker.
func ProcessesWith(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}
