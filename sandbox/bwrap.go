package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MinBwrapVersion is the oldest bubblewrap the bwrap backend accepts: 0.8.0
// added --disable-userns, which stops the session from creating user
// namespaces of its own (the first step of most attempts to remount the
// workspace).
var MinBwrapVersion = [3]int{0, 8, 0}

// procSys is where the kernel's sysctls are read; a test points it at a
// directory of its own to show the reasons for settings it must not change
// on the machine.
var procSys = "/proc/sys"

// systemDirs are bound read-only (or recreated as the same symlinks) so the
// agent and the tools it calls find their programs, libraries, certificates
// and name service configuration. Nothing else of the host is visible.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// bwrapInfoTimeout bounds the wait for bubblewrap to report its child.
const bwrapInfoTimeout = 30 * time.Second

// bwrap runs the session under bubblewrap (see the package doc).
type bwrap struct {
	path    string
	version string
}

// newBwrap finds bwrap on PATH and checks what can be checked without
// running a sandbox: its version and the user-namespace sysctls.
func newBwrap() (backend, string) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Sprintf("bubblewrap is not installed: no bwrap on PATH (%s); install it (Debian/Ubuntu: apt-get install bubblewrap)", os.Getenv("PATH"))
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	version, reason := bwrapVersions.of(p)
	if reason != "" {
		return nil, reason
	}
	if less(version, MinBwrapVersion) {
		return nil, fmt.Sprintf("%s is bubblewrap %s, older than %s, the first with --disable-userns (which stops the session from creating user namespaces of its own to remount the workspace); upgrade bubblewrap", p, versionString(version), versionString(MinBwrapVersion))
	}
	if reason := userNamespacesDisabled(); reason != "" {
		return nil, reason
	}
	return &bwrap{path: p, version: versionString(version)}, ""
}

// parseBwrapVersion reads "bubblewrap 0.8.0" (the last field, as x.y.z).
func parseBwrapVersion(out string) ([3]int, bool) {
	fields := strings.Fields(out)
	if len(fields) == 0 {
		return [3]int{}, false
	}
	parts := strings.Split(fields[len(fields)-1], ".")
	if len(parts) < 2 || len(parts) > 3 {
		return [3]int{}, false
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return [3]int{}, false
		}
		v[i] = n
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// bwrapVersions is the version of each bubblewrap this process asked, kept
// by the binary's identity: a sweep prepares a sandbox per cell, and
// `bwrap --version` was a process start (~2 ms) for every one. A binary
// replaced or changed in place (another device, inode, size or mtime) is
// asked again; only an answer that parsed is kept.
var bwrapVersions = versionCache{m: map[binaryIdentity][3]int{}}

// binaryIdentity is a file as the cache knows it.
type binaryIdentity struct {
	path      string
	dev, ino  uint64
	size      int64
	mtimeNano int64
}

type versionCache struct {
	mu sync.Mutex
	m  map[binaryIdentity][3]int
}

// of runs `p --version` unless p's identity answered before; a non-empty
// reason refuses the backend.
func (c *versionCache) of(p string) ([3]int, string) {
	id, known := identify(p)
	if known {
		c.mu.Lock()
		v, ok := c.m[id]
		c.mu.Unlock()
		if ok {
			return v, ""
		}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return [3]int{}, fmt.Sprintf("%s --version failed: %v", p, err)
	}
	version, ok := parseBwrapVersion(string(out))
	if !ok {
		return [3]int{}, fmt.Sprintf("cannot tell the version of %s from %q; want bubblewrap %s or newer", p, strings.TrimSpace(string(out)), versionString(MinBwrapVersion))
	}
	// Kept only when the binary asked is the one stat saw before.
	if after, ok := identify(p); known && ok && after == id {
		c.mu.Lock()
		c.m[id] = version
		c.mu.Unlock()
	}
	return version, ""
}

// identify is p's identity, if stat can tell it.
func identify(p string) (binaryIdentity, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return binaryIdentity{}, false
	}
	return binaryIdentity{path: p, dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtimeNano: st.Mtim.Nano()}, true
}

