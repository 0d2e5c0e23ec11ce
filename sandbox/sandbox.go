package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/scratch"
)

// Backend names, and Auto, which picks the strongest backend whose preflight
// passes: the vocabulary's (wfb.SandboxBwrap and the rest), named here for
// the backends that implement them.
const (
	HostUnsafe = wfb.SandboxHostUnsafe
	Bwrap      = wfb.SandboxBwrap
	Landlock   = wfb.SandboxLandlock
	Auto       = wfb.SandboxAuto
)

// Strength lists the backends from the strongest to the weakest: the order
// Auto tries them in and doctor reports them in (wfb.SandboxStrength).
var Strength = wfb.SandboxStrength

// DefaultSessionID is the uid and gid (nobody:nogroup on Debian) a root wfb
// runs a host-unsafe session as when nothing else is configured.
const DefaultSessionID = 65534

// Environment variables that override the session identity of a root wfb.
const (
	EnvSessionUID = "WFB_SANDBOX_UID"
	EnvSessionGID = "WFB_SANDBOX_GID"
)

// Options says what sandbox to prepare.
type Options struct {
	// Workspace is the directory the agent works in (for a review: the
	// checkout under review). It must exist and must not be a symlink.
	Workspace string
	// WorkspaceWritable lets the session edit the workspace: a task whose
	// agent must change its tree (a bug fix) rather than review it. bwrap
	// binds the workspace read-write instead of read-only, landlock grants
	// it write rights, and host-unsafe leaves it to the mode bits of the
	// tree. Preflight then proves the opposite promise: a temp+rename
	// inside the workspace, as the session identity, must succeed. False
	// (a review) keeps the workspace read-only and refuses one that holds
	// anything the session uid owns.
	WorkspaceWritable bool
	// Backend names the isolation backend (Bwrap, Landlock, HostUnsafe), or
	// Auto for the strongest whose preflight passes.
	Backend string
	// AgentBin is the agent executable (a path, or a name looked up in
	// wfb's PATH the way exec.Command does). Preflight checks that the
	// session uid can execute it; a binary that does not exist at all is
	// left for the runner to report as a spawn failure.
	AgentBin string
	// Programs are further executables the session runs from the host,
	// such as the MCP servers the agent starts inside its sandbox. Each is
	// treated as the agent's executable is on every backend: reachable at
	// its host path read-only (for a program installed from npm, its
	// package's directory and those of the packages it depends on; never
	// the files beside it), never writable,
	// and checked by preflight as the session uid (reach, execute, read a
	// script). They are never staged. Unlike a missing agent, a program
	// that does not exist is refused before anything runs: the agent
	// would start, and fail later and obscurely when it spawned it.
	Programs []Program
	// ArtifactDir is where the session may write artifacts. Empty means
	// artifacts/ inside the private root. A given directory must lie
	// outside the workspace, must not be a symlink, and must be writable by
	// the session uid; it is created (mode 0700, owned by the session uid)
	// when its parent exists and it does not. It is never removed by Close.
	ArtifactDir string
	// RequirePIDNamespace refuses any backend that cannot run the session
	// in a PID namespace of its own.
	RequirePIDNamespace bool
	// SessionUID and SessionGID set the unprivileged identity a root wfb
	// runs the session as. Nil means $WFB_SANDBOX_UID / $WFB_SANDBOX_GID,
	// else DefaultSessionID. Setting them when wfb is not root is refused:
	// an unprivileged process cannot switch uid.
	SessionUID, SessionGID *uint32
	// StageAgent stages the agent binary in the private root (bin/; a hard
	// link or a copy, see StageExecutable) and runs what it staged. It
	// serves self-contained binaries that live where the session uid cannot
	// reach them, such as wfb itself under `go run`, whose build directory
	// is private to root.
	StageAgent bool
	// ProbeAtLaunch moves a kernel backend's live probe from Prepare to
	// each Launch: the probe's own sandbox starts while the agent's does,
	// and the agent, held at the backend's barrier (bubblewrap's, or wfb's
	// landlock launcher's --block-fd), is released only once the probe
	// passed — a refusal then comes from Launch's Started (the agent
	// stopped before it ran) instead of from Prepare. It saves a sandbox
	// start's wall time per session. Auto ignores it: choosing a backend
	// needs every backend's probe up front. Host-unsafe probes in Prepare
	// whatever it says.
	ProbeAtLaunch bool
	// ShmMax caps the session's shared memory where the backend gives it a
	// /dev/shm of its own (bwrap: a tmpfs of this many bytes, whose pages
	// are memory nothing else counts); 0 leaves bubblewrap's default, half
	// the machine's memory. The runner sets it to the session's memory
	// limit.
	ShmMax int64
	// Launcher is the executable the landlock backend runs as its launcher
	// (`wfb sandbox-exec`). Empty means this executable (os.Executable):
	// every program that links this package serves LauncherCommand from the
	// init of package launcher, which it imports.
	Launcher string
}

