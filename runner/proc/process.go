package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/agentexec"
	"github.com/wfbench/wfb/internal/proctree"
)

// Spec is what Run needs to start one process: an agent, or its version
// probe.
type Spec struct {
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
	// Started, when set, runs after the process started and before Run
	// waits on it; an error kills the process group at once and is
	// reported as the refusal reason (the sandbox's PID-namespace proof).
	Started func(pid int) error
	// OnStdoutLine sees every stdout line (without the newline), truncated
	// to MaxLineBytes; the runner parses events from it.
	OnStdoutLine func(line []byte, truncated bool)
	// Transcript, when set, sees stdout as it is read (transcript.go).
	Transcript io.Writer
	// Limits bound the session's processes and memory (zero: defaults).
	Limits Limits
}

// Result is what happened to the process.
type Result struct {
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
	// LimitHit says which resource limit the session reached; wfb
	// stopped it then.
	LimitHit string
	// Killed says why a process wfb stopped (a timeout, a cancellation)
	// got SIGKILL after its SIGTERM: KilledAfterGrace, KilledInHurry, or
	// "" when SIGTERM ended it.
	Killed string
}

// ExitText says how the process ended, for error details: its exit code,
// or the signal that ended it.
func (r Result) ExitText() string {
	if r.ExitCode != nil {
		return "exit code " + strconv.FormatInt(*r.ExitCode, 10)
	}
	return "signal " + r.Signal
}

// Why a stopped process was killed (Result.Killed).
const (
	KilledAfterGrace = "grace"
	KilledInHurry    = "hurry"
)

// hurryKey is the context key of the hurry channel (WithHurry).
type hurryKey struct{}

// WithHurry returns ctx carrying hurry: once hurry is closed, a session
// (or setup or verify command) being stopped is killed at once instead of
// after its grace period — wfb closes it at a second interrupt.
func WithHurry(ctx context.Context, hurry <-chan struct{}) context.Context {
	return context.WithValue(ctx, hurryKey{}, hurry)
}

// hurried is ctx's hurry channel; nil (never ready) when it has none.
func hurried(ctx context.Context) <-chan struct{} {
	h, _ := ctx.Value(hurryKey{}).(<-chan struct{})
	return h
}

// MaxLineBytes bounds one stdout line: a longer one reaches OnStdoutLine
// cut to this length and flagged truncated (the agent's output then fails
// the session, naming the limit).
const MaxLineBytes = 16 << 20

const (
	tailBytes = 64 << 10
	// pipeDrain bounds how long output is read after the process group is
	// gone while nothing more arrives; only a descendant that left the
	// group can hold a pipe that long. While output still flows (a slow
	// reader behind a full pipe: a loaded machine, the race detector), the
	// bound is pipeDrainMax.
	pipeDrain    = 2 * time.Second
	pipeDrainMax = 30 * time.Second
)

