package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wfbench/wfb/internal/agentexec"
)

// Command is a short command wfb runs for itself around a session (a
// task's setup or verify), not an agent: no limits, no cgroup, its output
// kept as one bounded tail.
type Command struct {
	Argv []string
	Dir  string
	Env  []string // the complete environment; nothing is inherited
	// Credential runs it as another user (nil: wfb's own).
	Credential *syscall.Credential
	// Timeout bounds it; it must be positive.
	Timeout time.Duration
}

// CommandResult is what a Command did.
type CommandResult struct {
	ExitCode int
	Output   string // the tail of stdout and stderr together
	TimedOut bool
}

// commandTail bounds a Command's kept output.
const commandTail = 4 << 10

// RunCommand runs c in its own process group, behind agent-exec as a
// session is: killed whole, what it detached included, at the timeout or
// when ctx ends (a signal to wfb), and what it leaves running when it ends
// is killed then. A timeout is a result (TimedOut, exit code -1); the
// error is ctx's when ctx ended, or why it could not run at all.
func RunCommand(ctx context.Context, c Command) (CommandResult, error) {
	cctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	argv, cred := c.Argv, c.Credential
	if self, err := os.Executable(); err == nil {
		argv, cred = behindAgentExec(self, cred, argv), nil
	}
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never inherit wfb's environment
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error {
		killTree(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = 2 * time.Second
	tail := newTailBuffer(commandTail)
	cmd.Stdout, cmd.Stderr = tail, tail
	err := cmd.Run()
	res := CommandResult{Output: strings.TrimSpace(tail.String())}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case cctx.Err() != nil:
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		return res, nil
	case err != nil:
		return res, err
	}
	return res, nil
}

// behindAgentExec is the command line that runs argv behind agent-exec
// with no limits and no status fd (its failure to start argv goes to
// argv's stderr), as cred when given: agent-exec kills whatever argv
// leaves running when it ends, and everything when wfb dies.
func behindAgentExec(self string, cred *syscall.Credential, argv []string) []string {
	out := []string{self, agentexec.Command, "--fds", "0"}
	if cred != nil {
		out = append(out, "--uid", strconv.FormatUint(uint64(cred.Uid), 10), "--gid", strconv.FormatUint(uint64(cred.Gid), 10))
	}
	return append(append(out, "--"), argv...)
}
