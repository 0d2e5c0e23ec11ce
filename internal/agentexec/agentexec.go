// Package agentexec is `wfb agent-exec`, the small process wfb puts in
// front of every agent (see Command). It is a package of its own, importing
// nothing that the Go runtime initialises late (no os/exec, path/filepath,
// strings or x/sys/unix: the runtime initialises packages in the order of
// their import paths as far as their imports allow), so that its init — which runs before the init of most of
// wfb's packages (SQLite, YAML, tables, HTTP) — takes the process over
// before wfb pays for initialising what agent-exec never uses.
package agentexec

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/wfbench/wfb/internal/proctree"

	"github.com/wfbench/wfb/internal/execpath"
)

// Command is the first argument with which the runner re-executes
// wfb in front of every agent process (and its sandbox's prefix):
//
//	wfb agent-exec --fds N --status-fd FD [--uid U --gid G] [--nproc N] [--data BYTES] -- ARGV...
//
// It runs as wfb's own user, sets the session's rlimits, becomes the child
// subreaper of everything the agent starts and starts ARGV (as --uid/--gid
// when given) with fds 3..3+N-1 passed on. It relays the child's exit
// status as its own, once it has killed every descendant the child left
// behind; how many there were it writes on the status fd first (see
// Left). When wfb dies — even of SIGKILL, which no handler of
// wfb's sees — the kernel tells it (PR_SET_PDEATHSIG, SIGUSR1) and it
// kills every descendant before it exits: agents never outlive wfb.
const Command = "agent-exec"

// Status is the exit code of an agent-exec that could not start its
// command; the reason is on its status fd.
const Status = 127

// leftPrefix starts what agent-exec writes on its status fd after its
// child ended leaving processes behind: "left N". Anything else there is
// why it could not start the child.
const leftPrefix = "left "

// Left reads what agent-exec wrote on its status fd: how many processes
// the child left running when it ended (ok), or, when ok is false, why it
// could not start the child ("" when it said nothing).
//
// The count is the session's at the moment the agent ended, taken before
// agent-exec kills them: a fork bomb that RLIMIT_NPROC stopped ends its
// shell with the limit's worth of processes still running, all of them
// gone before wfb's limit watch, which polls, can count them.
func Left(status []byte) (n int, ok bool) {
	v, found := cutPrefix(string(status), leftPrefix)
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// cutPrefix is strings.CutPrefix; see the package doc for why
// agent-exec does not import strings.
func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// init serves agent-exec in every program that links this package (wfb,
// and the test binaries of packages that run sessions) before its main or
// TestMain runs.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
}

// agentExecArgs is agent-exec's parsed command line.
type agentExecArgs struct {
	fds, statusFD int
	cred          *syscall.Credential
	nproc, data   uint64
	argv          []string
}

func parseAgentExecArgs(args []string) (agentExecArgs, error) {
	a := agentExecArgs{statusFD: -1}
	var uid, gid int64 = -1, -1
	for i := 0; i < len(args); i += 2 {
		if args[i] == "--" {
			a.argv = args[i+1:]
			break
		}
		if i+1 >= len(args) {
			return a, fmt.Errorf("%s needs a value", args[i])
		}
		n, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil || n < 0 {
			return a, fmt.Errorf("%s %q: want a non-negative number", args[i], args[i+1])
		}
		switch args[i] {
		case "--fds":
			a.fds = int(n)
		case "--status-fd":
			a.statusFD = int(n)
		case "--uid":
			uid = n
		case "--gid":
			gid = n
		case "--nproc":
			a.nproc = uint64(n)
		case "--data":
			a.data = uint64(n)
		default:
			return a, fmt.Errorf("unknown flag %q", args[i])
		}
	}
	if len(a.argv) == 0 {
		return a, errors.New("no command after --")
	}
	if (uid < 0) != (gid < 0) {
		return a, errors.New("--uid and --gid go together")
	}
	if uid >= 0 {
		a.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	return a, nil
}

// Main is agent-exec. Its failures before the command started go
// to the status fd (the runner records them as the session's spawn
// failure) and exit Status.
func Main(args []string) int {
	a, err := parseAgentExecArgs(args)
	status := os.Stderr
	if err == nil && a.statusFD >= 0 {
		syscall.CloseOnExec(a.statusFD) // never the agent's
		status = os.NewFile(uintptr(a.statusFD), "status")
	}
	fail := func(err error) int {
		fmt.Fprintf(status, "wfb %s: %v", Command, err)
		return Status
	}
	if err != nil {
		return fail(err)
	}
	// Before anything starts: wfb's death is a SIGUSR1 that is handled.
	parentGone := make(chan os.Signal, 1)
	signal.Notify(parentGone, syscall.SIGUSR1)
	if err := prctl(syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR1)); err != nil {
		return fail(fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", err))
	}
	if os.Getppid() == 1 {
		return fail(errors.New("wfb is already gone"))
	}
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		return fail(fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err))
	}
	if err := a.setLimits(); err != nil {
		return fail(err)
	}
	// The runner's SIGTERM to the process group reaches the agent
	// directly; agent-exec outlives it to relay the agent's status. A
	// handled signal (not an ignored one) is default again in the child.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	child, err := a.start()
	if err != nil {
		return fail(err)
	}
	done := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := child.Wait()
		done <- st
	}()
	select {
	case st := <-done:
		// What the agent left (a process it detached from its group and
		// session, now ours as the subreaper's) ends with it: without a
		// cgroup nothing else would find it once agent-exec is gone. How
		// many there were is for wfb to judge against the process limit.
		if n := leftBehind(); n > 0 {
			fmt.Fprintf(status, "%s%d", leftPrefix, n)
		}
		status.Close()
		killDescendants()
		return relayStatus(st)
	case <-parentGone:
		status.Close()
		killDescendants()
		return 137
	}
}

