package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// check is one access test the session identity must pass: op is a test(1)
// primary (-r, -w, -x) applied to path; reason is what a failure means.
type check struct {
	op, path, reason string
}

// checks lists, in order, what the session identity must be able to do:
// reach and read the workspace, execute the agent and each program, write
// its home, tmp and artifact directories. Every ancestor directory is its
// own check, so a refusal names the exact component that blocks.
func (s *Sandbox) checks(agentExists, givenArtifactDir bool) []check {
	who := s.who()
	cs := s.workspaceChecks()
	if agentExists {
		cs = append(cs, execChecks(who, s.agentBin, "the agent binary", "the agent script")...)
	}
	for _, p := range s.programs {
		cs = append(cs, execChecks(who, p.Path, p.What, p.What)...)
	}
	cs = append(cs, reach(who, s.root, "the private root")...)
	for _, d := range []struct{ path, what string }{{s.home, "its home"}, {s.tmp, "its tmp"}} {
		cs = append(cs,
			check{"-x", d.path, fmt.Sprintf("%s cannot enter %s %s", who, d.what, d.path)},
			check{"-w", d.path, fmt.Sprintf("%s cannot write %s %s", who, d.what, d.path)},
		)
	}
	return append(cs, s.artifactChecks(givenArtifactDir)...)
}

// execChecks: the session reaches bin, executes it and, a script, reads
// it. what names it; script names it when it is a script.
func execChecks(who, bin, what, script string) []check {
	cs := append(reach(who, bin, what),
		check{"-x", bin, fmt.Sprintf("%s cannot execute %s %s", who, what, bin)})
	if isScript(bin) {
		cs = append(cs, check{"-r", bin, fmt.Sprintf("%s cannot read %s %s (an interpreter must read it)", who, script, bin)})
	}
	return cs
}

// reach is a check of every directory above target: the session must
// traverse each. A refusal names the exact component that blocks.
func reach(who, target, what string) []check {
	var cs []check
	for _, a := range ancestors(target) {
		cs = append(cs, check{"-x", a, fmt.Sprintf("%s cannot traverse %s, on the way to %s %s; fix: chmod o+x %s, or move it", who, a, what, target, a)})
	}
	return cs
}

// workspaceChecks: the session reaches, reads and enters the workspace,
// and writes it when it must edit it.
func (s *Sandbox) workspaceChecks() []check {
	who := s.who()
	cs := append(reach(who, s.workspace, "the workspace"),
		check{"-r", s.workspace, fmt.Sprintf("%s cannot read the workspace %s", who, s.workspace)},
		check{"-x", s.workspace, fmt.Sprintf("%s cannot enter the workspace %s", who, s.workspace)},
	)
	if s.writable {
		cs = append(cs, check{"-w", s.workspace, fmt.Sprintf("%s cannot write the workspace %s, and this session must edit it (it is not a review); fix: make it writable by that uid or its group (wfb run gives each cell's copy to the session's group with group write)", who, s.workspace)})
	}
	return cs
}

// artifactChecks: the session enters and writes the artifact dir (and
// reaches a given one).
func (s *Sandbox) artifactChecks(given bool) []check {
	who := s.who()
	var cs []check
	if given {
		cs = reach(who, s.artifactDir, "the artifact dir")
	}
	fix := ""
	if s.cred != nil {
		fix = fmt.Sprintf("; fix: chown %d %s", s.cred.Uid, s.artifactDir)
	}
	return append(cs,
		check{"-x", s.artifactDir, fmt.Sprintf("%s cannot enter the artifact dir %s%s", who, s.artifactDir, fix)},
		check{"-w", s.artifactDir, fmt.Sprintf("%s cannot write the artifact dir %s (an atomic write needs a writable directory)%s", who, s.artifactDir, fix)},
	)
}

func (s *Sandbox) who() string {
	if s.cred != nil {
		return fmt.Sprintf("session uid %d", s.cred.Uid)
	}
	return fmt.Sprintf("session uid %d (wfb's own)", os.Geteuid())
}

// ancestors lists the directories above an absolute path, from "/" down.
func ancestors(p string) []string {
	var out []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == "/" || d == "." {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func isScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 2)
	n, _ := f.Read(b)
	return n == 2 && string(b) == "#!"
}

// probeResult is what a probe found: the index of the first check that
// failed (treeBlocked when the checks passed but an entry of the workspace
// cannot be read; -1 when nothing failed) and why.
type probeResult struct {
	failed int
	reason string
}

// treeBlocked is probeResult.failed for an unreadable workspace entry.
const treeBlocked = -2

func (r probeResult) ok() bool { return r.failed == -1 }

// accessMode is access(2)'s mode for a check's test(1) primary.
var accessMode = map[string]uint32{"-r": 4, "-w": 2, "-x": 1}