// Run starts argv in its own process group, behind agent-exec, and waits
// for it, for the timeout, or for ctx. On timeout or cancellation the group gets SIGTERM,
// then SIGKILL after the grace period. When the leader exits, whatever is
// left of its group is killed: descendants never outlive a session.
func Run(ctx context.Context, ps Spec) (res Result) {
	stdoutTail, stderrTail := newTailBuffer(tailBytes), newTailBuffer(tailBytes)
	defer func() {
		res.StdoutTail = stdoutTail.String()
		res.StderrTail = stderrTail.String()
	}()

	if len(ps.Argv) == 0 {
		res.State = wfb.StateSpawnFailure
		res.SpawnErr = errors.New("empty command")
		return res
	}
	pipes, err := openPipes()
	if err != nil {
		res.State, res.SpawnErr = wfb.StateSpawnFailure, err
		return res
	}
	ps.Limits = ps.Limits.OrDefault()
	cg := sessionCgroupFor(ps.Limits, &res)
	if cg != nil {
		defer func() {
			if err := cg.close(); err != nil && res.KillFailure == "" {
				res.KillFailure = err.Error()
			}
		}()
	}

	start := time.Now()
	cmd, err := startProcess(ps, pipes, cg, &res)
	if err != nil {
		pipes.closeParentEnds()
		res.State, res.SpawnErr = wfb.StateSpawnFailure, err
		res.Duration = time.Since(start)
		return res
	}
	var stdoutSink io.Writer = stdoutTail
	if ps.Transcript != nil {
		stdoutSink = io.MultiWriter(stdoutTail, ps.Transcript)
	}
	// The session's cgroup, when the process started in it.
	scg := cg
	if !cmd.SysProcAttr.UseCgroupFD {
		scg = nil
	}
	readersDone := pipes.read(ps, stdoutSink, stderrTail, &res)
	pid := cmd.Process.Pid
	ownUID := sessionUID(ps.Credential)
	exited := leaderExited(pid)
	limitHit := make(chan string, 1)
	go func() {
		limitHit <- limitWatch{limits: ps.Limits, cg: scg, leader: pid, uid: ownUID}.watch(exited, func() { killSession(pid, scg) })
	}()
	superviseProcess(ctx, ps, pid, exited, &res)
	res.LimitHit = <-limitHit
	// The leader is gone (a zombie still); kill what is left of its group,
	// and of its cgroup: descendants that left the group too. A zombie has
	// no children (the kernel gave them to a subreaper when it exited), so
	// there is no tree left to walk: agent-exec, the leader, killed what
	// its child left before it exited.
	killGroup(pid, syscall.SIGKILL)
	if err := scg.killAll(); err != nil {
		res.KillFailure = err.Error()
	}
	if ownUID >= 0 {
		if err := removeSessionIPC(ownUID); err != nil && res.KillFailure == "" {
			res.KillFailure = "remove the session's shared memory: " + err.Error()
		}
	}
	waitErr := cmd.Wait()
	res.Duration = time.Since(start)
	pipes.drain(readersDone, &res)
	recordExit(cmd, waitErr, &res)
	left := pipes.readStatus(&res)
	if res.LimitHit == "" && left >= ps.Limits.Pids {
		// The agent ended with its limit's worth of processes running
		// (a fork RLIMIT_NPROC refused ends a shell so), which agent-exec
		// killed before the watch could count them.
		res.LimitHit = fmt.Sprintf("the session reached its process limit (%d processes left running when the agent ended; pids limit %d)", left, ps.Limits.Pids)
	}
	return res
}

// sessionUID is the uid the session runs as when it is one of its own
// (not wfb's), else -1.
func sessionUID(c *syscall.Credential) int {
	if c == nil || int(c.Uid) == os.Geteuid() {
		return -1
	}
	return int(c.Uid)
}

// sessionCgroupFor makes the session's cgroup, with its limits when the
// kernel can enforce them there, and records the containment in res. A
// cgroup of the session's own catches descendants that leave the process
// group; without one (not root, no cgroup2) the group is all there is.
func sessionCgroupFor(l Limits, res *Result) *sessionCgroup {
	cg, err := newSessionCgroup()
	if err != nil {
		res.Containment = "process group only: " + err.Error()
		return nil
	}
	res.Containment = "cgroup"
	cg.limited = cg.setLimits(cg.parent, l)
	return cg
}

// killSession kills the leader's descendants and process group (killTree)
// and, when the session has one, its cgroup: descendants that left the
// group too.
func killSession(leader int, cg *sessionCgroup) error {
	killTree(leader)
	return cg.killAll()
}

// killAll kills every process in the cgroup, when there is one.
func (cg *sessionCgroup) killAll() error {
	if cg == nil {
		return nil
	}
	return cg.kill()
}