func versionString(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// userNamespacesDisabled reads the sysctls that forbid the unprivileged user
// namespace bwrap needs (wfb runs bwrap as the unprivileged session uid when
// it is root, and as itself otherwise). A sysctl that does not exist on this
// kernel does not forbid anything.
func userNamespacesDisabled() string {
	read := func(name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(procSys, filepath.FromSlash(name)))
		if err != nil {
			return "", false
		}
		return strings.TrimSpace(string(b)), true
	}
	if v, ok := read("user/max_user_namespaces"); ok && v == "0" {
		return "user namespaces are disabled (user.max_user_namespaces = 0) and bwrap runs the session in one; fix: sysctl -w user.max_user_namespaces=15000"
	}
	if v, ok := read("kernel/unprivileged_userns_clone"); ok && v == "0" {
		return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0) and wfb runs bwrap unprivileged (as the session uid when it is root); fix: sysctl -w kernel.unprivileged_userns_clone=1"
	}
	return ""
}

func (*bwrap) name() string { return Bwrap }

// prefix is bubblewrap's argv without the launch protocol's descriptors.
// The workspace is bound read-only, or read-write for a session that edits
// it (Options.WorkspaceWritable).
//
// Everything is bound at the path it has on the host, so the workspace,
// HOME, TMPDIR, the artifact path, the agent binary the runner computed and
// the programs are valid inside. The order matters: later mounts go on top
// of earlier ones, and the private tmp is bound before the paths under it
// are made.
func (b *bwrap) prefix(s *Sandbox) []string { return b.prefixWith(s, true) }

// prefixWith is prefix, with the mounts of the agent and the programs or
// without them.
func (b *bwrap) prefixWith(s *Sandbox, executables bool) []string {
	argv := []string{b.path,
		// The user namespace is what makes the session's capabilities
		// worthless outside it; --disable-userns forbids nesting another.
		"--unshare-user", "--disable-userns",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
	}
	bound := []string{}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				continue
			}
			argv = append(argv, "--symlink", target, d)
			bound = append(bound, d) // made already: never again
		case fi.IsDir():
			argv = append(argv, "--ro-bind", d, d)
			bound = append(bound, d)
		}
	}
	covered := func(p string) bool {
		for _, d := range append(bound, s.root) {
			if within(p, d) {
				return true
			}
		}
		return false
	}
	// The private tmp goes on /tmp before anything is bound below it: a
	// mount made earlier under /tmp (a staged agent's directory) would be
	// hidden by it.
	argv = append(argv, "--proc", "/proc", "--dev", "/dev")
	if s.shmMax > 0 {
		// --dev makes /dev a tmpfs of half the machine's memory, and
		// /dev/shm a directory in it: what a session wrote there was
		// memory no limit counted. Its own tmpfs, capped.
		argv = append(argv, "--perms", "1777", "--size", strconv.FormatInt(s.shmMax, 10), "--tmpfs", "/dev/shm")
	}
	argv = append(argv, "--bind", s.tmp, "/tmp")
	// A resolv.conf that is a symlink into /run (systemd-resolved) must
	// resolve inside too, or the real API's host name does not.
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !covered(target) {
		argv = append(argv, "--ro-bind", filepath.Dir(target), filepath.Dir(target))
	}
	if executables {
		argv = append(argv, executableMounts(s, s.executables(), covered)...)
	}
	wsBind := "--ro-bind"
	if s.writable {
		wsBind = "--bind"
	}
	argv = append(argv,
		"--bind", s.root, s.root,
		wsBind, s.workspace, s.workspace,
	)
	if !within(s.artifactDir, s.root) {
		argv = append(argv, "--bind", s.artifactDir, s.artifactDir)
	}
	return append(argv, "--chdir", s.workspace)
}

