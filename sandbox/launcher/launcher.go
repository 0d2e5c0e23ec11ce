// Package launcher is the landlock backend's launcher, `wfb sandbox-exec`
// (see Command). It is a package of its own, importing nothing that Go
// initialises late apart from what Landlock needs (no os/exec or
// path/filepath), so that its init takes the process over before most of
// wfb's packages (SQLite, YAML, tables, HTTP) are initialised.
package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"github.com/wfbench/wfb/internal/execpath"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Command is the first argument with which the landlock backend re-executes
// wfb as: `wfb sandbox-exec [--ro DIR]... [--rofile FILE]... [--rw DIR]... [--rwfile FILE]...
// [--uid N --gid N] [--block-fd N] -- AGENT ARGS...`.
const Command = "sandbox-exec"

// Launcher exit codes. Refused means the boundary could not be put
// in place and nothing was executed.
const (
	Refused  = 125
	NotFound = 127
)

// init serves the launcher in every program that links this package. The
// landlock backend re-executes os.Executable() with Command first;
// whichever binary that is (wfb, or the test binary of any package that
// prepares sandboxes) must become the launcher before its own main or
// TestMain runs: a test binary that did not would run its tests again,
// recursively.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
}

// launcherArgs is the parsed command line of the launcher.
type launcherArgs struct {
	ro, rw, rwFiles []string
	// roFiles may be read and executed, each a single file (the agent's
	// executable without its directory's other files).
	roFiles  []string
	uid, gid *int
	// blockFD, when set, is a pipe the launcher reads one byte from
	// before it does anything else: wfb's go-ahead, given once the
	// sandbox's live probe passed (the landlock twin of bubblewrap's
	// --block-fd).
	blockFD *int
	argv    []string
}

func parseLauncherArgs(args []string) (launcherArgs, error) {
	var a launcherArgs
	for i := 0; i < len(args); i++ {
		flag := args[i]
		if flag == "--" {
			a.argv = args[i+1:]
			break
		}
		if i+1 >= len(args) {
			return a, fmt.Errorf("%s needs a value", flag)
		}
		val := args[i+1]
		i++
		switch flag {
		case "--ro":
			a.ro = append(a.ro, val)
		case "--rw":
			a.rw = append(a.rw, val)
		case "--rwfile":
			a.rwFiles = append(a.rwFiles, val)
		case "--rofile":
			a.roFiles = append(a.roFiles, val)
		case "--block-fd":
			n, err := strconv.Atoi(val)
			if err != nil || n < 3 {
				return a, fmt.Errorf("--block-fd %q: want a descriptor number of 3 or more", val)
			}
			a.blockFD = &n
		case "--uid", "--gid":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return a, fmt.Errorf("%s %q: want a positive numeric id (never root's)", flag, val)
			}
			if flag == "--uid" {
				a.uid = &n
			} else {
				a.gid = &n
			}
		default:
			return a, fmt.Errorf("unknown flag %q", flag)
		}
	}
	switch {
	case len(a.argv) == 0:
		return a, errors.New("no command after --")
	case (a.uid == nil) != (a.gid == nil):
		return a, errors.New("--uid and --gid go together")
	case len(a.ro)+len(a.rw) == 0:
		return a, errors.New("no --ro or --rw paths: nothing would be readable")
	}
	return a, nil
}

// awaitGoAhead reads wfb's go-ahead, the byte '1', from fd and closes it
// (the agent never inherits it). Anything else — the pipe closed without
// it, because the live probe refused the sandbox or wfb is gone — stops
// the launch before the command could run.
func awaitGoAhead(fd int) error {
	var b [1]byte
	n, err := unix.Read(fd, b[:])
	unix.Close(fd)
	switch {
	case err != nil:
		return fmt.Errorf("read the go-ahead on --block-fd %d: %v", fd, err)
	case n != 1 || b[0] != '1':
		return fmt.Errorf("no go-ahead on --block-fd %d: the sandbox was not released (its live probe refused it, or wfb is gone); nothing was executed", fd)
	}
	return nil
}

// Main is the landlock launcher. It restricts its own thread with a
// strict Landlock ruleset (ABI v3: read and execute under --ro, everything
// under --rw, read and write of the --rwfile files; nothing else), sets
// no_new_privs, drops to --uid/--gid with no supplementary groups when given,
// and execs the command from that same thread, so the command inherits all
// of it. It returns only on failure: Refused when the boundary could
// not be put in place, NotFound when the command could not be
// executed.
func Main(args []string, stderr io.Writer) int {
	fail := func(code int, format string, v ...any) int {
		fmt.Fprintf(stderr, "wfb %s: %s\n", Command, fmt.Sprintf(format, v...))
		return code
	}
	a, err := parseLauncherArgs(args)
	if err != nil {
		return fail(Refused, "%v", err)
	}
	if a.blockFD != nil {
		if err := awaitGoAhead(*a.blockFD); err != nil {
			return fail(Refused, "%v", err)
		}
	}
	// Resolved before the ruleset binds, with the PATH the runner gave.
	bin, err := execpath.LookPath(a.argv[0])
	if err != nil {
		return fail(NotFound, "%v", err)
	}
	rules := []golandlock.Rule{}
	if len(a.ro) > 0 {
		rules = append(rules, golandlock.RODirs(a.ro...))
	}
	if len(a.rw) > 0 {
		// Refer lets a file move between writable directories; it never
		// reaches a directory without write rights.
		rules = append(rules, golandlock.RWDirs(a.rw...).WithRefer())
	}
	if len(a.rwFiles) > 0 {
		rules = append(rules, golandlock.RWFiles(a.rwFiles...))
	}
	if len(a.roFiles) > 0 {
		rules = append(rules, golandlock.ROFiles(a.roFiles...))
	}
	// Strict: no BestEffort. A kernel without v3 is an error here.
	fd, flags, err := golandlock.V3.NewRulesetFD(rules...)
	if err != nil {
		return fail(Refused, "landlock: %v", err)
	}
	if fd < 0 {
		return fail(Refused, "landlock: the ruleset restricts nothing")
	}
	// The ruleset, no_new_privs and the identity are this thread's; the
	// exec below must happen on it, so it is never given back.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(Refused, "prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fail(Refused, "landlock_restrict_self: %v", err)
	}
	unix.Close(fd)
	if a.uid != nil {
		// Raw, per-thread calls: the libc-style wrappers change every
		// thread, which needs machinery (cgo or psx) this thread does not.
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fail(Refused, "setgroups: %v", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(*a.gid), uintptr(*a.gid), uintptr(*a.gid)); e != 0 {
			return fail(Refused, "setresgid %d: %v", *a.gid, e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(*a.uid), uintptr(*a.uid), uintptr(*a.uid)); e != 0 {
			return fail(Refused, "setresuid %d: %v", *a.uid, e)
		}
	}
	err = syscall.Exec(bin, a.argv, os.Environ())
	return fail(NotFound, "exec %s: %v", bin, err)
}
