package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Launch is what the runner needs to start one process in the sandbox. The
// runner must:
//
//  1. build argv as Prefix followed by the agent's own argv;
//  2. set cmd.ExtraFiles = ExtraFiles and SysProcAttr.Credential = Credential
//     (next to its own Setpgid);
//  3. after cmd.Start succeeds, call Started with cmd.Process.Pid before it
//     treats the session as running; an error (a *RefusedError when a proof
//     failed) means: kill the process group, record sandbox-refused;
//  4. call Close once the process is gone (or was never started).
//
// For host-unsafe, Prefix and ExtraFiles are empty and Started has nothing to
// hold back. A kernel backend holds its agent at a barrier (bubblewrap's
// --block-fd), and Started learns the agent's pid, proves its PID namespace
// from the parent and only then releases it.
type Launch struct {
	Prefix     []string
	ExtraFiles []*os.File
	Credential *syscall.Credential

	started func(ctx context.Context, pid int) error
	// gate, when set, must pass before a backend with a barrier releases
	// the agent (see Options.ProbeAtLaunch).
	gate    func(ctx context.Context) error
	closers []func() error
	// execFailed recognises the backend's own report that it could not
	// execute the agent; nil for a backend whose exec is the runner's.
	execFailed func(exit int, stdout, stderr string) *ExecError
}

// ExecError is an agent the sandbox could not execute: the backend's
// launcher (bwrap, or wfb's landlock launcher) started, but its exec of the
// agent failed, so nothing of the agent ran. The runner records it as a
// spawn failure, like an exec that fails outside any sandbox.
type ExecError struct {
	Backend string
	// Message is the launcher's own report, e.g. "bwrap: execvp
	// /path/to/claude: No such file or directory".
	Message string
}

func (e *ExecError) Error() string {
	return fmt.Sprintf("the %s sandbox could not execute the agent: %s", e.Backend, e.Message)
}

// ExecFailure tells, from how a process started through this launch
// exited (its exit code and everything it printed), whether the sandbox
// failed to execute the agent; nil when the agent ran, or the backend
// (host-unsafe) leaves the exec to the runner's own start, which reports
// a failure itself.
func (l *Launch) ExecFailure(exit int, stdout, stderr string) *ExecError {
	if l.execFailed == nil {
		return nil
	}
	return l.execFailed(exit, stdout, stderr)
}

// Started runs the backend's checks on the freshly started process pid
// (the direct child the runner spawned).
func (l *Launch) Started(ctx context.Context, pid int) error {
	if l.started == nil {
		return nil
	}
	return l.started(ctx, pid)
}

// Close releases what the launch holds in the parent (pipe ends). It is safe
// to call more than once.
func (l *Launch) Close() error {
	var errs []error
	for _, c := range l.closers {
		errs = append(errs, c())
	}
	l.closers = nil
	return errors.Join(errs...)
}

// Launch prepares one process start. With the live probe moved to the
// launch (Options.ProbeAtLaunch), the sandbox's first launch starts it, in
// a sandbox of its own, and every launch's release waits for its verdict.
func (s *Sandbox) Launch(ctx context.Context) (*Launch, error) {
	l, err := s.backend.launch(ctx, s)
	if err != nil || !s.probeAtLaunch {
		return l, err
	}
	s.gateOnLiveProbe(ctx, l)
	return l, nil
}

// gateOnLiveProbe makes the backend's live probe the launch's gate. The
// probe runs once per sandbox, started by its first launch (beside that
// launch's own start) and answering every launch after: they share one
// configuration, and two probes at once would only compete for the same
// directories. Close waits for it (cancelled if still running), so it
// leaves nothing behind.
func (s *Sandbox) gateOnLiveProbe(ctx context.Context, l *Launch) {
	s.gated.once.Do(func() {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.gated.cancel = cancel
		s.gated.done = make(chan struct{})
		go func() {
			defer close(s.gated.done)
			s.gated.reason, s.gated.err = s.backend.probe(withProbeLaunch(pctx), s)
		}()
	})
	g := &s.gated
	l.gate = func(wait context.Context) error {
		select {
		case <-g.done:
		case <-wait.Done():
			return wait.Err()
		}
		switch {
		case g.err != nil:
			return fmt.Errorf("%s live probe: %w", s.Backend(), g.err)
		case g.reason != "":
			return &RefusedError{Backend: s.Backend(), Reason: g.reason}
		}
		return nil
	}
}

