package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
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

// isSessionUID reports whether uid is one a session of this (test) wfb can
// run as: wfb's own when it does not switch, else one of the session uid
// pool (sessions of other tests running at the same time hold the others).
func isSessionUID(t *testing.T, uid int) bool {
	t.Helper()
	cred, err := sandbox.SessionCredential(os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	if cred == nil {
		return uid == os.Geteuid()
	}
	pool := sandbox.DefaultUIDPool
	if v, err := strconv.Atoi(os.Getenv(sandbox.EnvSessionUIDPool)); err == nil && v > 0 {
		pool = v
	}
	return uid <= int(cred.Uid) && uid > int(cred.Uid)-pool
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
				s, out, errOut := testStreams("", nil)
				run(context.Background(), args, s)
				_, rows := resultsOf(t, db)
				if len(rows) != 1 {
					t.Fatalf("%d rows, want 1\nstdout: %s\nstderr: %s", len(rows), out, errOut)
				}
				uid, err := strconv.Atoi(strings.TrimSuffix(rows[0].AgentVersion, ".0.0"))
				if err != nil || !isSessionUID(t, uid) {
					t.Errorf("agent_version %q, want a session uid's: the probe did not run as a session (row: %s %s)",
						rows[0].AgentVersion, rows[0].ErrorKind, rows[0].ErrorDetail)
				}
				noneLeft(t, marker)
			})
		}
	}
}

