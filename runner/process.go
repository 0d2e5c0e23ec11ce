package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wfbench/wfb/store"
)

// processSpec is what the runner needs to start one agent process.
type processSpec struct {
	Argv       []string
	Dir        string
	Env        []string // the complete environment; nothing is inherited
	Stdin      string
	NoStdin    bool // /dev/null instead of a pipe carrying Stdin
	Credential *syscall.Credential
	Timeout    time.Duration
	Grace      time.Duration // between SIGTERM and SIGKILL
	// ExtraFiles are passed to the child as fds 3, 4, ... (sandbox launch
	// protocols use them).
	ExtraFiles []*os.File
	// Started, when set, runs after the process started and before the
	// runner waits on it; an error kills the process group at once and is
	// reported as the refusal reason (the sandbox's PID-namespace proof).
	Started func(pid int) error
	// OnStdoutLine sees every stdout line (without the newline), truncated
	// to maxLine bytes; the runner parses events from it.
	OnStdoutLine func(line []byte, truncated bool)
}

// processResult is what happened to the process.
type processResult struct {
	State      string // one of store.State*
	ExitCode   *int64 // nil unless the process exited on its own terms
	Signal     string // the signal that ended it, if any
	Duration   time.Duration
	StdoutTail string
	StderrTail string
	SpawnErr   error // set when State is spawn-failure
	RefusedErr error // set when Started refused the process
	PipesHeld  bool  // an escaped descendant held stdout/stderr open
	// Containment is "cgroup" when the session had a cgroup of its own,
	// else why only the process group contained its descendants.
	Containment string
	// KillFailure says descendants could not all be killed.
	KillFailure string
	StdoutBytes int64
}

const (
	tailBytes    = 64 << 10
	maxLineBytes = 8 << 20
	// pipeDrain bounds how long output is read after the process group is
	// gone; only a descendant that left the group can hold a pipe longer.
	pipeDrain = 2 * time.Second
)