// gatedProbe is a sandbox's live probe when it runs at launch.
type gatedProbe struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
	reason string
	err    error
}

// wait cancels the probe if it still runs and waits for it to end.
func (g *gatedProbe) wait() {
	if g.cancel != nil {
		g.cancel()
		<-g.done
	}
}

// probeLaunchKey marks the context of the launch a gated live probe makes
// for itself: bubblewrap leaves the agent's mounts out of it, so that its
// symlinks under the private tmp are made by the agent's launch alone (two
// bwraps making the same one at once, the second fails).
type probeLaunchKey struct{}

func withProbeLaunch(ctx context.Context) context.Context {
	return context.WithValue(ctx, probeLaunchKey{}, true)
}

func isProbeLaunch(ctx context.Context) bool { return ctx.Value(probeLaunchKey{}) != nil }

// hostUnsafe runs the agent directly on the host (see the package doc for
// what that does and does not enforce).
type hostUnsafe struct{}

func (hostUnsafe) name() string             { return HostUnsafe }
func (hostUnsafe) prefix(*Sandbox) []string { return []string{} }

// probe adds nothing to the common preflight for a review, which already
// ran its checks as the session identity: host-unsafe has no boundary of its
// own to test until the runner applies the write boundary. A session that
// edits its workspace must be able to, so the live probe proves a
// temp+rename there as the session identity.
func (hostUnsafe) probe(ctx context.Context, s *Sandbox) (string, error) {
	if !s.writable {
		return "", nil
	}
	return liveProbe(ctx, s, false)
}

func (hostUnsafe) note(s *Sandbox) string {
	switch {
	case s.writable && s.cred == nil:
		return fmt.Sprintf("no kernel isolation: the session runs on the host as wfb's own uid %d and may edit the workspace (temp+rename probed); no PID namespace", os.Geteuid())
	case s.writable:
		return fmt.Sprintf("no kernel isolation: the session runs on the host as uid %d and may edit the workspace as its mode bits allow (temp+rename probed); no PID namespace", s.cred.Uid)
	case s.cred == nil:
		return fmt.Sprintf("no kernel isolation: the session runs on the host as wfb's own uid %d, which owns what it can chmod, so the workspace boundary is best-effort; no PID namespace", os.Geteuid())
	}
	return fmt.Sprintf("no kernel isolation: the session runs on the host as uid %d, held off the workspace by mode bits only; no PID namespace", s.cred.Uid)
}

// workspaceNote says, for a note, what the session may do to its
// workspace.
func workspaceNote(s *Sandbox, readOnly, writable string) string {
	if s.writable {
		return "workspace " + writable + " (temp+rename probed)"
	}
	return "workspace " + readOnly
}

func (h hostUnsafe) launch(_ context.Context, s *Sandbox) (*Launch, error) {
	return &Launch{
		Prefix:     h.prefix(s),
		Credential: s.Credential(),
		started: func(_ context.Context, pid int) error {
			if !s.requirePID {
				return nil
			}
			// Unreachable through Prepare, which refuses the combination;
			// kept so the promise is checked where it is kept, not assumed.
			return provePIDNamespace(s.Backend(), pid)
		},
	}, nil
}

// provePIDNamespace checks, from the parent, that process pid lives in a
// PID namespace other than wfb's own: the kernel's answer, not the argv's.
func provePIDNamespace(backend string, pid int) error {
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return &RefusedError{Backend: backend, Reason: fmt.Sprintf("cannot read wfb's PID namespace: %v", err)}
	}
	child, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return &RefusedError{Backend: backend, Reason: fmt.Sprintf("cannot read the PID namespace of process %d: %v", pid, err)}
	}
	if child == self {
		return &RefusedError{Backend: backend, Reason: fmt.Sprintf("process %d runs in wfb's own PID namespace (%s), not one of its own", pid, self)}
	}
	return nil
}