// Program is an executable of Options.Programs. Path is absolute, or a
// name looked up in wfb's PATH the way exec.Command does (as AgentBin).
// What names it in refusals, "the MCP server program" say; empty means
// "the program".
type Program struct {
	Path string
	What string
}

// RefusedError is a preflight refusal: nothing ran, and Reason says exactly
// what is wrong and, where there is one, the fix. The runner records it as
// sandbox-refused.
type RefusedError struct {
	Backend string
	Reason  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("sandbox %s refused: %s", e.Backend, e.Reason)
}

// RootPrefix and CopyPrefix start the names of a sandbox's private root
// and of a root wfb's workspace copy in the temp dir: scratch directories
// (internal/scratch), which a later wfb reaps once no wfb holds them.
const (
	RootPrefix = "wfb-sandbox-"
	CopyPrefix = "wfb-sandbox-copy-"
)

// Sandbox is a prepared place to run sessions in. Close removes its private
// root.
type Sandbox struct {
	backend backend
	// root is the private root's real path; rootDir holds it locked while
	// the sandbox is open, so a later wfb never reaps it in use.
	root        string
	rootDir     *scratch.Dir
	workspace   string
	artifactDir string
	home        string
	tmp         string
	agentBin    string
	// programs are Options.Programs, each found (see resolveProgram).
	programs   []Program
	requirePID bool
	writable   bool
	cred       *syscall.Credential
	shmMax     int64
	// uid holds the session uid of the pool while the sandbox is open.
	uid *uidSlot
	// A root wfb's session works in a copy of a workspace it cannot use
	// as it is (reachAsRoot): origin is the original, copyDir holds the
	// copy, baseline the original's mode of each entry the copy began with.
	origin   string
	copyDir  *scratch.Dir
	baseline map[string]fs.FileMode
	// deliverTo is the caller's artifact dir when the session writes into
	// a private one that DeliverArtifacts copies out.
	deliverTo string
	// proven says reachAsRoot's probe already passed every check preflight
	// would make, on the layout as it stands.
	proven bool
	// probeAtLaunch says the backend's live probe runs at launch (see
	// Options.ProbeAtLaunch); gated is that probe.
	probeAtLaunch bool
	gated         gatedProbe

	// passedOver says why Auto did not pick each stronger backend.
	passedOver []Status

	closeOnce sync.Once
	closeErr  error
}

// backend is what a backend adds to the common preflight.
type backend interface {
	name() string
	// prefix is the argv that goes before the agent's own.
	prefix(sb *Sandbox) []string
	// launch prepares one process start (extra files, the proof hook).
	launch(ctx context.Context, sb *Sandbox) (*Launch, error)
	// probe is the backend's live preflight, run once the private root
	// exists: "" when the boundary held, else the refusal reason.
	probe(ctx context.Context, sb *Sandbox) (string, error)
	// note says, for doctor, what the backend gave when preflight passed.
	note(sb *Sandbox) string
}

