package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/proc"
)

// pristine is a task's starting tree, prepared once per run: the task's
// directory itself, or a private clone of its repository checked out at the
// pinned commit. Every cell copies it; nothing of one cell's copy is shared
// with another's.
type pristine struct {
	dir    string // the tree to copy
	commit string // the resolved commit of a git workspace
}

// preparePristine makes a task's pristine tree under tmp. A git workspace
// is cloned with --no-local --no-hardlinks, so the clone owns its objects,
// and checked out detached at ref; a ref that does not resolve is an error
// the caller reports as bad input.
func preparePristine(ctx context.Context, t bench.Task, tmp string) (pristine, error) {
	if t.Workspace.Git == "" {
		return pristine{dir: t.Workspace.Dir}, nil
	}
	dest := filepath.Join(tmp, "pristine", t.ID)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return pristine{}, err
	}
	if out, err := git(ctx, "", "clone", "--quiet", "--no-local", "--no-hardlinks", "--no-checkout", t.Workspace.Git, dest); err != nil {
		return pristine{}, fmt.Errorf("task %s: clone %s: %v: %s", t.ID, t.Workspace.Git, err, out)
	}
	commit, err := git(ctx, dest, "rev-parse", "--verify", "--quiet", t.Workspace.Ref+"^{commit}")
	if err != nil {
		return pristine{}, fmt.Errorf("task %s: ref %q does not name a commit in %s", t.ID, t.Workspace.Ref, t.Workspace.Git)
	}
	commit = strings.TrimSpace(commit)
	if out, err := git(ctx, dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return pristine{}, fmt.Errorf("task %s: check out %s: %v: %s", t.ID, commit, err, out)
	}
	// The cells' copies must not point back at the source repository.
	if out, err := git(ctx, dest, "remote", "remove", "origin"); err != nil {
		return pristine{}, fmt.Errorf("task %s: detach the clone from its origin: %v: %s", t.ID, err, out)
	}
	return pristine{dir: dest, commit: commit}, nil
}

// git runs git with a fixed, minimal environment, so neither the user's
// configuration nor a credential helper takes part.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + DefaultPath, "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LANG=C"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// runCommand runs a task's setup or verify command with /bin/sh -c in dir,
// as cred (nil: wfb's own user), with an environment built from scratch,
// as proc.RunCommand runs a command: behind agent-exec, killed whole at the
// timeout or when ctx ends (a signal to wfb).
func runCommand(ctx context.Context, command, dir string, timeout time.Duration, cred *syscall.Credential, extraEnv map[string]string) (proc.CommandResult, error) {
	if timeout <= 0 {
		timeout = bench.DefaultTimeout
	}
	env := map[string]string{"PATH": DefaultPath, "HOME": dir, "LANG": "C.UTF-8", "WFB_WORKSPACE": dir}
	for k, v := range extraEnv {
		env[k] = v
	}
	return proc.RunCommand(ctx, proc.Command{Argv: []string{"/bin/sh", "-c", command}, Dir: dir, Env: envList(env), Credential: cred, Timeout: timeout})
}

// describeCommand says how a failed command ended, with its output's tail.
func describeCommand(r proc.CommandResult, what, command string, timeout time.Duration) string {
	how := fmt.Sprintf("exited %d", r.ExitCode)
	if r.TimedOut {
		how = fmt.Sprintf("did not finish within %s", timeout)
	}
	out := r.Output
	if out == "" {
		out = "(no output)"
	}
	if len(out) > 1000 {
		out = "..." + out[len(out)-1000:]
	}
	return fmt.Sprintf("%s %q %s: %s", what, command, how, out)
}

// gitSafeDirectory is the environment that lets git work in a copy owned by
// another user: a root wfb's copy is root's, and git refuses a repository
// whose owner is not the caller ("dubious ownership") unless it is named
// in protected configuration, which GIT_CONFIG_* variables are.
func gitSafeDirectory(dir string) map[string]string {
	return map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": dir}
}
