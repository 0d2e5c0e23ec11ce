package runner

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// nextAttempt numbers the cell's next attempt one past the highest so far,
// not by counting them: a file with a gap in a cell's attempts then gets a
// new number rather than one the unique (cell, attempt) index refuses.
func (c *cellState) nextAttempt() int {
	n := 0
	for _, a := range c.attempts {
		n = max(n, a.Attempt)
	}
	return n + 1
}

// cellFor builds the runner's Cell for the next attempt of c.
func (s *Sweep) cellFor(c *cellState, dir string) Cell {
	t, a := c.task, c.arm
	ag := s.agents[a.ID]
	cell := Cell{
		SessionKey: SessionKey{
			RunID: s.run.ID, Task: t.ID, Arm: a.ID, Rep: c.Rep, Attempt: c.nextAttempt(),
			Agent: a.Agent, AgentBin: ag.bin, AgentArgs: ag.args, AgentVersion: ag.version,
			Model: a.Model, Prompt: a.PromptPrefix + t.Prompt + a.PromptSuffix, Timeout: s.bench.TimeoutFor(t),
			ExtraArgs: a.Flags, MaxTurns: a.MaxTurns, AllowedTools: a.AllowedTools,
			Limits: s.limits(), Kit: s.kits[a.ID],
		},
		AgentStaged: ag.staged,
		Sandbox:     s.backend, Review: t.Review, WorkspaceWritable: !t.Review,
		RequirePIDNamespace: s.bench.RequirePIDNamespace,
		ExtraEnv:            map[string]string{},
		Meter:               s.meter,
		RequireWitness:      s.opts.RequireWitness || s.bench.RequireWitness || a.RequireWitness,
	}
	if n := len(c.attempts); n > 0 {
		cell.RetryOf = c.attempts[n-1].AttemptID
	}
	if dir != "" {
		cell.Workspace = filepath.Join(dir, "workspace")
		cell.ArtifactDir = filepath.Join(dir, "artifacts")
	}
	for k, v := range s.envs[a.ID] {
		cell.ExtraEnv[k] = v
	}
	for k, v := range s.opts.AgentEnv {
		cell.ExtraEnv[k] = v
	}
	return cell
}

// attempt makes one attempt of a cell in a fresh copy of its workspace and
// returns its row. The error is non-nil only when the row could not be
// written.
func (s *Sweep) attempt(ctx context.Context, c *cellState) (store.Result, error) {
	dir, err := os.MkdirTemp(s.tmp, "cell-")
	if err != nil {
		return s.recordFailure(ctx, c, wfb.KindInfraError, "create the cell directory: "+err.Error())
	}
	defer removeAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return s.recordFailure(ctx, c, wfb.KindInfraError, "create the cell directory: "+err.Error())
	}
	cell := s.cellFor(c, dir)
	gitEnv, f := s.prepareCopy(ctx, c.task, &cell)
	if f == nil {
		s.addVerify(c.task, &cell, gitEnv)
		f = s.connect(c, &cell)
	}
	if f != nil {
		return s.recordFailure(ctx, c, f.kind, f.detail)
	}
	rec := Recorder(s.opts.DB)
	if c.task.Review {
		rec = &reviewRecorder{db: s.opts.DB, artifact: filepath.Join(cell.ArtifactDir, review.ReviewOutput), task: c.task}
	}
	return RunCell(ctx, rec, cell)
}

// prepareCopy copies the task's pristine tree into the cell's workspace,
// runs the task's setup in it, and shares it with the session's identity.
// It returns the environment git needs to work in a copy wfb owns for the
// session uid (nil when it needs none), which the cell's agent gets too.
func (s *Sweep) prepareCopy(ctx context.Context, t bench.Task, cell *Cell) (map[string]string, *stepFailure) {
	if err := sandbox.CopyTree(s.trees[t.ID].dir, cell.Workspace); err != nil {
		return nil, stepFailed(wfb.KindInfraError, "copy the workspace: %s", err)
	}
	if err := PlaceInWorkspace(cell.Kit, cell.Workspace); err != nil {
		return nil, stepFailed(wfb.KindInfraError, "the arm's files: %s", err)
	}
	if t.Setup != "" {
		// The tree is still the task's own, so setup may run as wfb.
		res, err := runCommand(ctx, t.Setup, cell.Workspace, s.bench.TimeoutFor(t), nil, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, stepFailed(wfb.KindCancelled, "cancelled during setup")
		case err != nil:
			return nil, stepFailed(wfb.KindInfraError, "run setup: %s", err)
		case res.ExitCode != 0 || res.TimedOut:
			return nil, stepFailed(wfb.KindInfraError, "%s", describeCommand(res, "setup", t.Setup, s.bench.TimeoutFor(t)))
		}
	}
	if err := sandbox.ShareWithSession(cell.Workspace, s.cred, !t.Review); err != nil {
		return nil, stepFailed(wfb.KindInfraError, "share the workspace with the session's group: %s", err)
	}
	if t.Workspace.Git == "" || s.cred == nil {
		return nil, nil
	}
	// The agent and verify run as the session uid in a root-owned clone.
	real, err := filepath.EvalSymlinks(cell.Workspace)
	if err != nil {
		return nil, stepFailed(wfb.KindInfraError, "resolve the workspace: %s", err)
	}
	gitEnv := gitSafeDirectory(real)
	for k, v := range gitEnv {
		cell.ExtraEnv[k] = v
	}
	return gitEnv, nil
}