// newBackend makes the named backend after the checks that need nothing but
// the machine (the tool is there, the kernel has the feature); a non-empty
// reason refuses it.
func newBackend(opts Options) (backend, string) {
	switch opts.Backend {
	case HostUnsafe:
		return hostUnsafe{}, ""
	case Bwrap:
		return newBwrap()
	case Landlock:
		return newLandlock(opts)
	case "":
		return nil, fmt.Sprintf("no sandbox backend named (want %s, or %s)", strings.Join(Strength, ", "), Auto)
	}
	return nil, fmt.Sprintf("unknown backend %q (want %s, or %s)", opts.Backend, strings.Join(Strength, ", "), Auto)
}

// Prepare runs the preflight for opts and, if it passes, creates the private
// root (mode 0700) with home/, tmp/ and, unless opts.ArtifactDir is given,
// artifacts/. A refusal is a *RefusedError; any other error is an
// infrastructure failure. On every error path nothing is left behind.
func Prepare(ctx context.Context, opts Options) (_ *Sandbox, err error) {
	if opts.Backend == Auto {
		return prepareStrongest(ctx, opts)
	}
	refuse := func(reason string) error {
		return &RefusedError{Backend: opts.Backend, Reason: reason}
	}
	l, reason := checkOptions(opts)
	if reason != "" {
		return nil, refuse(reason)
	}
	var slot *uidSlot
	if l.cred != nil {
		if slot, reason, err = acquireSessionUID(ctx, l.cred); err != nil {
			return nil, err
		}
		if reason != "" {
			return nil, refuse(reason)
		}
	}
	rootDir, err := scratch.New("", RootPrefix)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create sandbox private root: %w", err), slot.release())
	}
	root := rootDir.Path
	sb := &Sandbox{
		backend:    l.be,
		root:       root,
		rootDir:    rootDir,
		workspace:  l.workspace,
		home:       filepath.Join(root, "home"),
		tmp:        filepath.Join(root, "tmp"),
		agentBin:   l.agentBin,
		programs:   l.programs,
		requirePID: opts.RequirePIDNamespace,
		writable:   opts.WorkspaceWritable,
		cred:       l.cred,
		uid:        slot,
		shmMax:     opts.ShmMax,
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, sb.Close())
			if l.createArtifactDir {
				// Only the empty directory Prepare made; never the user's files.
				err = errors.Join(err, os.Remove(l.artifactDir))
			}
		}
	}()
	reason, err = sb.layOut(opts, &l)
	if err == nil && reason == "" {
		reason, err = sb.reachAsRoot(ctx, opts, &l)
	}
	if err == nil && reason == "" {
		reason, err = sb.preflight(ctx, opts, l)
	}
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return nil, refuse(sb.inOrigin(reason))
	}
	return sb, nil
}

// inOrigin is a refusal of the session's workspace as the user knows it:
// a check of wfb's copy (see copyWorkspace) names the original path, the
// one the user gave and can fix, not the copy, which is gone by then.
func (s *Sandbox) inOrigin(reason string) string {
	if s.origin == "" || !strings.Contains(reason, s.workspace) {
		return reason
	}
	return strings.ReplaceAll(reason, s.workspace, s.origin) +
		" (checked on the copy wfb makes of it for the session, which keeps its modes)"
}

// layout is what Prepare settles from Options before it touches the disk.
type layout struct {
	be          backend
	cred        *syscall.Credential
	workspace   string
	agentBin    string
	agentExists bool
	programs    []Program
	// artifactDir is the one Options named, "" for the default under the
	// private root; createArtifactDir says Prepare must create it (and,
	// once it has, remove it again should Prepare fail).
	artifactDir       string
	createArtifactDir bool
}