// floodAgent prints count result events of 4 MiB each (count 0: without
// end), then exits 0.
func floodAgent(t *testing.T, count int) string {
	loop := fmt.Sprintf("i=0; while [ %d -eq 0 ] || [ $i -lt %d ]; do", count, count)
	return fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
`+loop+`
  printf '{"type":"result","subtype":"success","is_error":false,"result":"'
  head -c 4194304 /dev/zero | tr '\0' a
  printf '"}\n'
  i=$((i+1))
done
`)
}

// execWFB runs the real wfb executable with args and returns its exit code,
// stderr and peak RSS in MiB. The test binary starts it (see
// runMeasuringPeakRSS): a process this one starts directly shares this
// one's memory until it execs (os/exec's vfork), and Linux counts this
// process's own peak into the child's — 120 MiB after a test that
// handled large bodies, whatever wfb took.
func execWFB(t *testing.T, wfbBin string, args ...string) (int, string, int64) {
	t.Helper()
	cmd, peakRSS := measuredCommand(t, wfbBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("wfb %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), peakRSS()
}

// measuredCommand is name with args, started by the test binary (see
// execWFB), and the function that returns its peak RSS in MiB once it has
// run. Add to cmd.Env, never replace it.
func measuredCommand(t *testing.T, name string, args ...string) (*exec.Cmd, func() int64) {
	rssFile := filepath.Join(t.TempDir(), "peak-rss")
	cmd := exec.Command(os.Args[0], append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), peakRSSEnv+"="+rssFile)
	return cmd, func() int64 {
		t.Helper()
		b, err := os.ReadFile(rssFile)
		if err != nil {
			t.Fatalf("%s %v: its peak RSS was not measured: %v", name, args, err)
		}
		kib, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatalf("peak RSS %q: %v", b, err)
		}
		return kib >> 10
	}
}

// peakRSSEnv makes the test binary run its arguments as a command and
// write the command's peak RSS (KiB) to the file it names.
const peakRSSEnv = "WFB_TEST_PEAK_RSS_TO"

// runMeasuringPeakRSS runs argv with this process's streams and exit
// code, and writes its peak RSS to out. This process has just exec'd, so
// what the child shares before its own exec is small.
func runMeasuringPeakRSS(out string, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, peakRSSEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// TestAFloodOfHugeResultEventsIsBoundedInMemoryAndTime: an agent printing
// hundreds of MiB of result events costs wfb a bounded amount of memory
// (what the strict parse needs, not every event), and is a session-error
// naming the count; one that never stops is killed at the timeout.
func TestAFloodOfHugeResultEventsIsBoundedInMemoryAndTime(t *testing.T) {
	slowPath(t, "a flood of 240 MiB of result events")
	wfbBin := buildWFB(t)
	const maxRSSMiB = 100
	cases := []struct {
		name      string
		count     int
		timeout   string
		wantKind  string
		wantState []string
		wantIn    string
	}{
		{"60 events of 4 MiB, then exit", 60, "120s", wfb.KindSessionError, []string{wfb.StateExited}, "60 result events"},
		{"without end", 0, "5s", wfb.KindTimeout, []string{wfb.StateTimeout, wfb.StateForcedKill}, "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, db := sessionFixture(t)
			start := time.Now()
			code, stderr, rss := execWFB(t, wfbBin, "session", "--workspace", ws, "--prompt", "p", "--agent", "claude",
				"--agent-bin", floodAgent(t, c.count), "--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", c.timeout,
				"--mock-script", writeScript(t, runOKScript))
			t.Logf("%s: exit %d after %s, peak RSS %d MiB", c.name, code, time.Since(start).Round(time.Millisecond), rss)
			r := boundedFloodRow(t, db, code, stderr, rss, maxRSSMiB)
			if r.ErrorKind != c.wantKind || !slices.Contains(c.wantState, r.ProcessState) || !strings.Contains(r.ErrorDetail, c.wantIn) {
				t.Errorf("row %s / %s: %s; want %s / %v naming %q", r.ErrorKind, r.ProcessState, r.ErrorDetail, c.wantKind, c.wantState, c.wantIn)
			}
		})
	}
}

// boundedFloodRow returns the one row of db, written by a wfb that exited
// with code and peaked at rss MiB after an agent flooded it with output,
// and fails t when the row's evidence or wfb's memory was not held to its
// bound (maxRSSMiB).
func boundedFloodRow(t *testing.T, db string, code int, stderr string, rss, maxRSSMiB int64) store.Result {
	t.Helper()
	rows := storedRows(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1 (exit %d)\n%s", len(rows), code, stderr)
	}
	r := rows[0]
	if len(r.ResultEvent) > store.MaxEvidenceBytes+100 {
		t.Errorf("result_event holds %d bytes, want at most the evidence bound %d", len(r.ResultEvent), store.MaxEvidenceBytes)
	}
	if rss > maxRSSMiB {
		t.Errorf("wfb peaked at %d MiB RSS, want at most %d: it kept the agent's output", rss, maxRSSMiB)
	}
	return r
}

// TestALineOverTheLimitIsASessionErrorNamingIt: a stdout line over the
// line limit is never parsed, and fails the session saying so, even when a
// valid result event follows.
func TestALineOverTheLimitIsASessionErrorNamingIt(t *testing.T) {
	slowPath(t, "a 17 MB stdout line")
	r := claudeSessionRow(t, `printf '{"type":"system","subtype":"x","pad":"'
head -c 17000000 /dev/zero | tr '\0' a
printf '"}\n'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`)
	if r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, "16 MiB line limit") {
		t.Errorf("row %s: %s; want a session-error naming the 16 MiB line limit", r.ErrorKind, r.ErrorDetail)
	}
}

// TestAnOrdinaryUsersBwrapSessionIsHeldToItsLimits: without root a
// session has no cgroup of its own, nor a uid whose RLIMIT_NPROC counts it
// alone, so wfb's watch is what holds it to its limits — and the watch
// must see what bubblewrap's --new-session takes out of the agent's process
// group. A fork bomb inside bwrap, run by an ordinary user's wfb, is
// stopped at the process limit and the row says so; a watch that counted
// the process group let it run to the session's timeout.
func TestAnOrdinaryUsersBwrapSessionIsHeldToItsLimits(t *testing.T) {
	slowPath(t, "a fork bomb in an ordinary user's bwrap session")
	requireBackend(t, sandbox.Bwrap)
	marker := fmt.Sprintf("wfb-user-limit-%d", time.Now().UnixNano())
	// The bomb is the agent's child and the agent lives on, as in
	// TestAnAgentOverItsResourceLimitsIsStoppedAndRecorded: under bwrap an
	// agent that itself dies of a refused fork takes the bomb with it.
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
sh -c 'i=0; while [ $i -lt 300 ]; do sh -c "sleep 30" `+marker+` & i=$((i+1)); done; wait' `+marker+`; exec sleep 30
`)
	cmd, db := ordinaryUserSession(t, buildWFB(t), sandbox.Bwrap, agent, runOKScript, "--timeout", "20s", "--pids-max=64")
	out, _ := cmd.CombinedOutput()
	defer noneLeft(t, marker)
	_, rows := resultsOf(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1\n%s", len(rows), out)
	}
	if r := rows[0]; r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, "resource limit: the session reached its process limit") {
		t.Errorf("row %s / %s: %s; want a session-error naming the process limit", r.ErrorKind, r.ProcessState, r.ErrorDetail)
	}
}