// processPipes are the agent's stdin, stdout and stderr: the child's ends
// (r for stdin, w for the others) and the parent's.
type processPipes struct {
	inR, inW, outR, outW, errR, errW *os.File
	// statusR/W carry agent-exec's reason when it could not start the
	// agent.
	statusR, statusW *os.File
	// flowed counts the bytes read from stdout and stderr, and waiting the
	// readers blocked in a read, so that drain tells a held pipe (a reader
	// waits and nothing flows) from a slow reader (output flows, or a
	// reader is busy with what it read).
	flowed  atomic.Int64
	waiting atomic.Int32
}

// watchedReader counts what it reads, and whether it is waiting in a read.
type watchedReader struct {
	r io.Reader
	p *processPipes
}

func (w watchedReader) Read(b []byte) (int, error) {
	w.p.waiting.Add(1)
	k, err := w.r.Read(b)
	w.p.waiting.Add(-1)
	w.p.flowed.Add(int64(k))
	return k, err
}

// openPipes opens the three pipes, or none.
func openPipes() (*processPipes, error) {
	p := &processPipes{}
	var err error
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.outR.Close()
		p.outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		p.outR.Close()
		p.outW.Close()
		p.errR.Close()
		p.errW.Close()
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if p.statusR, p.statusW, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, fmt.Errorf("status pipe: %w", err)
	}
	return p, nil
}

// readStatus reads what agent-exec said: how many processes the agent left
// running when it ended (returned), or why it could not start the agent —
// then the session never ran, a spawn failure.
func (p *processPipes) readStatus(res *Result) (left int) {
	defer p.statusR.Close()
	// agent-exec is gone and the agent never had the pipe: EOF is near.
	_ = p.statusR.SetReadDeadline(time.Now().Add(time.Second))
	b, _ := io.ReadAll(io.LimitReader(p.statusR, 4096))
	if n, ok := agentexec.Left(b); ok {
		return n
	}
	if len(b) > 0 && res.State == wfb.StateExited {
		res.State, res.SpawnErr = wfb.StateSpawnFailure, errors.New(string(b))
		res.ExitCode, res.Signal = nil, ""
	}
	return 0
}

// closeChildEnds closes the ends the child holds once it started, so that
// the parent sees EOF when the child's side is gone.
func (p *processPipes) closeChildEnds() {
	p.inR.Close()
	p.outW.Close()
	p.errW.Close()
	if p.statusW != nil {
		p.statusW.Close()
	}
}

// closeParentEnds closes the parent's ends of a process that never
// started.
func (p *processPipes) closeParentEnds() {
	p.inW.Close()
	p.outR.Close()
	p.errR.Close()
	if p.statusR != nil {
		p.statusR.Close()
	}
}

// agentExecArgv is the command line that runs argv behind agent-exec (see
// agentexec.Command), with the spec's identity and limits: RLIMIT_DATA and
// RLIMIT_NPROC at twice the limits are backstops, the watch holds the
// session to the limits themselves (see limitWatch); RLIMIT_NPROC counts
// every process of a uid, so it is set only when the session runs as a uid
// of its own.
func agentExecArgv(self string, ps Spec) []string {
	argv := []string{self, agentexec.Command,
		"--fds", strconv.Itoa(len(ps.ExtraFiles)), "--status-fd", strconv.Itoa(3 + len(ps.ExtraFiles)),
		"--data", strconv.FormatInt(2*ps.Limits.Memory, 10)}
	if c := ps.Credential; c != nil {
		argv = append(argv, "--uid", strconv.FormatUint(uint64(c.Uid), 10), "--gid", strconv.FormatUint(uint64(c.Gid), 10))
		if int(c.Uid) != os.Geteuid() {
			argv = append(argv, "--nproc", strconv.Itoa(2*ps.Limits.Pids))
		}
	}
	return append(append(argv, "--"), ps.Argv...)
}

