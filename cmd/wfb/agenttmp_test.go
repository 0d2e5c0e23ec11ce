package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
)

// npmAgentUnderTmp installs a fake Claude Code the way `npm install
// --prefix /tmp/…` lays it out (node_modules/.bin/claude a symlink into
// the package), printing script's output, and returns the .bin path.
func npmAgentUnderTmp(t *testing.T, script string) string {
	t.Helper()
	prefix, err := os.MkdirTemp("/tmp", "wfb-npm-prefix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prefix) })
	pkg := filepath.Join(prefix, "node_modules", "@fake", "agent")
	for _, d := range []string{prefix, filepath.Join(prefix, "node_modules"), filepath.Join(prefix, "node_modules", ".bin"), filepath.Join(prefix, "node_modules", "@fake"), pkg, filepath.Join(pkg, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(prefix, "node_modules", ".bin", "claude")
	if err := os.Symlink("../@fake/agent/bin/claude", bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAnAgentInstalledUnderTmpRunsUnderEveryBackend stops the issue's
// bwrap failure for a CLI installed the way `npm install --prefix /tmp/x`
// installs it (node_modules/.bin/claude a symlink into the package): every
// session failed with "bwrap: Can't make symlink at …/.bin/claude: File
// exists" — the version probe's launch made the link in the sandbox's
// private tmp after the agent's launch had been prepared to make it too —
// and the row said only "the agent printed no result event". The same
// layout under /home or /opt worked. Two sessions in a row each run, under
// every backend this machine has.
func TestAnAgentInstalledUnderTmpRunsUnderEveryBackend(t *testing.T) {
	t.Parallel()
	bin := npmAgentUnderTmp(t, `#!/bin/sh
[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
cat >/dev/null
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`)
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Landlock, sandbox.Bwrap} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			for i := range 2 {
				ws, db := sessionFixture(t)
				s, out, errOut := testStreams("", nil)
				run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", bin,
					"--sandbox", backend, "--db", db, "--timeout", "60s", "--mock-script", writeScript(t, runOKScript)}, s)
				rows := storedRows(t, db)
				if len(rows) != 1 || !rows[0].OK {
					t.Fatalf("session %d: %+v\n%s\n%s", i, rows, out, errOut)
				}
			}
		})
	}
}

// TestASilentFailureNamesItsStderr stops a session that printed nothing
// on stdout from being recorded as only "the agent printed no result
// event": the last line of its stderr (where a launcher's own failure is)
// is in the detail.
func TestASilentFailureNamesItsStderr(t *testing.T) {
	r := claudeSessionRow(t, `echo "first line" >&2; echo "bwrap: Can't make symlink at /tmp/x: File exists" >&2; exit 1`)
	if r.OK || !strings.Contains(r.ErrorDetail, "its stderr ends: bwrap: Can't make symlink at /tmp/x: File exists") {
		t.Errorf("row %s: %q", r.ErrorKind, r.ErrorDetail)
	}
}

// TestDoctorChecksAnAgentUnderEveryBackend stops wfb doctor from calling a
// backend usable that cannot run the user's agent: bwrap passed its own
// preflight while every session of a CLI installed under /tmp failed. With
// --agent-bin, each usable backend runs the agent's version probe as a
// session would, and says the version, or why not (exit 1).
func TestDoctorChecksAnAgentUnderEveryBackend(t *testing.T) {
	good := npmAgentUnderTmp(t, "#!/bin/sh\necho 'claude 1.2.3 (fake)'\n")
	bad := fakeAgent(t, "echo 'cannot find my runtime' >&2; exit 7\n")
	out, errOut, code := wfbCmd(t, "doctor", "--format", "json", "--agent-bin", good, "--agent-bin", bad)
	if code != exitFailed {
		t.Errorf("exit %d, want 1 (an agent check failed): %s", code, errOut)
	}
	var rows []struct {
		Backend, Reason string
		Usable          bool
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checked := map[string]bool{}
	for _, r := range rows {
		backend, bin, ok := strings.Cut(r.Backend, " agent ")
		if !ok {
			continue
		}
		checked[backend] = true
		switch bin {
		case good:
			if !r.Usable || r.Reason != "version 1.2.3" {
				t.Errorf("%s: usable %v, %q; want the version", r.Backend, r.Usable, r.Reason)
			}
		case bad:
			if r.Usable || !strings.Contains(r.Reason, "it exited 7; its stderr ends: cannot find my runtime") {
				t.Errorf("%s: usable %v, %q; want why not", r.Backend, r.Usable, r.Reason)
			}
		}
	}
	for _, st := range sandboxtest.Statuses(t) {
		if st.Usable && !checked[st.Backend] {
			t.Errorf("no agent check under %s", st.Backend)
		}
	}
}
