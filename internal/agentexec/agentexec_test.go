package agentexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
)

// This test binary links the package, so its init serves agent-exec when
// the binary is re-executed as `TEST agent-exec ...`, as wfb's is.

// TestAgentExecEndsWhatItsChildLeftBehind: the child exits (code 3) after
// starting a process that left its group and session by setsid. Without a
// cgroup, agent-exec — the subreaper that inherits the orphan — is the
// only one that can still find it; it must kill it before relaying the
// child's exit. And a child that leaves nothing behind ends the same way
// (agent-exec skips its scan of /proc then).
func TestAgentExecEndsWhatItsChildLeftBehind(t *testing.T) {
	for _, leave := range []bool{true, false} {
		t.Run(fmt.Sprintf("leaves a process: %v", leave), func(t *testing.T) {
			// The marker is sleep's own argument, so the orphan itself
			// carries it (not only a shell around it).
			marker := fmt.Sprintf("3000.%d", time.Now().UnixNano())
			script := "exit 3"
			if leave {
				script = "setsid sleep " + marker + " </dev/null >/dev/null 2>&1 & sleep 0.2; exit 3"
			}
			cmd := exec.Command(os.Args[0], Command, "--fds", "0", "--", "sh", "-c", script)
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 {
				t.Fatalf("agent-exec ended with %v, want the child's exit code 3", err)
			}
			// What agent-exec killed it also reaped: nothing is left once it
			// has exited, not even a zombie.
			if left := sandboxtest.ProcessesWith(marker); len(left) > 0 {
				exec.Command("pkill", "-KILL", "-f", marker).Run()
				t.Fatalf("processes %v outlived agent-exec", left)
			}
		})
	}
}

// TestAgentExecSaysHowManyProcessesItsChildLeft: once the child has ended,
// agent-exec writes on its status fd how many processes it left running,
// counted before it kills them (wfb judges a session that ended at its
// process limit by it: the processes are gone before its watch can count
// them), and nothing when it left none; Left reads it, and reads a reason
// for a failed start as no count.
func TestAgentExecSaysHowManyProcessesItsChildLeft(t *testing.T) {
	for _, n := range []int{0, 3} {
		t.Run(fmt.Sprintf("%d left", n), func(t *testing.T) {
			marker := fmt.Sprintf("3000.%d", time.Now().UnixNano())
			script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep %s & i=$((i+1)); done; exit 0", n, marker)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command(os.Args[0], Command, "--fds", "0", "--status-fd", "3", "--", "sh", "-c", script)
			cmd.ExtraFiles = []*os.File{w}
			err = cmd.Run()
			w.Close()
			if err != nil {
				t.Fatalf("agent-exec: %v", err)
			}
			status, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := Left(status)
			if n == 0 && len(status) != 0 || n > 0 && (!ok || got != n) {
				t.Errorf("status fd %q: Left = %d, %v; want %d left", status, got, ok, n)
			}
			if left := sandboxtest.ProcessesWith(marker); len(left) > 0 {
				t.Fatalf("processes %v outlived agent-exec", left)
			}
		})
	}
	for _, status := range []string{"", "wfb agent-exec: exec: \"nope\": executable file not found in $PATH", "left", "left -1", "left 2x"} {
		if n, ok := Left([]byte(status)); ok {
			t.Errorf("Left(%q) = %d, true; want no count", status, n)
		}
	}
}