// executableMounts makes each of bins (the agent's executable, the
// programs) visible at the path the session execs, and nothing beside it:
// the real file read-only (for an npm package, the package's directory
// and those of the packages it depends on),
// the symlinks on the way recreated as symlinks. Nothing is bound or made
// twice: what covered says is visible already is left alone, as is a file
// or package inside another one bound here (two programs of one package,
// a package nested in another's node_modules), and a link two of them
// follow is made once.
func executableMounts(s *Sandbox, bins []string, covered func(string) bool) []string {
	var files []agentFiles
	var needs []string
	for _, bin := range bins {
		af, err := resolveAgentFiles(bin)
		if err != nil {
			continue // gone: the spawn reports it (preflight refused a missing program)
		}
		files = append(files, af)
		if af.pkg == "" {
			needs = append(needs, af.real)
			continue
		}
		needs = append(append(needs, af.pkg), af.deps...)
	}
	inNeed := func(p string) bool {
		return slices.ContainsFunc(needs, func(n string) bool { return within(p, n) })
	}
	var argv []string
	for i, need := range needs {
		inOther := slices.ContainsFunc(needs, func(n string) bool { return n != need && within(need, n) })
		if covered(need) || inOther || slices.Contains(needs[:i], need) {
			continue
		}
		if within(need, "/tmp") {
			// Its mount point lies in the private tmp, and the directories
			// above it must be there before the links below are made by
			// wfb (root-owned: bubblewrap, as the session's uid, could not
			// make the mount point inside them).
			s.mountPointInTmp(need)
		}
		argv = append(argv, "--ro-bind", need, need)
	}
	// npm's node_modules/.bin/claude → ../@anthropic-ai/claude-code/...:
	// the exec follows the same links inside, or finds nothing there.
	made := map[string]bool{}
	for _, af := range files {
		for _, l := range af.links {
			switch {
			case made[l.path] || covered(l.path) || inNeed(l.path):
			case within(l.path, "/tmp"):
				// Under /tmp the link lands in the private tmp, which every
				// launch of the sandbox shares (the version probe's, the
				// agent's): made here, before any launch, instead of by
				// bubblewrap, which refuses to make a symlink that exists —
				// a launch whose arguments were built before another launch
				// made it failed with "Can't make symlink at …: File
				// exists".
				if err := s.linkInTmp(l); err != nil {
					argv = append(argv, "--symlink", l.target, l.path)
				}
			default:
				argv = append(argv, "--symlink", l.target, l.path)
			}
			made[l.path] = true
		}
	}
	return argv
}