// ordinaryUserSession is the command of a `wfb session` on backend run by
// an ordinary user's real wfb (the built one, copied where that user
// reaches it), with the agent executable given, the mock script's text and
// more flags; and the results file it writes. Without root the session has
// no cgroup of its own and runs as wfb's own uid.
func ordinaryUserSession(t *testing.T, built, backend, agent, script string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	home, cred := ordinaryUser(t)
	wfbBin := copyTo(t, built, home)
	scriptFile := copyTo(t, writeScript(t, script), home)
	ws, tmp := filepath.Join(home, "ws"), filepath.Join(home, "tmp")
	for _, d := range []string{ws, tmp, filepath.Join(home, "state")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ownedBy(t, cred, home)
	db := filepath.Join(home, "wfb.db")
	cmd := exec.Command(wfbBin, append([]string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
		"--sandbox", backend, "--db", db, "--mock-script", scriptFile}, flags...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_STATE_HOME="+filepath.Join(home, "state"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd, db
}

// TestAnAgentOverItsResourceLimitsIsStoppedAndRecorded: an agent that
// starts processes without end (a bounded fork bomb: 300 sleepers, far over
// the limit of 64) and one that takes memory without end (1.5 GiB, over a
// limit of 256 MiB) are each stopped at their limit, and the row says which
// limit, on every backend; nothing of them is left.
func TestAnAgentOverItsResourceLimitsIsStoppedAndRecorded(t *testing.T) {
	slowPath(t, "fork bombs and memory hogs on every backend")
	cases := []struct {
		name, script, flag, want string
	}{
		// The bomb is a child of the agent, which lives on (as a sleeper)
		// when RLIMIT_NPROC ends the bomb's shell: the session is then over
		// its limit until wfb stops it, on every backend. An agent that
		// itself dies of a refused fork is
		// TestAnAgentThatEndsLeavingItsProcessLimitIsStoppedAtIt's (under
		// bwrap its PID namespace takes the bomb with it first).
		{"fork bomb", `sh -c 'i=0; while [ $i -lt 300 ]; do sh -c "sleep 30" MARKER & i=$((i+1)); done; wait' MARKER; exec sleep 30`, "--pids-max=64", "process limit"},
		{"memory hog", `head -c 1500M /dev/zero | sh -c 'tail' MARKER > /dev/null`, "--memory-max-mib=256", "memory limit"},
	}
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Bwrap, sandbox.Landlock} {
		for _, c := range cases {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				requireBackend(t, backend)
				marker := fmt.Sprintf("wfb-limit-%d", time.Now().UnixNano())
				agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
`+strings.ReplaceAll(c.script, "MARKER", marker)+"\n")
				ws, db := sessionFixture(t)
				s, out, errOut := testStreams("", nil)
				run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
					"--sandbox", backend, "--db", db, "--timeout", "20s", c.flag, "--mock-script", writeScript(t, runOKScript)}, s)
				rows := storedRows(t, db)
				if len(rows) != 1 {
					t.Fatalf("%d rows\n%s\n%s", len(rows), out, errOut)
				}
				r := rows[0]
				if r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, "resource limit: the session reached its "+c.want) {
					t.Errorf("row %s / %s: %s; want a session-error naming the %s", r.ErrorKind, r.ProcessState, r.ErrorDetail, c.want)
				}
				noneLeft(t, marker)
			})
		}
	}
}

// TestAnAgentThatEndsLeavingItsProcessLimitIsStoppedAtIt: an agent that
// ends leaving as many processes running as its process limit reached
// that limit, though agent-exec kills them as the agent ends — before wfb's
// watch, which polls every 25 ms, can count them. A fork bomb's shell that
// RLIMIT_NPROC stops ends so: its fork failed at twice the limit. The row
// named no limit ("the agent printed no result event"), so under load
// TestTheBenchSetsTheLimitsAndAFlagOutOfRangeIsBadInput and the fork bombs
// of TestAnAgentOverItsResourceLimitsIsStoppedAndRecorded failed now and
// then; now agent-exec says how many processes the agent left and the row
// names the process limit. Not under bwrap: its PID namespace ends with the
// agent and takes what the agent left with it before anything can count
// it, so there the watch alone sees a fork bomb.
func TestAnAgentThatEndsLeavingItsProcessLimitIsStoppedAtIt(t *testing.T) {
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Landlock} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			// The marker is sleep's own argument (seconds), so each process
			// left carries it.
			marker := fmt.Sprintf("3000.%d", time.Now().UnixNano())
			agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
i=0; while [ $i -lt 16 ]; do sleep `+marker+` & i=$((i+1)); done
exit 0
`)
			ws, db := sessionFixture(t)
			s, out, errOut := testStreams("", nil)
			run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
				"--sandbox", backend, "--db", db, "--timeout", "20s", "--pids-max=16", "--mock-script", writeScript(t, runOKScript)}, s)
			rows := storedRows(t, db)
			if len(rows) != 1 {
				t.Fatalf("%d rows\n%s\n%s", len(rows), out, errOut)
			}
			if r := rows[0]; r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, "resource limit: the session reached its process limit") {
				t.Errorf("row %s / %s: %s; want a session-error naming the process limit", r.ErrorKind, r.ProcessState, r.ErrorDetail)
			}
			noneLeft(t, marker)
		})
	}
}