// checkOptions makes the backend and checks what needs nothing on disk
// from wfb: the identity, the workspace, the agent, the programs and the
// artifact dir. A non-empty string is a refusal reason.
func checkOptions(opts Options) (layout, string) {
	var l layout
	// Judged by name, before newBackend looks at the machine: no machine
	// gives these backends a PID namespace, so this is the reason to give.
	if opts.RequirePIDNamespace && (opts.Backend == HostUnsafe || opts.Backend == Landlock) {
		return l, fmt.Sprintf("%s runs the session in wfb's own PID namespace and cannot provide one of its own, which require_pid_namespace demands (bwrap can)", opts.Backend)
	}
	var reason string
	if l.be, reason = newBackend(opts); reason != "" {
		return l, reason
	}
	if l.cred, reason = sessionCredential(opts, os.Geteuid()); reason != "" {
		return l, reason
	}
	if l.workspace, reason = checkWorkspace(opts.Workspace); reason != "" {
		return l, reason
	}
	if opts.AgentBin == "" {
		return l, "no agent binary given"
	}
	l.agentBin, l.agentExists = resolveAgent(opts.AgentBin)
	for _, p := range opts.Programs {
		found, reason := resolveProgram(p)
		if reason != "" {
			return l, reason
		}
		l.programs = append(l.programs, found)
	}
	if opts.ArtifactDir != "" {
		l.artifactDir, l.createArtifactDir, reason = checkArtifactDir(opts.ArtifactDir, l.workspace)
	}
	return l, reason
}

// layOut settles the private root's real path and creates home/, tmp/,
// the default artifacts/ (or the artifact dir l names, clearing
// l.createArtifactDir if it could not) and the staged agent, each handed to
// the session. A non-empty string is a refusal reason.
func (s *Sandbox) layOut(opts Options, l *layout) (string, error) {
	if realRoot, err := filepath.EvalSymlinks(s.root); err == nil {
		s.root = realRoot
		s.home = filepath.Join(realRoot, "home")
		s.tmp = filepath.Join(realRoot, "tmp")
	}
	if within(s.root, s.workspace) {
		return fmt.Sprintf("the private root %s would lie inside the workspace %s; set TMPDIR to a directory outside it", s.root, s.workspace), nil
	}
	private := []string{s.root, s.home, s.tmp}
	s.artifactDir = l.artifactDir
	if s.artifactDir == "" {
		s.artifactDir = filepath.Join(s.root, "artifacts")
		private = append(private, s.artifactDir)
	}
	for _, d := range private {
		if d != s.root {
			if err := os.Mkdir(d, 0o700); err != nil {
				return "", fmt.Errorf("create sandbox directory: %w", err)
			}
		}
		if err := s.handOver(d); err != nil {
			return "", err
		}
	}
	if opts.StageAgent && l.agentExists {
		var err error
		if s.agentBin, err = stageAgent(l.agentBin, s.root); err != nil {
			return "", err
		}
	}
	if l.createArtifactDir {
		if err := os.Mkdir(l.artifactDir, 0o700); err != nil {
			l.createArtifactDir = false
			return "", fmt.Errorf("create artifact dir: %w", err)
		}
		if err := s.handOver(l.artifactDir); err != nil {
			return "", err
		}
	}
	return "", nil
}

// preflight checks, with the private root in place, what the session will
// meet: who owns the workspace, that each path answers the session as it
// must, and the backend's own live probe. A non-empty string is a refusal
// reason.
func (s *Sandbox) preflight(ctx context.Context, opts Options, l layout) (string, error) {
	// A session that may edit its workspace has no boundary there to
	// chmod away; what it owns does not matter.
	if l.cred != nil && !opts.WorkspaceWritable {
		if reason := ownedBySession(l.workspace, l.cred.Uid, s.uid); reason != "" {
			return reason, nil
		}
	}
	if !s.proven {
		r, err := probe(ctx, l.cred, s.checks(l.agentExists, opts.ArtifactDir != ""), l.workspace)
		if err != nil || !r.ok() {
			return r.reason, err
		}
	}
	if opts.ProbeAtLaunch && (l.be.name() == Bwrap || l.be.name() == Landlock) {
		s.probeAtLaunch = true
		return "", nil
	}
	return l.be.probe(ctx, s)
}

// handOver makes a directory wfb created private to the session: mode 0700
// set explicitly (a restrictive umask must not strip the owner bits) and, when
// the session runs as another uid, owned by it.
func (s *Sandbox) handOver(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("create sandbox directory: %w", err)
	}
	if s.cred != nil {
		if err := os.Lchown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("hand %s to the session uid %d: %w", dir, s.cred.Uid, err)
		}
	}
	return nil
}