// newCommand builds the process's command: agent-exec in front of argv,
// its own process group, in the environment the spec names and nothing
// else. agent-exec takes wfb's death as SIGUSR1 and kills the session.
func newCommand(ps Spec, pipes *processPipes) *exec.Cmd {
	argv := ps.Argv
	if self, err := os.Executable(); err == nil {
		argv = agentExecArgv(self, ps)
		ps.Credential = nil // agent-exec takes it on for the agent
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = ps.Dir
	cmd.Env = ps.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never inherit the harness's environment
	}
	// Passing *os.File (not an io.Writer) hands the fds straight to
	// the child: Wait then returns when the leader exits, not when
	// every holder of the pipe has gone.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes.inR, pipes.outW, pipes.errW
	if ps.NoStdin {
		cmd.Stdin = nil // os/exec opens /dev/null
	}
	cmd.ExtraFiles = ps.ExtraFiles
	pdeath := syscall.SIGKILL
	if len(argv) > 1 && argv[1] == agentexec.Command {
		cmd.ExtraFiles = append(append([]*os.File{}, ps.ExtraFiles...), pipes.statusW)
		pdeath = syscall.SIGUSR1
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  pdeath,
		Credential: ps.Credential,
	}
	return cmd
}

// startProcess starts the command, in the cgroup when there is one, and
// closes the child's ends of the pipes. A failure to start in the cgroup
// falls back to the process group alone, and says so in res.Containment.
func startProcess(ps Spec, pipes *processPipes, cg *sessionCgroup, res *Result) (*exec.Cmd, error) {
	inCgroup := func() *exec.Cmd {
		cmd := newCommand(ps, pipes)
		if cg != nil {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
		}
		return cmd
	}
	cmd := inCgroup()
	err := cmd.Start()
	// A binary staged a moment ago can still be open for writing in a
	// sibling's fork (ETXTBSY) until that child execs; it passes quickly.
	for try := 0; errors.Is(err, syscall.ETXTBSY) && try < 20; try++ {
		time.Sleep(time.Duration(try+1) * 5 * time.Millisecond)
		cmd = inCgroup()
		err = cmd.Start()
	}
	if err != nil && cg != nil {
		// Some kernels refuse clone into a cgroup; the process group remains.
		res.Containment = "process group only: start in a cgroup: " + err.Error()
		cmd = newCommand(ps, pipes)
		err = cmd.Start()
	}
	pipes.closeChildEnds()
	return cmd, err
}

// read feeds stdin (then closes it, so the agent sees EOF) and reads stdout
// and stderr into their tails, stdout line by line to ps.OnStdoutLine. The
// channel gets one value as each reader ends.
func (p *processPipes) read(ps Spec, stdoutTail, stderrTail io.Writer, res *Result) <-chan struct{} {
	// An agent that never reads stdin must not block us: the write runs
	// on its own goroutine.
	go func() {
		io.WriteString(p.inW, ps.Stdin)
		p.inW.Close()
	}()
	readersDone := make(chan struct{}, 2)
	go func() {
		defer func() { readersDone <- struct{}{} }()
		res.StdoutBytes = readLines(watchedReader{p.outR, p}, stdoutTail, ps.OnStdoutLine)
	}()
	go func() {
		defer func() { readersDone <- struct{}{} }()
		io.Copy(stderrTail, watchedReader{p.errR, p})
	}()
	return readersDone
}

// leaderExited is closed when the process exits. It observes the exit
// without reaping: while the leader is a zombie its pid (the group id)
// cannot be reused, so killing the group is safe.
func leaderExited(pid int) <-chan struct{} {
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
	return exited
}

func killGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// killTree kills, with SIGKILL, the descendants of the leader while it
// lives, then its process group. A descendant that left the group (one
// the agent detached with setsid, everything inside bubblewrap) is no
// member of it, and without a cgroup only the tree finds it: agent-exec,
// the leader, is the subreaper that holds the orphans, and once it is
// gone they are init's. Killing the agent first also lets agent-exec
// clean up after it before relaying its end.
func killTree(leader int) {
	proctree.KillDescendants(leader, nil)
	killGroup(leader, syscall.SIGKILL)
}