// probe runs the checks as the session identity — the first that fails is
// the answer — and then, with a workspace given, walks it for the first
// entry (symlinks aside: their own mode means nothing and their targets are
// not the workspace) the session cannot read or, a directory, enter. The
// answers are the kernel's, not a guess from mode bits: the probe runs on
// an OS thread of its own that takes on the session's identity (setgroups,
// setresgid, setresuid on that thread alone, as the kernel allows; a root
// wfb's thread so loses the capabilities that would override modes) and
// asks access(2) and open(2). Go never runs anything else on that thread,
// and it ends with the probe: the goroutine exits without unlocking it.
// err is a probe that could not run.
func probe(ctx context.Context, cred *syscall.Credential, cs []check, workspace string) (probeResult, error) {
	type answer struct {
		r   probeResult
		err error
	}
	ch := make(chan answer, 1)
	onThreadThatDies(func() {
		if err := becomeSession(cred); err != nil {
			ch <- answer{err: fmt.Errorf("preflight probe as %s: %w", credString(cred), err)}
			return
		}
		r, err := runChecks(ctx, cred, cs, workspace)
		ch <- answer{r, err}
	})
	a := <-ch
	return a.r, a.err
}

// onThreadThatDies runs fn on a goroutine locked to an OS thread that ends
// with it (the goroutine exits without unlocking) and returns when fn has.
// Never the main thread: Go cannot end that one and parks it for good
// instead, and its identity is the process's — /proc/PID's owner, whom
// kill(2) and ptrace checks look at. Holding the main thread while the
// inner goroutine starts keeps the inner one off it.
func onThreadThatDies(fn func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() != os.Getpid() {
			defer close(done) // the thread ends after this goroutine
			fn()
			return
		}
		inner := make(chan struct{})
		go func() {
			runtime.LockOSThread() // not the main thread: this goroutine holds it
			defer close(inner)
			fn()
		}()
		<-inner
		runtime.UnlockOSThread()
		close(done)
	}()
	<-done
}

// becomeSession gives the calling thread, and only it, the session's
// identity with no supplementary groups: raw system calls, since Go's
// wrappers change every thread of the process. Nil cred is wfb's own.
func becomeSession(cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	calls := []struct {
		name string
		trap uintptr
		args [3]uintptr
	}{
		{"setgroups", syscall.SYS_SETGROUPS, [3]uintptr{0, 0, 0}},
		{"setresgid", syscall.SYS_SETRESGID, [3]uintptr{uintptr(cred.Gid), uintptr(cred.Gid), uintptr(cred.Gid)}},
		{"setresuid", syscall.SYS_SETRESUID, [3]uintptr{uintptr(cred.Uid), uintptr(cred.Uid), uintptr(cred.Uid)}},
	}
	for _, c := range calls {
		if _, _, errno := syscall.RawSyscall(c.trap, c.args[0], c.args[1], c.args[2]); errno != 0 {
			return fmt.Errorf("%s: %w", c.name, errno)
		}
	}
	return nil
}

// runChecks is the probe on a thread that already is the session.
func runChecks(ctx context.Context, cred *syscall.Credential, cs []check, workspace string) (probeResult, error) {
	for i, c := range cs {
		mode, ok := accessMode[c.op]
		if !ok {
			return probeResult{}, fmt.Errorf("preflight probe: unknown check %q", c.op)
		}
		if syscall.Access(c.path, mode) != nil {
			return probeResult{failed: i, reason: c.reason}, nil
		}
	}
	if workspace == "" {
		return probeResult{failed: -1}, nil
	}
	blocked, err := unreadableEntry(ctx, workspace)
	switch {
	case err != nil:
		return probeResult{}, fmt.Errorf("preflight probe of workspace %s as %s: %w", workspace, credString(cred), err)
	case blocked != "":
		who := "session uid " + credString(cred)
		return probeResult{failed: treeBlocked, reason: fmt.Sprintf("%s cannot read %s in the workspace %s; a review must be able to read what it reviews", who, blocked, workspace)}, nil
	}
	return probeResult{failed: -1}, nil
}

// errBlocked ends the walk at the first blocked entry.
var errBlocked = errors.New("blocked")

// unreadableEntry returns the first entry below root, in lexical order,
// that the calling thread cannot read or, a directory, enter; "" when there
// is none.
func unreadableEntry(ctx context.Context, root string) (string, error) {
	var blocked string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if p == root || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if syscall.Access(p, 4) != nil || (d.IsDir() && syscall.Access(p, 1) != nil) {
			blocked = p
			return errBlocked
		}
		return nil
	})
	if errors.Is(err, errBlocked) {
		return blocked, nil
	}
	return "", err
}

func credString(cred *syscall.Credential) string {
	if cred == nil {
		return strconv.Itoa(os.Geteuid())
	}
	return strconv.FormatUint(uint64(cred.Uid), 10)
}