// TestTheBenchSetsTheLimitsAndAFlagOutOfRangeIsBadInput: a bench's pids_max
// holds for its sessions (the fork bomb is stopped at it), and a limit flag
// outside the bench's range is refused before anything runs.
func TestTheBenchSetsTheLimitsAndAFlagOutOfRangeIsBadInput(t *testing.T) {
	slowPath(t, "a fork bomb held to the bench's limit")
	marker := fmt.Sprintf("wfb-bench-limit-%d", time.Now().UnixNano())
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
i=0; while [ $i -lt 300 ]; do sh -c 'sleep 30' `+marker+` & i=$((i+1)); done; wait
`)
	bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: host-unsafe
timeout: 20s
pids_max: 32
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: claude, agent_bin: %s}]
`, agent))
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db, "--memory-max-mib", "63"}, s); code != 2 {
		t.Fatalf("--memory-max-mib 63: exit %d, want 2\n%s", code, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused run created %s", db)
	}
	s, _, errOut = testStreams("", nil)
	run(context.Background(), []string{"run", bench, "--db", db}, s)
	_, rows := resultsOf(t, db)
	if len(rows) != 1 || !strings.Contains(rows[0].ErrorDetail, "pids limit 32") {
		t.Fatalf("rows %+v, want one stopped at the bench's pids limit 32\n%s", rows, errOut)
	}
	noneLeft(t, marker)
}

