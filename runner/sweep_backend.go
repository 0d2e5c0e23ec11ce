package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/sandbox"
)

// resolveSandbox turns the backend a sweep asked for into the one every cell
// will use, once, before any cell starts: sandbox.Resolve with one
// configuration per kind of task the sweep runs (a review's read-only
// workspace, an editing task's writable one), each on a scratch tree under
// dir laid out and shared exactly like a cell's copy. So auto picks a
// backend that keeps every promise it is used for, and a named backend that
// cannot keep one is refused before anything runs. A task's own problems
// (files the session cannot read, an agent it cannot execute) are still
// each cell's preflight, recorded as sandbox-refused rows.
func resolveSandbox(ctx context.Context, dir, backend string, reviews []bool, requirePID bool, cred *syscall.Credential) (string, []sandbox.Status, error) {
	var configs []sandbox.Options
	for _, review := range reviews {
		kind := "edit"
		if review {
			kind = "review"
		}
		cdir := filepath.Join(dir, "preflight-"+kind)
		ws := filepath.Join(cdir, "workspace")
		for _, d := range []string{cdir, ws} {
			if err := os.Mkdir(d, 0o755); err != nil {
				return "", nil, fmt.Errorf("sandbox preflight: %w", err)
			}
			// Explicit: the umask must not take the session's way in.
			if err := os.Chmod(d, 0o755); err != nil {
				return "", nil, fmt.Errorf("sandbox preflight: %w", err)
			}
		}
		defer removeAll(cdir)
		f := filepath.Join(ws, "README")
		if err := os.WriteFile(f, []byte("wfb sandbox preflight scratch workspace\n"), 0o644); err != nil {
			return "", nil, fmt.Errorf("sandbox preflight: %w", err)
		}
		if err := os.Chmod(f, 0o644); err != nil {
			return "", nil, fmt.Errorf("sandbox preflight: %w", err)
		}
		if err := sandbox.ShareWithSession(ws, cred, !review); err != nil {
			return "", nil, fmt.Errorf("sandbox preflight: %w", err)
		}
		configs = append(configs, sandbox.Options{
			Workspace: ws, WorkspaceWritable: !review, ArtifactDir: filepath.Join(cdir, "artifacts"),
			AgentBin: "/bin/sh", RequirePIDNamespace: requirePID,
		})
	}
	return sandbox.Resolve(ctx, backend, configs...)
}

// resolveBackend resolves the sweep's sandbox (the bench's, or --sandbox)
// once, before any cell starts, for the kinds of task the sweep runs (see
// resolveSandbox). A refusal is an *InputError: no session started and
// nothing was recorded, so a resume or a rerun on a machine that can keep
// the promise loses nothing. A resumed run under auto keeps the backend its
// earlier sessions ran in: one run, one backend, and never a silently
// weaker one.
func (s *Sweep) resolveBackend(ctx context.Context) error {
	asked := s.bench.Sandbox
	if s.opts.Selection.Sandbox != "" {
		asked = s.opts.Selection.Sandbox
	}
	var reviews []bool
	for _, review := range []bool{true, false} {
		if slices.ContainsFunc(s.cells, func(c *cellState) bool { return c.task.Review == review }) {
			reviews = append(reviews, review)
		}
	}
	if len(reviews) == 0 {
		s.backend = asked // no cell: nothing will run under it
		return nil
	}
	prior := ""
	if asked == sandbox.Auto {
		if prior = s.priorBackend(); prior != "" {
			asked = prior
		}
	}
	chosen, passed, err := resolveSandbox(ctx, s.tmp, asked, reviews, s.bench.RequirePIDNamespace, s.cred)
	var refused *sandbox.RefusedError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &refused):
		msg := fmt.Sprintf("sandbox %s refused before any session started: %s", refused.Backend, refused.Reason)
		if prior != "" {
			msg += fmt.Sprintf(" (the run's earlier sessions ran under %s, and auto does not continue a run under another backend)", prior)
		}
		return &InputError{Problems: []string{msg + "; `wfb doctor` shows what this machine can run"}}
	case err != nil:
		return fmt.Errorf("sandbox preflight: %w", err)
	}
	s.backend, s.passed = chosen, passed
	return nil
}

// priorBackend is the one backend the sessions a resumed run already made
// ran in ("" when none ran, or they ran in several).
func (s *Sweep) priorBackend() string {
	seen := ""
	for _, c := range s.cells {
		for _, a := range c.attempts {
			if a.ProcessState == wfb.StateNotStarted || !slices.Contains(sandbox.Strength, a.Sandbox) {
				continue
			}
			if seen != "" && seen != a.Sandbox {
				return ""
			}
			seen = a.Sandbox
		}
	}
	return seen
}

// probeAgents asks the agent binary of each arm in used its version, in the
// backend the sweep's sessions run in and as their uid (see probeVersion):
// in a sandbox of its own, on a scratch workspace laid out like a cell's.
// A binary that cannot say is recorded as unknown; its cells then report
// what is wrong with it.
func (s *Sweep) probeAgents(ctx context.Context, used map[string]bool) {
	for id, ag := range s.agents {
		if !used["a/"+id] || !ag.probe {
			continue
		}
		ag.version = s.probeAgent(ctx, ag.bin)
		if ag.version == "" {
			ag.version = "unknown (" + ag.bin + " --version gave none)"
		}
		s.agents[id] = ag
	}
}

// probeAgent runs one version probe in a sandbox of the sweep's backend.
func (s *Sweep) probeAgent(ctx context.Context, bin string) string {
	dir, err := os.MkdirTemp(s.tmp, "probe-")
	if err != nil {
		return ""
	}
	defer removeAll(dir)
	ws := filepath.Join(dir, "workspace")
	if os.Chmod(dir, 0o755) != nil || os.Mkdir(ws, 0o755) != nil || os.Chmod(ws, 0o755) != nil ||
		sandbox.ShareWithSession(ws, s.cred, false) != nil {
		return ""
	}
	sb, err := sandbox.Prepare(ctx, sandbox.Options{
		Workspace: ws, Backend: s.backend, AgentBin: bin, RequirePIDNamespace: s.bench.RequirePIDNamespace,
	})
	if err != nil {
		return ""
	}
	defer sb.Close()
	return probeVersion(ctx, sb.AgentBin(), versionProbe{sandbox: sb, dir: sb.Workspace(), home: sb.Home(), tmp: sb.TmpDir(), book: s.opts.DB}, agent.VersionProbe)
}