// mountPointInTmp makes the mount point of p, a path under /tmp, in the
// sandbox's private tmp: a directory for a directory, an empty file for a
// file. A failure is left for bubblewrap to report.
func (s *Sandbox) mountPointInTmp(p string) {
	rel, err := filepath.Rel("/tmp", p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	host := filepath.Join(s.tmp, rel)
	fi, err := os.Stat(p)
	if err != nil || s.makeTmpDirs(filepath.Dir(host)) != nil {
		return
	}
	if fi.IsDir() {
		s.makeTmpDirs(host)
		return
	}
	if f, err := os.OpenFile(host, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o644); err == nil {
		f.Close()
		s.giveToSession(host, 0o644)
	}
}

// makeTmpDirs makes dir, a directory in the private tmp, and those above
// it that are missing, as bubblewrap would have made them: mode 0755,
// owned by the session's uid, so that a later launch can still make its
// own mount points inside them (the sandbox's root lies under /tmp too
// when TMPDIR is /tmp).
func (s *Sandbox) makeTmpDirs(dir string) error {
	rel, err := filepath.Rel(s.tmp, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not in the private tmp", dir)
	}
	d := s.tmp
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		d = filepath.Join(d, part)
		if err := os.Mkdir(d, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return err
		}
		if err := s.giveToSession(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// giveToSession sets mode on p, wfb's own, and hands it to the session's
// uid when the session runs as another.
func (s *Sandbox) giveToSession(p string, mode fs.FileMode) error {
	if err := os.Chmod(p, mode); err != nil {
		return err
	}
	if s.cred != nil {
		return os.Lchown(p, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

// linkInTmp makes link l, a path under /tmp, in the sandbox's private tmp
// (bound on /tmp in every launch), with the directories on its way; a link
// already there with the same target is left as it is. The directories
// are made traversable, as bubblewrap makes its own mount points, so the
// session's uid follows the link.
func (s *Sandbox) linkInTmp(l symlink) error {
	rel, err := filepath.Rel("/tmp", l.path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("link %s is not under /tmp", l.path)
	}
	host := filepath.Join(s.tmp, rel)
	if target, err := os.Readlink(host); err == nil && target == l.target {
		return nil
	}
	if err := s.makeTmpDirs(filepath.Dir(host)); err != nil {
		return err
	}
	if err := os.Symlink(l.target, host); err != nil {
		if target, rerr := os.Readlink(host); rerr == nil && target == l.target {
			return nil // made meanwhile by a launch being prepared beside this one
		}
		return err
	}
	if s.cred != nil {
		return os.Lchown(host, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

// bwrapExecFailed recognises bubblewrap's own report that it could not
// execute the agent ("bwrap: execvp PATH: REASON", exit 1, and nothing
// else: the agent never ran to print anything).
func bwrapExecFailed(exit int, stdout, stderr string) *ExecError {
	msg := strings.TrimSuffix(stderr, "\n")
	if exit != 1 || stdout != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "bwrap: execvp ") {
		return nil
	}
	return &ExecError{Backend: Bwrap, Message: msg}
}

// launch holds the agent at bubblewrap's --block-fd until Started has read
// the sandbox's pid from --info-fd and proven, from this side, that it runs
// in a PID namespace other than wfb's.
func (b *bwrap) launch(ctx context.Context, s *Sandbox) (*Launch, error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("bwrap info pipe: %w", err)
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoR.Close()
		infoW.Close()
		return nil, fmt.Errorf("bwrap block pipe: %w", err)
	}
	// ExtraFiles become fds 3 and 4 in bwrap.
	argv := append(b.prefixWith(s, !isProbeLaunch(ctx)), "--info-fd", "3", "--block-fd", "4")
	if isLiveProbe(ctx) {
		// Its shell is the namespace's init, reaped by bwrap itself: no
		// orphan left to the machine's init (see liveProbeKey).
		argv = append(argv, "--as-pid-1")
	}
	argv = append(argv, "--")
	closeAll := func() error {
		return errors.Join(closeOnce(infoR), closeOnce(infoW), closeOnce(blockR), closeOnce(blockW))
	}
	l := &Launch{
		Prefix:     argv,
		ExtraFiles: []*os.File{infoW, blockR},
		Credential: s.Credential(),
		closers:    []func() error{closeAll},
		execFailed: bwrapExecFailed,
	}
	l.started = func(ctx context.Context, _ int) error {
		// bwrap holds its own copies now; without ours, EOF on the info
		// pipe means bwrap is gone.
		infoW.Close()
		blockR.Close()
		child, err := readChildPID(ctx, infoR)
		if err != nil {
			return &RefusedError{Backend: Bwrap, Reason: err.Error()}
		}
		if err := provePIDNamespace(Bwrap, child); err != nil {
			// Never released: kill it before it could be.
			_ = syscall.Kill(child, syscall.SIGKILL)
			return err
		}
		if l.gate != nil {
			if err := l.gate(ctx); err != nil {
				_ = syscall.Kill(child, syscall.SIGKILL)
				return err
			}
		}
		if _, err := blockW.Write([]byte{'1'}); err != nil {
			return &RefusedError{Backend: Bwrap, Reason: fmt.Sprintf("release the sandbox (pid %d): %v", child, err)}
		}
		return blockW.Close()
	}
	return l, nil
}

// readChildPID reads bubblewrap's --info-fd report, {"child-pid": N, ...}.
func readChildPID(ctx context.Context, r *os.File) (int, error) {
	deadline := time.Now().Add(bwrapInfoTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = r.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	var info struct {
		ChildPID *int `json:"child-pid"`
	}
	err := json.NewDecoder(r).Decode(&info)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("bwrap did not report the sandbox's pid on --info-fd in time (at most %s)", bwrapInfoTimeout)
	case err != nil:
		return 0, fmt.Errorf("bwrap exited or failed before it reported the sandbox's pid on --info-fd (%v); its stderr says why", err)
	case info.ChildPID == nil || *info.ChildPID <= 0:
		return 0, errors.New("bwrap's --info-fd report has no child-pid")
	}
	return *info.ChildPID, nil
}

func (b *bwrap) probe(ctx context.Context, s *Sandbox) (string, error) {
	reason, err := liveProbe(ctx, s, true)
	if reason != "" {
		if v, err := os.ReadFile(filepath.Join(procSys, "kernel", "apparmor_restrict_unprivileged_userns")); err == nil && strings.TrimSpace(string(v)) == "1" {
			reason += " (kernel.apparmor_restrict_unprivileged_userns = 1: AppArmor may forbid the user namespace bwrap needs unless bwrap has a profile allowing it)"
		}
	}
	return reason, err
}

func (b *bwrap) note(s *Sandbox) string {
	who := "wfb's own uid"
	if s.cred != nil {
		who = fmt.Sprintf("uid %d", s.cred.Uid)
	}
	return fmt.Sprintf("bubblewrap %s as %s in new user/PID/IPC/UTS namespaces: %s, artifact dir writable (temp+rename probed), PID namespace proven, no capabilities; shares the host network", b.version, who, workspaceNote(s, "bound read-only", "bound read-write"))
}
