package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// detachedSleeper is shell that starts, in a session of its own, a process
// that ignores every signal a user sends and lives on (its command line
// holds marker) — what a dev server an agent started looks like.
func detachedSleeper(marker string) string {
	return `setsid sh -c 'trap "" TERM INT HUP; while :; do sleep 1; done' ` + marker + ` </dev/null >/dev/null 2>&1 &
`
}

// signalInFlight starts wfb's cmd, sends it sig once the agent and the
// process it detached are up (two processes carry marker), waits for it to
// end and checks that no process carrying marker is left and that the
// results file db is sound. It returns what wfb wrote on stderr.
func signalInFlight(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, marker, db string) string {
	t.Helper()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent and its detached process", func() bool { return len(sandboxtest.ProcessesWith(marker)) >= 2 })
	cmd.Process.Signal(sig)
	cmd.Wait()
	noneLeft(t, marker)
	integrityOK(t, db)
	return stderr.String()
}

// TestASignalledSessionOfAnOrdinaryUserLeavesNoProcess sends INT, TERM and
// HUP to an ordinary user's real wfb while its session's agent works and
// has left a detached process (another session, ignoring the signals): the
// run ends interrupted with its cell cancelled, exit 130, the file sound,
// and no process of the session is left — whether the agent ends at the
// runner's SIGTERM (agent-exec is what is left to clean up) or ignores it
// too (the runner's SIGKILL after the grace period). Without root there is
// no cgroup to kill: before, on host-unsafe and landlock the detached
// process outlived wfb.
func TestASignalledSessionOfAnOrdinaryUserLeavesNoProcess(t *testing.T) {
	t.Parallel()
	slowPath(t, "signals to a real wfb on every backend")
	wfbBin := buildWFB(t)
	agents := map[string]string{
		"agent exits on TERM": `exec sh -c 'sleep 300' MARKER`,
		"agent ignores TERM":  `trap '' TERM INT HUP; sh -c 'while :; do sleep 1; done' MARKER`,
	}
	signals := map[string]syscall.Signal{sandbox.HostUnsafe: syscall.SIGINT, sandbox.Landlock: syscall.SIGTERM, sandbox.Bwrap: syscall.SIGHUP}
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Landlock, sandbox.Bwrap} {
		for name, script := range agents {
			sig := signals[backend]
			t.Run(backend+"/"+sig.String()+"/"+name, func(t *testing.T) {
				requireBackend(t, backend)
				marker := fmt.Sprintf("wfb-signalled-%d", time.Now().UnixNano())
				agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
`+detachedSleeper(marker)+strings.ReplaceAll(script, "MARKER", marker)+"\n")
				cmd, db := ordinaryUserSession(t, wfbBin, backend, agent, runOKScript, "--timeout", "5m")
				stderr := signalInFlight(t, cmd, sig, marker, db)
				if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
					t.Errorf("exit %d after %v, want %d\n%s", code, sig, exitInterrupted, stderr)
				}
				runs, rows := resultsOf(t, db)
				if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || runs[0].FinishedAt == nil ||
					len(rows) != 1 || rows[0].ErrorKind != wfb.KindCancelled || rows[0].ProcessState != wfb.StateCancelled {
					t.Errorf("runs %+v rows %+v; want one finished interrupted run, its cell cancelled", runs, rows)
				}
			})
		}
	}
}

// TestASignalDuringSetupOrVerifyLeavesNoProcess signals a real wfb while a
// task's setup (before the agent) or verify (after it) command runs, having
// detached a process of its own: the run ends interrupted, the cell
// cancelled during that step, exit 130, and nothing the command started is
// left. Before, the command's process group was all wfb killed, so the
// detached process outlived wfb, as root too.
func TestASignalDuringSetupOrVerifyLeavesNoProcess(t *testing.T) {
	t.Parallel()
	slowPath(t, "signals to a real wfb during setup and verify")
	wfbBin := buildWFB(t)
	for _, c := range []struct {
		step string
		sig  syscall.Signal
	}{{"setup", syscall.SIGTERM}, {"verify", syscall.SIGINT}} {
		t.Run(c.step, func(t *testing.T) {
			marker := fmt.Sprintf("wfb-step-%d", time.Now().UnixNano())
			command := strings.ReplaceAll(detachedSleeper(marker)+`sh -c 'while :; do sleep 1; done' `+marker, "\n", "\n      ")
			bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks:
  - id: t1
    workspace: ws
    prompt: p
    %s: |
      %s
arms: [{id: a, agent: stand-in}]
`, c.step, command))
			cmd := exec.Command(wfbBin, "run", bench, "--db", db)
			stderr := signalInFlight(t, cmd, c.sig, marker, db)
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit %d after %v, want %d\n%s", code, c.sig, exitInterrupted, stderr)
			}
			runs, rows := resultsOf(t, db)
			if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || len(rows) != 1 ||
				rows[0].ErrorKind != wfb.KindCancelled || !strings.Contains(rows[0].ErrorDetail, c.step) {
				t.Errorf("runs %+v rows %+v; want one interrupted run, its cell cancelled during %s", runs, rows, c.step)
			}
		})
	}
}

