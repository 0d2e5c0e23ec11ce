// Package gate tells, in one line, what a test binary skipped for want of
// something the machine lacks (a sandbox backend, Chromium, an agent CLI,
// root) and how to make it mandatory. `go test ./...` shows a passing
// package's output to no one, so the line goes to the terminal when there
// is one (and to stdout, which -v shows). Gated tests call Skipf instead of
// t.Skipf; their package's TestMain calls Report after m.Run.
package gate

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	skipped = map[string][]string{} // the env var that makes them mandatory → test names
)

// Skipf records t as skipped for want of what env (e.g. WFB_REQUIRE_SANDBOX)
// makes mandatory, then skips it with the message.
func Skipf(t testing.TB, env, format string, args ...any) {
	t.Helper()
	mu.Lock()
	skipped[env] = append(skipped[env], t.Name())
	mu.Unlock()
	t.Skipf(format, args...)
}

// EnvRequireRoot makes a test that needs root fail, not skip, where the
// tests do not run as root. CI runs them as root and sets it, so a root-only
// test cannot skip there unnoticed.
const EnvRequireRoot = "WFB_REQUIRE_ROOT"

// RequireRoot returns when the test runs as root. Otherwise it skips t,
// recorded as gated by EnvRequireRoot, or fails it when EnvRequireRoot is
// "1". why says what the test does that needs root.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv(EnvRequireRoot) == "1" {
		t.Fatalf("%s; the tests do not run as root and %s=1", why, EnvRequireRoot)
	}
	Skipf(t, EnvRequireRoot, "%s; not root here (%s=1 makes this a failure)", why, EnvRequireRoot)
}

// Line is the summary of what was skipped, "" when nothing was.
func Line(pkg string) string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	envs := make([]string, 0, len(skipped))
	n := 0
	for env, names := range skipped {
		envs = append(envs, env)
		n += len(names)
	}
	slices.Sort(envs)
	var parts []string
	for _, env := range envs {
		names := skipped[env]
		shown := names[:min(len(names), 3)]
		more := ""
		if len(names) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(names)-len(shown))
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s=1 makes them mandatory)", strings.Join(shown, ", "), more, env))
	}
	return fmt.Sprintf("wfb %s: skipped %d gated tests this machine cannot run: %s; go test -v says why\n", pkg, n, strings.Join(parts, "; "))
}

// Report writes Line to stdout and, unless -v already shows stdout, to the
// terminal if the tests run on one. Call it from TestMain after m.Run.
func Report(pkg string) {
	line := Line(pkg)
	if line == "" {
		return
	}
	io.WriteString(os.Stdout, line)
	if testing.Verbose() {
		return
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		io.WriteString(tty, line)
		tty.Close()
	}
}

// Main runs a package's tests, reports what they skipped and exits: the
// whole TestMain of a gated package without one of its own.
func Main(m *testing.M, pkg string) {
	code := m.Run()
	Report(pkg)
	os.Exit(code)
}