// SessionCredential is the identity sessions of a wfb with effective uid
// euid run as, by the rule Prepare applies when Options leave it open: nil
// (wfb's own) unless euid is 0, else $WFB_SANDBOX_UID / $WFB_SANDBOX_GID or
// DefaultSessionID, with no supplementary groups. The error says why the
// environment asks for what cannot be honoured (a non-numeric id, a session
// uid of root's, a uid a non-root wfb cannot switch to); Prepare refuses the
// same. Commands that run as the session outside a sandbox (a task's verify)
// use it so they run as the same identity as the agent.
func SessionCredential(euid int) (*syscall.Credential, error) {
	cred, reason := sessionCredential(Options{}, euid)
	if reason != "" {
		return nil, errors.New(reason)
	}
	return cred, nil
}

// sessionCredential decides who the session runs as: nil (wfb's own uid)
// unless wfb is root, in which case an unprivileged uid/gid with no
// supplementary groups. A non-empty string is a refusal reason.
func sessionCredential(opts Options, euid int) (*syscall.Credential, string) {
	uid, uidFrom, reason := identity(opts.SessionUID, EnvSessionUID)
	if reason != "" {
		return nil, reason
	}
	gid, gidFrom, reason := identity(opts.SessionGID, EnvSessionGID)
	if reason != "" {
		return nil, reason
	}
	if euid != 0 {
		for _, from := range []string{uidFrom, gidFrom} {
			if from != "" {
				return nil, fmt.Sprintf("%s asks for a session uid/gid, but wfb is not root (euid %d) and cannot switch identity; unset it", from, euid)
			}
		}
		return nil, ""
	}
	if uid == 0 || gid == 0 {
		return nil, fmt.Sprintf("session uid/gid %d:%d is root's: mode bits do not bind root, so the write boundary would not hold", uid, gid)
	}
	// Groups empty and NoSetGroups false: the child calls setgroups(0), so
	// root's supplementary groups do not ride along.
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, ""
}

// identity resolves one id from the field, the environment or the default;
// from names where a non-default value came from.
func identity(field *uint32, env string) (id uint32, from, reason string) {
	if field != nil {
		return *field, "Options." + map[string]string{EnvSessionUID: "SessionUID", EnvSessionGID: "SessionGID"}[env], ""
	}
	v, ok := os.LookupEnv(env)
	if !ok || v == "" {
		return DefaultSessionID, "", ""
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, "", fmt.Sprintf("%s=%q is not a numeric id", env, v)
	}
	return uint32(n), env, ""
}