// runProcess starts argv in its own process group and waits for it, for the
// timeout, or for ctx. On timeout or cancellation the group gets SIGTERM,
// then SIGKILL after the grace period. When the leader exits, whatever is
// left of its group is killed: descendants never outlive a session.
func runProcess(ctx context.Context, ps processSpec) (res processResult) {
	stdoutTail, stderrTail := newTailBuffer(tailBytes), newTailBuffer(tailBytes)
	defer func() {
		res.StdoutTail = stdoutTail.String()
		res.StderrTail = stderrTail.String()
	}()

	if len(ps.Argv) == 0 {
		res.State = store.StateSpawnFailure
		res.SpawnErr = errors.New("empty command")
		return res
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		res.State, res.SpawnErr = store.StateSpawnFailure, fmt.Errorf("stdout pipe: %w", err)
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.State, res.SpawnErr = store.StateSpawnFailure, fmt.Errorf("stderr pipe: %w", err)
		return res
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		res.State, res.SpawnErr = store.StateSpawnFailure, fmt.Errorf("stdin pipe: %w", err)
		return res
	}

	newCmd := func() *exec.Cmd {
		cmd := exec.Command(ps.Argv[0], ps.Argv[1:]...)
		cmd.Dir = ps.Dir
		cmd.Env = ps.Env
		if cmd.Env == nil {
			cmd.Env = []string{} // never inherit the harness's environment
		}
		// Passing *os.File (not an io.Writer) hands the fds straight to
		// the child: Wait then returns when the leader exits, not when
		// every holder of the pipe has gone.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		if ps.NoStdin {
			cmd.Stdin = nil // os/exec opens /dev/null
		}
		cmd.ExtraFiles = ps.ExtraFiles
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Credential: ps.Credential,
		}
		return cmd
	}
	cmd := newCmd()

	// A cgroup of the session's own catches descendants that leave the
	// process group; without one (not root, no cgroup2) the group is all
	// there is.
	cg, cgErr := newSessionCgroup()
	if cgErr == nil {
		res.Containment = "cgroup"
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
		defer func() {
			if err := cg.close(); err != nil && res.KillFailure == "" {
				res.KillFailure = err.Error()
			}
		}()
	} else {
		res.Containment = "process group only: " + cgErr.Error()
	}

	start := time.Now()
	err = cmd.Start()
	// A binary staged a moment ago can still be open for writing in a
	// sibling's fork (ETXTBSY) until that child execs; it passes quickly.
	for try := 0; errors.Is(err, syscall.ETXTBSY) && try < 20; try++ {
		time.Sleep(time.Duration(try+1) * 5 * time.Millisecond)
		cmd = newCmd()
		if cg != nil {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
		}
		err = cmd.Start()
	}
	if err != nil && cg != nil {
		// Some kernels refuse clone into a cgroup; the process group remains.
		res.Containment = "process group only: start in a cgroup: " + err.Error()
		cmd = newCmd()
		err = cmd.Start()
	}
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		res.State, res.SpawnErr = store.StateSpawnFailure, err
		res.Duration = time.Since(start)
		return res
	}
	pid := cmd.Process.Pid

	// Feed stdin, then close it so the agent sees EOF. An agent that never
	// reads it must not block us: the write runs on its own goroutine.
	go func() {
		io.WriteString(inW, ps.Stdin)
		inW.Close()
	}()

	readersDone := make(chan struct{}, 2)
	go func() {
		defer func() { readersDone <- struct{}{} }()
		res.StdoutBytes = readLines(outR, stdoutTail, ps.OnStdoutLine)
	}()
	go func() {
		defer func() { readersDone <- struct{}{} }()
		io.Copy(stderrTail, errR)
	}()

	// Observe the leader's exit without reaping it: while it is a zombie its
	// pid (the group id) cannot be reused, so killing the group is safe.
	exited := make(chan struct{})
	go func() {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()

	killGroup := func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

	if ps.Started != nil {
		if err := ps.Started(pid); err != nil {
			killGroup(syscall.SIGKILL)
			res.RefusedErr = err
		}
	}

	var timeout <-chan time.Time
	if ps.Timeout > 0 && res.RefusedErr == nil {
		t := time.NewTimer(ps.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	stopped := func(state string) {
		res.State = state
		killGroup(syscall.SIGTERM)
		grace := time.NewTimer(ps.Grace)
		defer grace.Stop()
		select {
		case <-exited:
		case <-grace.C:
			killGroup(syscall.SIGKILL)
			if state == store.StateTimeout {
				res.State = store.StateForcedKill
			}
			<-exited
		}
	}
	if res.RefusedErr != nil {
		<-exited
		res.State = store.StateNotStarted
	} else {
		select {
		case <-exited:
			res.State = store.StateExited
		case <-timeout:
			stopped(store.StateTimeout)
		case <-ctx.Done():
			stopped(store.StateCancelled)
		}
	}
	// The leader is gone (a zombie still); kill what is left of its group,
	// and of its cgroup: descendants that left the group too.
	killGroup(syscall.SIGKILL)
	if cg != nil && cmd.SysProcAttr.UseCgroupFD {
		if err := cg.kill(); err != nil {
			res.KillFailure = err.Error()
		}
	}
	waitErr := cmd.Wait()
	res.Duration = time.Since(start)

	drain := time.NewTimer(pipeDrain)
	defer drain.Stop()
	for pending := 2; pending > 0; {
		select {
		case <-readersDone:
			pending--
		case <-drain.C:
			// A descendant that left the group holds a pipe: stop reading.
			res.PipesHeld = true
			outR.Close()
			errR.Close()
			for ; pending > 0; pending-- {
				<-readersDone
			}
		}
	}
	outR.Close()
	errR.Close()

	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case st.Exited():
			code := int64(st.ExitStatus())
			res.ExitCode = &code
		case st.Signaled():
			res.Signal = st.Signal().String()
		}
	} else if waitErr != nil && res.State == store.StateExited {
		res.State = store.StateSpawnFailure
		res.SpawnErr = waitErr
	}
	return res
}

// readLines copies r to tail and hands every line to onLine. Lines longer
// than maxLineBytes are cut (the rest is skipped) and flagged truncated.
func readLines(r io.Reader, tail io.Writer, onLine func([]byte, bool)) int64 {
	br := bufio.NewReaderSize(io.TeeReader(r, tail), 64<<10)
	var total int64
	var line []byte
	truncated := false
	for {
		chunk, err := br.ReadSlice('\n')
		total += int64(len(chunk))
		if len(line)+len(chunk) <= maxLineBytes {
			line = append(line, chunk...)
		} else {
			if room := maxLineBytes - len(line); room > 0 {
				line = append(line, chunk[:room]...)
			}
			truncated = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 && onLine != nil {
			l := line
			if l[len(l)-1] == '\n' {
				l = l[:len(l)-1]
			}
			onLine(l, truncated)
		}
		line, truncated = line[:0], false
		if err != nil {
			return total
		}
	}
}