// addVerify gives the cell the task's verify command, if it has one.
func (s *Sweep) addVerify(t bench.Task, cell *Cell, gitEnv map[string]string) {
	if t.Verify == "" {
		return
	}
	timeout := s.bench.TimeoutFor(t)
	// After the agent, the tree holds what the agent wrote: a test suite
	// it edited must not run with more rights than the agent had, so
	// verify runs as the session's identity: the very uid the agent had.
	cell.Verify = func(ctx context.Context, ws string, cred *syscall.Credential) (string, error) {
		res, err := runCommand(ctx, t.Verify, ws, timeout, cred, gitEnv)
		if err != nil {
			return "", err
		}
		if res.ExitCode != 0 || res.TimedOut {
			return describeCommand(res, "verify", t.Verify, timeout), nil
		}
		return "", nil
	}
}

// connect points the cell at its provider: the cell's own mock provider,
// started at its first attempt and kept for its retries, or the real one
// with its key.
func (s *Sweep) connect(c *cellState, cell *Cell) *stepFailure {
	p := s.bench.ProviderFor(c.task, c.arm)
	if !p.IsMock() {
		cell.BaseURL, cell.APIKey = p.BaseURL, s.keys[p.APIKeyEnv]
		return nil
	}
	if c.mockStop == nil {
		url, stop, err := s.opts.StartMock(p.Mock)
		if err != nil {
			return stepFailed(wfb.KindInfraError, "start the mock provider: %s", err)
		}
		c.mockURL, c.mockStop = url, stop
	}
	cell.BaseURL, cell.APIKey = c.mockURL, "offline"
	return nil
}

// recordFailure writes the row of an attempt that failed before its
// session could start.
func (s *Sweep) recordFailure(ctx context.Context, c *cellState, kind, detail string) (store.Result, error) {
	row := s.cellFor(c, "").row(kind, detail)
	return record(ctx, s.opts.DB, row)
}

// reviewRecorder writes a review attempt's row, its artifact (when the
// session wrote one, whatever the row's outcome, so it can be re-examined
// and re-scored) and, when the artifact was accepted and the task has
// ground truth, its score: one transaction, so a crash never leaves a
// scored attempt without its row or the reverse.
type reviewRecorder struct {
	db       *store.DB
	artifact string
	task     bench.Task
}

func (r *reviewRecorder) InsertResult(ctx context.Context, row *store.Result) error {
	// Read within bounds: the agent controls what is at the path (a
	// symlink to /dev/zero, a FIFO, gigabytes).
	captured, readErr := review.Capture(r.artifact)
	return r.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := r.db.InsertResultTx(ctx, tx, row); err != nil {
			return err
		}
		if readErr != nil {
			return nil // never written, or no regular file: the row says so
		}
		if err := r.db.InsertArtifactHeadTx(ctx, tx, store.Artifact{AttemptID: row.AttemptID, Name: review.ReviewOutput,
			Content: captured.Head, SHA256: captured.SHA256, Bytes: captured.Size}); err != nil {
			return err
		}
		if row.FindingsCount == nil || (len(r.task.Labels) == 0 && r.task.Verdict == "") {
			return nil // not accepted, or nothing to score against
		}
		rv, err := review.ParseReviewBytes(r.artifact, captured.Head)
		if err != nil {
			return nil // the row already says artifact-invalid
		}
		sc := storedScore(row.AttemptID, rv, r.task.Labels, r.task.Verdict)
		return r.db.InsertScoreTx(ctx, tx, &sc)
	})
}

// limits are every session's resource limits: the flags', else the
// bench's, else the defaults.
func (s *Sweep) limits() Limits {
	l := Limits{Pids: s.bench.PidsMax, Memory: int64(s.bench.MemoryMaxMiB) << 20, Requests: s.bench.MaxRequests}
	if s.opts.Limits.Pids > 0 {
		l.Pids = s.opts.Limits.Pids
	}
	if s.opts.Limits.Memory > 0 {
		l.Memory = s.opts.Limits.Memory
	}
	if s.opts.Limits.Requests > 0 {
		l.Requests = s.opts.Limits.Requests
	}
	return l.orDefault()
}

// ScrubSecrets passes the agent's secrets to the results file's handle,
// which scrubs them from the row, the artifact and the score alike.
func (r *reviewRecorder) ScrubSecrets(values ...string) { r.db.ScrubSecrets(values...) }

func (r *reviewRecorder) AgentVersion(ctx context.Context, b store.AgentBinary) (string, bool, error) {
	return r.db.AgentVersion(ctx, b)
}

func (r *reviewRecorder) RememberAgentVersion(ctx context.Context, b store.AgentBinary, version string) error {
	return r.db.RememberAgentVersion(ctx, b, version)
}

var (
	_ Recorder       = (*reviewRecorder)(nil)
	_ secretScrubber = (*reviewRecorder)(nil)
	_ VersionBook    = (*reviewRecorder)(nil)
	_ secretScrubber = (*store.DB)(nil)
)