// leftBehind counts the live descendants of this process once its child
// has ended (zombies reaped first, so they do not count).
func leftBehind() int {
	if !reapChildren() {
		return 0
	}
	return len(proctree.Read().Descendants(os.Getpid()))
}

// setLimits sets the session's rlimits on agent-exec, which its child
// inherits.
func (a agentExecArgs) setLimits() error {
	if a.nproc > 0 {
		if err := syscall.Setrlimit(rlimitNproc, &syscall.Rlimit{Cur: a.nproc, Max: a.nproc}); err != nil {
			return fmt.Errorf("setrlimit(RLIMIT_NPROC, %d): %w", a.nproc, err)
		}
	}
	if a.data > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: a.data, Max: a.data}); err != nil {
			return fmt.Errorf("setrlimit(RLIMIT_DATA, %d): %w", a.data, err)
		}
	}
	return nil
}

// start starts the child: argv with stdio and the passed fds, as the
// session's identity, killed should agent-exec die. A command name without
// a slash is looked up in $PATH, as os/exec would.
func (a agentExecArgs) start() (*os.Process, error) {
	path, err := execpath.LookPath(a.argv[0])
	if err != nil {
		return nil, err
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for fd := 3; fd < 3+a.fds; fd++ {
		files = append(files, os.NewFile(uintptr(fd), "fd"+strconv.Itoa(fd)))
	}
	return os.StartProcess(path, a.argv, &os.ProcAttr{
		Env: os.Environ(), Files: files,
		Sys: &syscall.SysProcAttr{Credential: a.cred, Pdeathsig: syscall.SIGKILL},
	})
}

// prctl is prctl(2) with one argument.
func prctl(option int, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, uintptr(option), arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// Linux constants the frozen syscall package lacks.
const (
	prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER
	rlimitNproc         = 6  // RLIMIT_NPROC
)

// relayStatus ends agent-exec as its child ended: with its exit code, or
// killed by the same signal.
func relayStatus(st *os.ProcessState) int {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return st.ExitCode()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the signal ends us; never reached for SIGKILL
	return 128 + int(sig)
}

// killDescendants kills every descendant of this process, over and over
// until none is left: as the child subreaper it inherits the orphans of
// each one it kills, and reaps them so they stop counting.
//
// A process without children has no descendants (as the subreaper it is
// the parent of every orphan below it), so when reaping finds none — the
// common end of a session, its child gone and nothing left — no scan of
// /proc is needed.
func killDescendants() {
	if !reapChildren() {
		return
	}
	proctree.KillDescendants(os.Getpid(), func() { reapChildren() })
}

// reapChildren reaps every child that has ended and says whether any child
// is left. __WALL: a child started with another exit signal than SIGCHLD
// is a child too.
func reapChildren() bool {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG|syscall.WALL, nil)
		switch {
		case err == syscall.EINTR:
		case err == syscall.ECHILD: // none at all
			return false
		case err != nil: // unknown: let the scan decide
			return true
		case pid == 0: // children, none ended
			return true
		}
	}
}
