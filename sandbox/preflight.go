package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// check is one access test the session identity must pass: op is a test(1)
// primary (-r, -w, -x) applied to path; reason is what a failure means.
type check struct {
	op, path, reason string
}

// probeScript runs test(1) on each (op, path) pair after the workspace
// ($1) and prints the index of the first that fails; when all pass and a
// workspace is given it asks
// find(1) for the first entry of the workspace the session cannot read
// (or, for a directory, enter) — symlinks skipped: their own mode means
// nothing and their targets are not the workspace. Paths arrive as
// arguments, so no quoting can break. One process answers all of
// preflight's questions.
const probeScript = `ws=$1; shift
i=0
while [ "$#" -ge 2 ]; do
	if ! test "$1" "$2"; then echo "$i"; exit 3; fi
	i=$((i+1)); shift 2
done
[ -n "$ws" ] || exit 0
exec find "$ws" -mindepth 1 ! -type l \( ! -readable -o -type d ! -executable \) -print0 -quit`

// checks lists, in order, what the session identity must be able to do:
// reach and read the workspace, execute the agent, write its home, tmp and
// artifact directories. Every ancestor directory is its own check, so a
// refusal names the exact component that blocks.
func (s *Sandbox) checks(agentExists, givenArtifactDir bool) []check {
	who := s.who()
	cs := s.workspaceChecks()
	if agentExists {
		cs = append(cs, reach(who, s.agentBin, "the agent binary")...)
		cs = append(cs, check{"-x", s.agentBin, fmt.Sprintf("%s cannot execute the agent binary %s", who, s.agentBin)})
		if isScript(s.agentBin) {
			cs = append(cs, check{"-r", s.agentBin, fmt.Sprintf("%s cannot read the agent script %s (an interpreter must read it)", who, s.agentBin)})
		}
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

// probeCommand runs argv as the session identity with an empty environment
// apart from a fixed PATH: the answer is the kernel's, not a guess from
// mode bits.
func probeCommand(ctx context.Context, cred *syscall.Credential, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	if cred != nil {
		c := *cred
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &c}
	}
	return cmd
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

// probe runs the checks as the session identity and then, with a workspace
// given, looks for an entry of it the session cannot read. err is a probe
// that could not run.
func probe(ctx context.Context, cred *syscall.Credential, cs []check, workspace string) (probeResult, error) {
	argv := []string{"/bin/sh", "-c", probeScript, "wfb-preflight", workspace}
	for _, c := range cs {
		argv = append(argv, c.op, c.path)
	}
	cmd := probeCommand(ctx, cred, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		i, perr := strconv.Atoi(strings.TrimSpace(stdout.String()))
		if perr != nil || i < 0 || i >= len(cs) {
			return probeResult{}, fmt.Errorf("preflight probe: unexpected answer %q", stdout.String())
		}
		return probeResult{failed: i, reason: cs[i].reason}, nil
	case stdout.Len() > 0:
		blocked := strings.TrimSuffix(stdout.String(), "\x00")
		who := "session uid " + credString(cred)
		return probeResult{failed: treeBlocked, reason: fmt.Sprintf("%s cannot read %s in the workspace %s; a review must be able to read what it reviews", who, blocked, workspace)}, nil
	case err != nil:
		return probeResult{}, fmt.Errorf("preflight probe as %s: %w (stderr: %s)", credString(cred), err, strings.TrimSpace(stderr.String()))
	}
	return probeResult{failed: -1}, nil
}

func credString(cred *syscall.Credential) string {
	if cred == nil {
		return strconv.Itoa(os.Geteuid())
	}
	return strconv.FormatUint(uint64(cred.Uid), 10)
}