// TestARunUnderNohupOutlivesAHangup starts a real wfb under nohup(1), as a
// long run is started to survive the terminal, and sends it SIGHUP while
// its session waits on the model: the hangup it was told to ignore does not
// interrupt it — the run completes, its cell ok, exit 0. Before, wfb's own
// handler re-enabled SIGHUP (Go's Notify does) and the run ended
// interrupted.
func TestARunUnderNohupOutlivesAHangup(t *testing.T) {
	t.Parallel()
	slowPath(t, "a hangup to a real wfb under nohup")
	wfbBin := buildWFB(t)
	bench, db := oneSlowCell(t, 5000)
	cmd := exec.Command("nohup", wfbBin, "run", bench, "--db", db)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the session in flight", func() bool { return countAgents(cmd.Process.Pid) >= 1 })
	cmd.Process.Signal(syscall.SIGHUP)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Errorf("exit %d after a SIGHUP under nohup, want 0\n%s", code, stderr.String())
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunComplete || len(rows) != 1 || !rows[0].OK {
		t.Errorf("%d runs, %d rows; want one complete run, its cell ok\n%s", len(runs), len(rows), stderr.String())
	}
}

// TestWfbUnderGoRunEndsWithTheGoCommand runs the README's way in — `go run
// ./cmd/wfb` — and sends SIGTERM to the go command, as timeout(1) or a CI
// runner stopping a job does: go exits at once without passing it on, and
// wfb must still end as if it had had the signal itself — the run
// interrupted, its cell cancelled, nothing of it left. Before, wfb went on
// alone (its parent now init) to the end of the run.
func TestWfbUnderGoRunEndsWithTheGoCommand(t *testing.T) {
	t.Parallel()
	slowPath(t, "go run and a signal to the go command")
	bench, db := oneSlowCell(t, 30000)
	scratch := sandboxtest.SharedDir(t, "wfb-go-run-")
	cmd := exec.Command("go", "run", ".", "run", bench, "--db", db)
	cmd.Env = append(os.Environ(), "TMPDIR="+scratch)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the session in flight", func() bool { return countAgents(cmd.Process.Pid) >= 1 })
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	// wfb's command line names the results file, the agents' their cells
	// under scratch.
	waitFor(t, "wfb and its session to end", func() bool {
		return len(sandboxtest.ProcessesWith(db)) == 0 && len(sandboxtest.ProcessesWith(scratch)) == 0
	})
	integrityOK(t, db)
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || len(rows) != 1 || rows[0].ErrorKind != wfb.KindCancelled {
		t.Errorf("%d runs, %d rows; want one interrupted run, its cell cancelled\n%s", len(runs), len(rows), stderr.String())
	}
}

// oneSlowCell is a bench of one host-unsafe stand-in cell whose model takes
// delayMS to answer, and the results file to run it into.
func oneSlowCell(t *testing.T, delayMS int) (bench, db string) {
	return runFixture(t, fmt.Sprintf(`default:
  text: "done"
  delay_ms: %d
  usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`, delayMS), `sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
}

// TestAnInterruptedQuerySaysSoAndExits130 interrupts a real `wfb sql`
// whose query would never end, with each signal a user sends: SQLite stops
// it, the exit status is 130 and wfb says it was interrupted — not Go's
// "context canceled".
func TestAnInterruptedQuerySaysSoAndExits130(t *testing.T) {
	t.Parallel()
	slowPath(t, "signals to a real wfb mid-query")
	wfbBin := buildWFB(t)
	db := filepath.Join(t.TempDir(), "wfb.db")
	d, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(wfbBin, "sql", "--db", db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c")
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// wfb handles the signals before it opens the file.
			waitFor(t, "wfb to open the results file", func() bool { return holdsOpen(cmd.Process.Pid, db) })
			cmd.Process.Signal(sig)
			cmd.Wait()
			if code, msg := cmd.ProcessState.ExitCode(), stderr.String(); code != exitInterrupted || msg != "wfb: interrupted\n" {
				t.Errorf("exit %d, stderr %q; want %d and wfb: interrupted", code, msg, exitInterrupted)
			}
		})
	}
}

// holdsOpen says whether process pid has the file path open.
func holdsOpen(pid int, path string) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestASecondInterruptKillsTheSessionsAtOnce presses Ctrl-C twice on a
// real wfb whose agent does not end at SIGTERM: the second one, while the
// first is being handled (the agent has seen its SIGTERM), kills the
// session at once instead of after the grace period — and the run is still
// recorded: interrupted, the cell cancelled and saying it was killed at the
// second interrupt, exit 130, nothing left. Before, every signal after the
// first was swallowed.
func TestASecondInterruptKillsTheSessionsAtOnce(t *testing.T) {
	t.Parallel()
	slowPath(t, "two interrupts to a real wfb")
	wfbBin := buildWFB(t)
	marker := fmt.Sprintf("wfb-second-%d", time.Now().UnixNano())
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
trap 'sh -c "sleep 300" `+marker+`-term &' TERM INT HUP
while :; do sh -c 'sleep 1' `+marker+`; done
`)
	bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: claude, agent_bin: %s}]
`, agent))
	cmd := exec.Command(wfbBin, "run", bench, "--db", db)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to run", func() bool { return len(sandboxtest.ProcessesWith(marker)) >= 1 })
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the agent to see its SIGTERM", func() bool { return len(sandboxtest.ProcessesWith(marker+"-term")) >= 1 })
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	noneLeft(t, marker)
	integrityOK(t, db)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted || len(rows) != 1 || rows[0].ErrorKind != wfb.KindCancelled ||
		!strings.Contains(rows[0].ErrorDetail, "killed at once at a second interrupt") {
		t.Errorf("%d runs, rows %+v; want one interrupted run, its cell cancelled and killed at the second interrupt\n%s", len(runs), rows, stderr.String())
	}
}
