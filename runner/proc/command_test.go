package proc

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestACommandEndsWithItsExitCodeAndOutput stops a setup or verify
// command's failure from being lost: its exit code and the tail of what it
// printed, both streams together, come back.
func TestACommandEndsWithItsExitCodeAndOutput(t *testing.T) {
	res, err := RunCommand(context.Background(), Command{
		Argv: []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, Dir: t.TempDir(), Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.TimedOut || res.Output != "out\nerr" {
		t.Errorf("exit %d timed out %v output %q, want 3, false, %q", res.ExitCode, res.TimedOut, res.Output, "out\nerr")
	}
}

// TestACommandIsKilledWholeAtItsTimeout stops a setup or verify command
// that hangs, or leaves a process that ignores SIGTERM, from outliving its
// timeout: the result says it timed out, and its grandchild is dead.
func TestACommandIsKilledWholeAtItsTimeout(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "gc.pid")
	res, err := RunCommand(context.Background(), Command{
		Argv: []string{testBinary(t)}, Env: []string{"WFB_PROC_HELPER=ignore-term-with-grandchild", "WFB_PIDFILE=" + pidfile},
		Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("timed out %v exit %d, want a timeout (-1)", res.TimedOut, res.ExitCode)
	}
	if gc := readPid(t, pidfile); !waitDead(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Fatalf("grandchild %d outlived its command", gc)
	}
}