// superviseProcess runs the spec's Started check, then waits for the
// leader to exit, the timeout, or ctx, and records which as res.State:
// a stopped process gets SIGTERM, and SIGKILL after the grace period.
func superviseProcess(ctx context.Context, ps Spec, pid int, exited <-chan struct{}, res *Result) {
	if ps.Started != nil {
		if err := ps.Started(pid); err != nil {
			killGroup(pid, syscall.SIGKILL)
			res.RefusedErr = err
			<-exited
			res.State = wfb.StateNotStarted
			return
		}
	}
	var timeout <-chan time.Time
	if ps.Timeout > 0 {
		t := time.NewTimer(ps.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-exited:
		res.State = wfb.StateExited
	case <-timeout:
		stopProcess(ctx, pid, ps.Grace, exited, wfb.StateTimeout, res)
	case <-ctx.Done():
		stopProcess(ctx, pid, ps.Grace, exited, wfb.StateCancelled, res)
	}
}

// stopProcess ends a process wfb stopped (state: timeout or cancelled):
// SIGTERM to its group, then SIGKILL to its tree if it outlives the grace
// period, or at once at ctx's hurry (a timeout becomes forced-kill).
func stopProcess(ctx context.Context, pid int, grace time.Duration, exited <-chan struct{}, state string, res *Result) {
	res.State = state
	killGroup(pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C:
		res.Killed = KilledAfterGrace
	case <-hurried(ctx):
		res.Killed = KilledInHurry
	}
	killTree(pid)
	if state == wfb.StateTimeout {
		res.State = wfb.StateForcedKill
	}
	<-exited
}

// drain waits for the readers, for at most pipeDrain while they wait for
// output that does not come (pipeDrainMax in all): only a descendant that
// left the group can hold a pipe that long, and then reading stops.
func (p *processPipes) drain(readersDone <-chan struct{}, res *Result) {
	start, seen := time.Now(), p.flowed.Load()
	drain := time.NewTimer(pipeDrain)
	defer drain.Stop()
	for pending := 2; pending > 0; {
		select {
		case <-readersDone:
			pending--
		case <-drain.C:
			busy := int(p.waiting.Load()) < pending
			if n := p.flowed.Load(); (n != seen || busy) && time.Since(start) < pipeDrainMax {
				seen = n
				drain.Reset(pipeDrain)
				continue
			}
			// A descendant that left the group holds a pipe: stop reading.
			res.PipesHeld = true
			p.outR.Close()
			p.errR.Close()
			for ; pending > 0; pending-- {
				<-readersDone
			}
		}
	}
	p.outR.Close()
	p.errR.Close()
}

// recordExit records how the process ended: its exit code or the signal
// that killed it.
func recordExit(cmd *exec.Cmd, waitErr error, res *Result) {
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case st.Exited():
			code := int64(st.ExitStatus())
			res.ExitCode = &code
		case st.Signaled():
			res.Signal = st.Signal().String()
		}
	} else if waitErr != nil && res.State == wfb.StateExited {
		res.State = wfb.StateSpawnFailure
		res.SpawnErr = waitErr
	}
}

// readLines copies r to tail and hands every line to onLine. Lines longer
// than MaxLineBytes are cut (the rest is skipped) and flagged truncated.
func readLines(r io.Reader, tail io.Writer, onLine func([]byte, bool)) int64 {
	br := bufio.NewReaderSize(io.TeeReader(r, tail), 64<<10)
	var total int64
	var line []byte
	truncated := false
	for {
		chunk, err := br.ReadSlice('\n')
		total += int64(len(chunk))
		if len(line)+len(chunk) <= MaxLineBytes {
			line = append(line, chunk...)
		} else {
			if room := MaxLineBytes - len(line); room > 0 {
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
