package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
)

// requireBackend skips a test whose sandbox backend this machine cannot
// run, or fails it under WFB_REQUIRE_SANDBOX=1; host-unsafe runs anywhere.
func requireBackend(t *testing.T, name string) {
	t.Helper()
	if name != sandbox.HostUnsafe {
		sandboxtest.RequireBackend(t, name)
	}
}

// fakeAgent writes an executable shell script named claude into a shared
// directory and returns its path.
func fakeAgent(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(sandboxtest.SharedDir(t, "wfb-fake-agent-"), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// noneLeft fails the test when a process with marker outlives a moment
// for the kernel to reap it, and kills what it finds.
func noneLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := sandboxtest.ProcessesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				var n int
				fmt.Sscan(pid, &n)
				if p, err := os.FindProcess(n); err == nil {
					p.Kill()
				}
			}
			t.Fatalf("processes outlived wfb's session: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionUID is the uid a session of this (test) wfb runs as.
func sessionUID(t *testing.T) int {
	t.Helper()
	cred, err := sandbox.SessionCredential(os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	if cred == nil {
		return os.Geteuid()
	}
	return int(cred.Uid)
}

// versionProbeAgent answers --version with its uid as the version and
// leaves a detached process behind; as the session it just fails.
func versionProbeAgent(t *testing.T, marker string) string {
	return fakeAgent(t, `if [ "$1" = "--version" ]; then
  (sh -c 'sleep 300' `+marker+` >/dev/null 2>&1 </dev/null &)
  echo "$(id -u).0.0 (fake agent)"
  exit 0
fi
exit 3
`)
}

// TestTheVersionProbeRunsAsTheSessionInItsSandbox: the agent's --version
// probe is a process of the session, through `wfb session` and `wfb run`
// on every backend: it runs as the session's uid (the version it reports
// is its uid) and nothing it leaves behind outlives wfb.
func TestTheVersionProbeRunsAsTheSessionInItsSandbox(t *testing.T) {
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Bwrap, sandbox.Landlock} {
		for _, command := range []string{"session", "run"} {
			t.Run(backend+"/"+command, func(t *testing.T) {
				requireBackend(t, backend)
				marker := fmt.Sprintf("wfb-probe-leftover-%d", time.Now().UnixNano())
				agent := versionProbeAgent(t, marker)
				want := fmt.Sprintf("%d.0.0", sessionUID(t))
				var args []string
				var db string
				if command == "session" {
					var ws string
					ws, db = sessionFixture(t)
					args = []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
						"--sandbox", backend, "--db", db, "--timeout", "30s", "--mock-script", writeScript(t, runOKScript)}
				} else {
					var bench string
					bench, db = runFixture(t, runOKScript, fmt.Sprintf(`sandbox: %s
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: claude, agent_bin: %s}]
`, backend, agent))
					args = []string{"run", bench, "--db", db}
				}
				s, out, errOut := TestStreams("", nil)
				run(context.Background(), args, s)
				_, rows := resultsOf(t, db)
				if len(rows) != 1 {
					t.Fatalf("%d rows, want 1\nstdout: %s\nstderr: %s", len(rows), out, errOut)
				}
				if rows[0].AgentVersion != want {
					t.Errorf("agent_version %q, want %q: the probe did not run as the session uid (row: %s %s)",
						rows[0].AgentVersion, want, rows[0].ErrorKind, rows[0].ErrorDetail)
				}
				noneLeft(t, marker)
			})
		}
	}
}
