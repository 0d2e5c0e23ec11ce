package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/sandbox/launcher"
	"golang.org/x/sys/unix"
)

// MinLandlockABI is the oldest Landlock ABI the landlock backend accepts: v3
// (Linux 6.2) is the first that also governs truncate(2); under v1 and v2 a
// session could truncate a workspace file it may not write. The launcher
// asks for exactly this ABI, strictly: a kernel that cannot give it is
// refused, never degraded to what it can give.
const MinLandlockABI = 3

// landlockABI asks the kernel for its Landlock ABI version; a test swaps it
// to show the reasons for kernels this machine is not.
var landlockABI = func() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// landlock runs the session under wfb's launcher, which restricts itself
// with Landlock and then execs the agent (see the package doc).
type landlock struct {
	launcher string
	abi      int
}

// newLandlock checks the kernel's Landlock ABI and finds the launcher.
func newLandlock(opts Options) (backend, string) {
	abi, err := landlockABI()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return nil, "this kernel has no Landlock support (landlock_create_ruleset: ENOSYS); use a kernel built with CONFIG_SECURITY_LANDLOCK, or bwrap"
	case errors.Is(err, unix.EOPNOTSUPP):
		return nil, "Landlock is built into this kernel but not enabled (landlock_create_ruleset: EOPNOTSUPP); add landlock to the lsm= kernel boot parameter, or use bwrap"
	case err != nil:
		return nil, fmt.Sprintf("cannot ask the kernel for its Landlock ABI: %v", err)
	case abi < MinLandlockABI:
		return nil, fmt.Sprintf("the kernel's Landlock ABI is v%d, older than v%d (Linux 6.2), the first that also governs truncate(2); wfb does not degrade the boundary to what v%d can enforce", abi, MinLandlockABI, abi)
	}
	launcher := opts.Launcher
	if launcher == "" {
		if launcher, err = os.Executable(); err != nil {
			return nil, fmt.Sprintf("cannot locate the wfb executable to re-execute as the landlock launcher: %v", err)
		}
	}
	if fi, err := os.Stat(launcher); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Sprintf("the landlock launcher %s is not an executable file", launcher)
	}
	return &landlock{launcher: launcher, abi: abi}, ""
}

func (*landlock) name() string { return Landlock }

// prefix is `wfb sandbox-exec` with the session's rules. What the session
// may read: the system directories, /proc, /dev, the workspace and the
// executables of the agent and the programs (each, or its npm package).
// What it may write: the private root (home, tmp, the staged agent's
// directory is root's), the artifact dir, /dev/null, and the workspace
// when the session edits it (Options.WorkspaceWritable). As root,
// the launcher drops to the session uid after restricting itself, so it
// starts as wfb and needs no staging.
func (l *landlock) prefix(s *Sandbox) []string {
	argv := []string{l.launcher, LauncherCommand}
	seen, seenFile := map[string]bool{}, map[string]bool{}
	ro := func(p string) {
		if !seen[p] {
			seen[p] = true
			argv = append(argv, "--ro", p)
		}
	}
	for _, d := range systemDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			ro(d)
		}
	}
	ro("/proc")
	ro("/dev")
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil {
		ro(filepath.Dir(target))
	}
	// The executables (for an npm package, the package and the packages
	// it depends on), not their neighbours.
	for _, bin := range s.executables() {
		af, err := resolveAgentFiles(bin)
		switch {
		case err != nil:
		case af.pkg != "":
			ro(af.pkg)
			for _, d := range af.deps {
				ro(d)
			}
		case !seenFile[af.real]:
			seenFile[af.real] = true
			argv = append(argv, "--rofile", af.real)
		}
	}
	if s.writable {
		argv = append(argv, "--rw", s.workspace)
	} else {
		ro(s.workspace)
	}
	argv = append(argv, "--rw", s.root)
	if !within(s.artifactDir, s.root) {
		argv = append(argv, "--rw", s.artifactDir)
	}
	argv = append(argv, "--rwfile", "/dev/null")
	if s.cred != nil {
		argv = append(argv, "--uid", strconv.FormatUint(uint64(s.cred.Uid), 10), "--gid", strconv.FormatUint(uint64(s.cred.Gid), 10))
	}
	return append(argv, "--")
}

func (l *landlock) launch(ctx context.Context, s *Sandbox) (*Launch, error) {
	launch := &Launch{
		Prefix: l.prefix(s),
		// The launcher starts as wfb and drops to the session uid itself,
		// after Landlock binds it.
		Credential: nil,
		execFailed: launcherExecFailed,
	}
	proveAndRelease := func(context.Context) error { return nil }
	if s.probeAtLaunch && !isLiveProbe(ctx) {
		// Held at the launcher's --block-fd (fd 3 in the launcher) until
		// the gate — the live probe beside it — passed.
		blockR, blockW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("landlock block pipe: %w", err)
		}
		n := len(launch.Prefix)
		launch.Prefix = append(launch.Prefix[:n-1:n-1], "--block-fd", "3", "--")
		launch.ExtraFiles = []*os.File{blockR}
		launch.closers = []func() error{func() error {
			return errors.Join(closeOnce(blockR), closeOnce(blockW))
		}}
		proveAndRelease = func(ctx context.Context) error {
			blockR.Close()
			if launch.gate != nil {
				if err := launch.gate(ctx); err != nil {
					blockW.Close() // EOF: the launcher stops, executing nothing
					return err
				}
			}
			if _, err := blockW.Write([]byte{'1'}); err != nil {
				return &RefusedError{Backend: Landlock, Reason: fmt.Sprintf("release the launcher: %v", err)}
			}
			return blockW.Close()
		}
	}
	launch.started = func(ctx context.Context, pid int) error {
		if s.requirePID {
			// Unreachable through Prepare, which refuses the combination.
			if err := provePIDNamespace(Landlock, pid); err != nil {
				return err
			}
		}
		return proveAndRelease(ctx)
	}
	return launch, nil
}

// closeOnce closes f, taking an f already closed as done.
func closeOnce(f *os.File) error {
	if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

// launcherExecFailed recognises the launcher's report that it could not
// find or execute the agent: exit LauncherNotFound and one line of its own
// on stderr, nothing else (the agent never ran to print anything).
func launcherExecFailed(exit int, stdout, stderr string) *ExecError {
	msg := strings.TrimSuffix(stderr, "\n")
	if exit != LauncherNotFound || stdout != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "wfb "+LauncherCommand+": ") {
		return nil
	}
	return &ExecError{Backend: Landlock, Message: msg}
}

func (l *landlock) probe(ctx context.Context, s *Sandbox) (string, error) {
	return liveProbe(ctx, s, true)
}

func (l *landlock) note(s *Sandbox) string {
	who := "wfb's own uid (a session can still chmod files it owns: Landlock does not govern metadata)"
	if s.cred != nil {
		who = fmt.Sprintf("uid %d", s.cred.Uid)
	}
	return fmt.Sprintf("Landlock ABI v%d (v%d enforced, strict) as %s: %s, artifact dir writable (temp+rename probed), no capabilities; no PID namespace; shares the host network", l.abi, MinLandlockABI, who, workspaceNote(s, "read-only", "writable"))
}

// The launcher's command and exit codes (see package launcher, which every
// program linking this package links too, and so serves the command).
const (
	LauncherCommand  = launcher.Command
	LauncherRefused  = launcher.Refused
	LauncherNotFound = launcher.NotFound
)
