package sandbox

import (
	"os"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// TestMain says, in one line, which backend tests skipped (see gate).
func TestMain(m *testing.M) { gate.Main(m, "sandbox") }

// EnvRequireSandbox makes kernel-backend tests fail instead of skip when the
// machine cannot run them (CI installs bubblewrap and sets it).
const EnvRequireSandbox = "WFB_REQUIRE_SANDBOX"

// requireBackend skips (or, under WFB_REQUIRE_SANDBOX=1, fails) a test whose
// backend this machine cannot run, saying why. A kernel without Landlock is
// a skip even then, but only after the test has shown that Prepare refuses
// it with that reason.
func requireBackend(t *testing.T, name string) {
	t.Helper()
	_, reason := newBackend(Options{Backend: name})
	if reason == "" {
		return
	}
	if name == Landlock {
		if _, err := landlockABI(); err != nil {
			sb, perr := Prepare(t.Context(), Options{Workspace: t.TempDir(), Backend: Landlock, AgentBin: "/bin/sh"})
			if perr == nil {
				sb.Close()
				t.Fatalf("the kernel has no usable Landlock (%s) but Prepare accepted the landlock backend", reason)
			}
			t.Skipf("landlock backend refused on this kernel, as it must be: %v", perr)
		}
	}
	if os.Getenv(EnvRequireSandbox) == "1" {
		t.Fatalf("%s=1 and the %s backend is not usable here: %s", EnvRequireSandbox, name, reason)
	}
	gate.Skipf(t, EnvRequireSandbox, "the %s backend is not usable here (set %s=1 to make this a failure): %s", name, EnvRequireSandbox, reason)
}

// exactSessionUID runs a test with a session uid pool of one: a test that
// names the session uid (65534) in a refusal then waits for that uid while
// another package's session holds it, instead of being handed the next uid
// of the pool. The test must not hold two sandboxes at once.
func exactSessionUID(t *testing.T) {
	t.Helper()
	t.Setenv(EnvSessionUIDPool, "1")
}