func checkWorkspace(given string) (string, string) {
	if given == "" {
		return "", "no workspace given"
	}
	abs, err := filepath.Abs(given)
	if err != nil {
		return "", fmt.Sprintf("workspace %s: %v", given, err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Sprintf("workspace %s does not exist", abs)
	case err != nil:
		return "", fmt.Sprintf("workspace %s: %v", abs, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(abs)
		return "", fmt.Sprintf("workspace %s is a symlink (to %s); give the real directory so the boundary covers what the session sees", abs, target)
	case !fi.IsDir():
		return "", fmt.Sprintf("workspace %s is not a directory", abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Sprintf("workspace %s: %v", abs, err)
	}
	return real, ""
}

// resolveAgent finds the agent the way exec.Command would. A binary that
// cannot be found is returned as given: the runner's spawn reports it.
func resolveAgent(given string) (string, bool) {
	p, err := exec.LookPath(given)
	if err != nil {
		if _, serr := os.Stat(given); serr == nil {
			// Exists but not executable (by wfb): preflight names it.
			abs, _ := filepath.Abs(given)
			return abs, true
		}
		return given, false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p, true
	}
	return abs, true
}

// resolveProgram finds a program of Options.Programs the way resolveAgent
// finds the agent, and names it in What's words. One that does not exist is
// a refusal reason: nothing else would report it before the session ran.
func resolveProgram(p Program) (Program, string) {
	if p.What == "" {
		p.What = "the program"
	}
	if p.Path == "" {
		return p, p.What + " has an empty path"
	}
	bin, ok := resolveAgent(p.Path)
	if ok {
		return Program{Path: bin, What: p.What}, ""
	}
	if !strings.Contains(p.Path, "/") {
		return p, fmt.Sprintf("%s %s does not exist: it is not on PATH (%s)", p.What, p.Path, os.Getenv("PATH"))
	}
	if target, err := os.Readlink(p.Path); err == nil {
		return p, fmt.Sprintf("%s %s does not exist: it is a symlink to %s, which does not resolve", p.What, p.Path, target)
	}
	return p, fmt.Sprintf("%s %s does not exist", p.What, p.Path)
}

// checkArtifactDir resolves a user-given artifact directory and refuses one
// that is a symlink, not a directory, or overlaps the workspace. create
// reports that it does not exist yet and may be made.
func checkArtifactDir(given, workspace string) (dir string, create bool, reason string) {
	abs, err := filepath.Abs(given)
	if err != nil {
		return "", false, fmt.Sprintf("artifact dir %s: %v", given, err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent, perr := filepath.EvalSymlinks(filepath.Dir(abs))
		if perr != nil {
			return "", false, fmt.Sprintf("artifact dir %s does not exist and neither does its parent %s", abs, filepath.Dir(abs))
		}
		dir, create = filepath.Join(parent, filepath.Base(abs)), true
	case err != nil:
		return "", false, fmt.Sprintf("artifact dir %s: %v", abs, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(abs)
		return "", false, fmt.Sprintf("artifact dir %s is a symlink (to %s); give the real directory", abs, target)
	case !fi.IsDir():
		return "", false, fmt.Sprintf("artifact dir %s is not a directory", abs)
	default:
		if dir, err = filepath.EvalSymlinks(abs); err != nil {
			return "", false, fmt.Sprintf("artifact dir %s: %v", abs, err)
		}
	}
	switch {
	case within(dir, workspace):
		return "", false, fmt.Sprintf("artifact dir %s (resolved: %s) lies inside the workspace %s; a review must write outside what it reviews", abs, dir, workspace)
	case within(workspace, dir):
		return "", false, fmt.Sprintf("workspace %s lies inside the artifact dir %s (resolved: %s); the writable artifact dir must not contain the workspace", workspace, abs, dir)
	}
	return dir, create, ""
}

// within reports whether path is dir or lies below it (both already
// resolved and absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}

// ownedBySession refuses a workspace holding anything the session uid, or
// another uid of its pool, owns: an owner may chmod its write bits back, so
// the boundary would not hold against it or a concurrent session.
func ownedBySession(workspace string, uid uint32, pool *uidSlot) string {
	var reason string
	err := filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		switch {
		case !ok:
		case st.Uid == uid:
			reason = fmt.Sprintf("%s in the workspace is owned by the session uid %d, which could chmod the write boundary away; chown it to another user or pick another session uid (%s)", p, uid, EnvSessionUID)
			return fs.SkipAll
		case pool.holds(st.Uid):
			reason = fmt.Sprintf("%s in the workspace is owned by uid %d, a session uid of wfb's pool (%d..%d), so a concurrent session could chmod the write boundary away; chown it to another user", p, st.Uid, pool.low, pool.high)
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return fmt.Sprintf("walk workspace %s: %v", workspace, err)
	}
	return reason
}

// Backend is the name of the backend in use, as recorded in the row.
func (s *Sandbox) Backend() string { return s.backend.name() }

// Root is the private root: removed, with everything in it, by Close.
func (s *Sandbox) Root() string { return s.root }

// Workspace is the workspace's absolute path with symlinks resolved; the
// runner starts the agent in it.
func (s *Sandbox) Workspace() string { return s.workspace }

// ArtifactDir is the directory the session may write its artifacts into,
// outside the workspace.
func (s *Sandbox) ArtifactDir() string { return s.artifactDir }

// Home is the session's private HOME.
func (s *Sandbox) Home() string { return s.home }

// TmpDir is the session's private TMPDIR.
func (s *Sandbox) TmpDir() string { return s.tmp }

// AgentBin is the agent executable preflight checked: absolute when it was
// found, as given when it was not (the spawn will then fail).
func (s *Sandbox) AgentBin() string { return s.agentBin }

// Programs are the paths of Options.Programs preflight checked, in their
// order: absolute, a name found on PATH. They are the paths to exec inside:
// under bwrap nothing else of the programs' directories exists there.
func (s *Sandbox) Programs() []string {
	var out []string
	for _, p := range s.programs {
		out = append(out, p.Path)
	}
	return out
}

// executables are the host's files the session execs: the agent's (staged
// or not) and the programs.
func (s *Sandbox) executables() []string {
	return append([]string{s.agentBin}, s.Programs()...)
}

// CommandPrefix is the argv that goes before the agent's own; empty for
// host-unsafe. Backends that pass file descriptors to their launcher put
// those per-process parts only in Launch's Prefix, so a runner should start
// processes through Launch.
func (s *Sandbox) CommandPrefix() []string { return s.backend.prefix(s) }

// WorkspaceWritable reports whether the session may edit the workspace
// (Options.WorkspaceWritable); preflight proved it can.
func (s *Sandbox) WorkspaceWritable() bool { return s.writable }

// RequirePIDNamespace reports whether the session must run in a PID
// namespace of its own (and Launch.Started proves it).
func (s *Sandbox) RequirePIDNamespace() bool { return s.requirePID }

// Credential is the identity to start the session with
// (SysProcAttr.Credential); nil means wfb's own. A fresh copy each call.
func (s *Sandbox) Credential() *syscall.Credential {
	if s.cred == nil {
		return nil
	}
	c := *s.cred
	c.Groups = []uint32{}
	return &c
}

// Close removes the private root and gives the session uid back to the
// pool. It is safe to call more than once.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		defer func() { s.closeErr = errors.Join(s.closeErr, s.uid.release()) }()
		s.gated.wait() // it writes into the private root and the workspace
		if err := s.copyDir.Remove(); err != nil {
			s.closeErr = fmt.Errorf("remove the workspace copy: %w", err)
		}
		if err := s.rootDir.Remove(); err != nil {
			s.closeErr = errors.Join(s.closeErr, fmt.Errorf("remove sandbox private root: %w", err))
		}
	})
	return s.closeErr
}

// PrepareReviewWorkspace returns the path the session must write the
// artifact name to: inside ArtifactDir, outside the workspace, in a directory
// the session can write (an atomic temp+rename needs a writable directory).
// It does not create the file, so a session that never wrote it is told apart
// from one that wrote it wrong; an artifact already there is refused, since
// it would be scored as this session's.
func PrepareReviewWorkspace(sb *Sandbox, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || strings.Contains(name, "..") {
		return "", fmt.Errorf("artifact name %q: want a plain file name (no slash, no \"..\")", name)
	}
	p := filepath.Join(sb.artifactDir, name)
	_, err := os.Lstat(p)
	if err != nil && sb.deliverTo != "" {
		// It will be copied out there: one already there is as bad.
		_, err = os.Lstat(filepath.Join(sb.deliverTo, name))
		if err == nil {
			p = filepath.Join(sb.deliverTo, name)
		}
	}
	switch {
	case err == nil:
		return "", &RefusedError{Backend: sb.Backend(), Reason: fmt.Sprintf("artifact %s already exists and would be scored as this session's; remove it or use a fresh artifact dir", p)}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("artifact %s: %w", p, err)
	}
	return p, nil
}

// stageAgent stages the executable bin in root/bin (StageExecutable) and
// returns the staged path. What is staged is root's (or wfb's) and only
// readable and executable by the session, so it cannot be swapped under a
// later session.
func stageAgent(bin, root string) (string, error) {
	dir := filepath.Join(root, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("stage the agent binary: %w", err)
	}
	dst := filepath.Join(dir, filepath.Base(bin))
	if err := StageExecutable(bin, dst); err != nil {
		return "", fmt.Errorf("stage the agent binary: %w", err)
	}
	return dst, nil
}