// TestWfbKilledOrHungUpLeavesNoAgentAndASoundFile kills a real wfb mid-run:
// SIGHUP (the terminal closed) is handled like SIGTERM — the run ends
// interrupted, the cell in flight gets its row, exit 130 — and after SIGHUP
// or even SIGKILL no process of the agent survives (one it detached with
// setsid included), under host-unsafe and landlock, which have no PID
// namespace to take them down.
func TestWfbKilledOrHungUpLeavesNoAgentAndASoundFile(t *testing.T) {
	t.Parallel()
	slowPath(t, "SIGHUP and SIGKILL to a real wfb")
	wfbBin := buildWFB(t)
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Landlock} {
		for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGKILL} {
			t.Run(backend+"/"+sig.String(), func(t *testing.T) {
				requireBackend(t, backend)
				marker := fmt.Sprintf("wfb-survivor-%d", time.Now().UnixNano())
				agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
setsid sh -c 'sleep 300' `+marker+` </dev/null >/dev/null 2>&1 &
exec sh -c 'sleep 300' `+marker+`
`)
				bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: %s
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: claude, agent_bin: %s}]
`, backend, agent))
				// A wfb killed by SIGKILL leaves its temp dirs: keep them here.
				scratch := sandboxtest.SharedDir(t, "wfb-killed-")
				cmd := exec.Command(wfbBin, "run", bench, "--db", db)
				cmd.Env = append(os.Environ(), "TMPDIR="+scratch)
				stderr := signalInFlight(t, cmd, sig, marker, db)
				runs, rows := resultsOf(t, db)
				if sig == syscall.SIGKILL {
					return
				}
				if code := cmd.ProcessState.ExitCode(); code != 130 {
					t.Errorf("exit %d after SIGHUP, want 130\n%s", code, stderr)
				}
				if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || len(rows) != 1 || rows[0].ErrorKind != wfb.KindCancelled {
					t.Errorf("after SIGHUP: runs %+v rows %+v; want one interrupted run with the cell in flight recorded cancelled", runs, rows)
				}
			})
		}
	}
}

// TestSharedMemoryCountsInTheMemoryLimit stops the uncounted
// memory: under --memory-max-mib 256 an agent wrote 1.2 GB into a
// memfd_create file or into /dev/shm and was recorded ok (host-unsafe and
// bwrap), and under host-unsafe the file stayed in the host's /dev/shm
// after the session. A memfd counts in the limit on every backend; a
// /dev/shm file counts where /dev/shm is the host's (host-unsafe,
// landlock: the session's uid owns it, and it is removed when the session
// ends) and is refused at the cap of bwrap's own /dev/shm.
func TestSharedMemoryCountsInTheMemoryLimit(t *testing.T) {
	slowPath(t, "sessions that take shared memory to their limit")
	gate.RequireRoot(t, "a /dev/shm file is the session's only when it runs as a uid of its own (wfb as root)")
	// The session uid runs it: a python3 under root's home (pyenv) is out
	// of its reach.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("/usr/bin/python3 makes the memfd; not installed")
	}
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Landlock, sandbox.Bwrap} {
		for _, c := range []struct{ name, script string }{
			{"memfd", python + ` -c 'import os,time
fd = os.memfd_create("wfb-shm-MARKER")
for _ in range(600):
    os.write(fd, bytes(1 << 20))
time.sleep(30)'`},
			{"dev-shm", `if head -c 600M /dev/zero > /dev/shm/MARKER; then sleep 30; else echo "/dev/shm refused the write" >&2; exit 3; fi`},
		} {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				requireBackend(t, backend)
				marker := fmt.Sprintf("wfb-shm-%d", time.Now().UnixNano())
				agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
`+strings.ReplaceAll(c.script, "MARKER", marker)+"\n")
				ws, db := sessionFixture(t)
				s, out, errOut := testStreams("", nil)
				run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
					"--sandbox", backend, "--db", db, "--timeout", "25s", "--memory-max-mib=256", "--mock-script", writeScript(t, runOKScript)}, s)
				rows := storedRows(t, db)
				if len(rows) != 1 {
					t.Fatalf("%d rows\n%s\n%s", len(rows), out, errOut)
				}
				r := rows[0]
				// Under bwrap /dev/shm is a tmpfs capped at the limit, and
				// landlock grants no write there: the write is refused, or
				// the watch stops it first.
				counted := strings.Contains(r.ErrorDetail, "resource limit: the session reached its memory limit")
				refused := c.name == "dev-shm" && backend != sandbox.HostUnsafe && strings.Contains(r.ErrorDetail, "/dev/shm refused the write")
				if r.OK || !(counted || refused) {
					t.Errorf("row ok=%v %s: %s; want the memory limit named (or, for /dev/shm under bwrap or landlock, the write refused)", r.OK, r.ErrorKind, r.ErrorDetail)
				}
				if _, err := os.Stat(filepath.Join("/dev/shm", marker)); err == nil {
					os.Remove(filepath.Join("/dev/shm", marker))
					t.Errorf("/dev/shm/%s outlived the session", marker)
				}
			})
		}
	}
}
