package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// Cell is one session to run in a sandbox of its own and record.
type Cell struct {
	RunID, Task, Arm    string
	Rep, Attempt        int
	RetryOf             string
	Agent, AgentBin     string
	AgentArgs           []string
	AgentVersion        string
	Model, Prompt       string
	Workspace, Sandbox  string
	Review              bool
	ArtifactDir         string // empty: inside the sandbox's private root
	Timeout             time.Duration
	BaseURL, APIKey     string
	RequirePIDNamespace bool
	ExtraEnv            map[string]string
	ExtraArgs           []string
	MaxTurns            int
	AllowedTools        []string
	// AgentStaged says AgentBin is already a copy the session uid can
	// execute and cannot replace (a sweep stages the stand-in once per run):
	// the sandbox need not copy it again for this cell.
	AgentStaged bool
	// Verify, when set, runs after a session that ended ok, once the
	// agent's processes are gone and before the row is written, so the
	// agent can never see it. It gets the workspace the agent worked in.
	// A non-empty failure marks the row verify-failed with that detail; an
	// error marks it infra-error.
	Verify func(ctx context.Context, workspace string) (failure string, err error)
}

// RunCell prepares the cell's sandbox, runs its session and writes its row.
// A sandbox refusal is a row too (sandbox-refused: nothing ran, the reason
// is named). The error is non-nil only when no row could be written.
func RunCell(ctx context.Context, rec Recorder, c Cell) (store.Result, error) {
	sb, err := sandbox.Prepare(ctx, sandbox.Options{
		Workspace: c.Workspace, Backend: c.Sandbox, AgentBin: c.AgentBin,
		ArtifactDir: c.ArtifactDir, RequirePIDNamespace: c.RequirePIDNamespace,
		StageAgent: c.Agent == AgentStandIn && !c.AgentStaged,
	})
	var refused *sandbox.RefusedError
	switch {
	case err != nil && ctx.Err() != nil:
		// Ctrl-C during preflight: the probes died of it, not of a fault.
		return record(ctx, rec, c.row(store.KindCancelled, "cancelled before the agent started"))
	case errors.As(err, &refused):
		return record(ctx, rec, c.row(store.KindSandboxRefused, refused.Reason))
	case err != nil:
		return record(ctx, rec, c.row(store.KindInfraError, "prepare the sandbox: "+err.Error()))
	}
	defer sb.Close()

	env := AgentEnv(sb.Home(), sb.TmpDir(), c.BaseURL, c.APIKey)
	for k, v := range c.ExtraEnv {
		env[k] = v
	}
	spec := SessionSpec{
		RunID: c.RunID, Task: c.Task, Arm: c.Arm, Rep: c.Rep, Attempt: c.Attempt, RetryOf: c.RetryOf,
		Agent: c.Agent, AgentBin: sb.AgentBin(), AgentArgs: c.AgentArgs, AgentVersion: c.AgentVersion,
		Model: c.Model, Prompt: c.Prompt, Workdir: sb.Workspace(), Timeout: c.Timeout,
		Sandbox: sb, Env: env, ExtraArgs: c.ExtraArgs, MaxTurns: c.MaxTurns,
		AllowedTools: c.AllowedTools,
	}
	if c.Review {
		artifact, err := sandbox.PrepareReviewWorkspace(sb, review.ReviewOutput)
		if err != nil {
			return record(ctx, rec, c.row(store.KindInfraError, "prepare the artifact path: "+err.Error()))
		}
		// Kernel backends bind the workspace read-only; host-unsafe clears
		// its write bits for the session.
		spec.Review = &ReviewSpec{ArtifactPath: artifact, Boundary: sb.Backend() == sandbox.HostUnsafe}
	}
	row := runSession(ctx, spec)
	if c.Verify != nil && row.OK {
		failure, err := c.Verify(ctx, sb.Workspace())
		switch {
		case err != nil && ctx.Err() != nil:
			addFailure(&row, store.KindCancelled, "cancelled while verifying")
		case err != nil:
			addFailure(&row, store.KindInfraError, "run the verify command: "+err.Error())
		case failure != "":
			addFailure(&row, store.KindVerifyFailed, failure)
		}
	}
	if _, err := record(ctx, rec, row); err != nil {
		return row, fmt.Errorf("record attempt %s: %w", row.AttemptID, err)
	}
	return row, nil
}

// row is the row of a cell that never started.
func (c Cell) row(kind, detail string) store.Result {
	return store.Result{
		RunID: c.RunID, AttemptID: store.NewID("att"), Task: c.Task, Arm: c.Arm,
		Rep: c.Rep, Attempt: max(c.Attempt, 1), RetryOf: c.RetryOf,
		Agent: c.Agent, AgentVersion: c.AgentVersion, Model: c.Model, Sandbox: c.Sandbox,
		StartedAt: time.Now().UTC(), ErrorKind: kind, ErrorDetail: detail,
		ProcessState: store.StateNotStarted,
	}
}

// record writes a row. The write outlives a cancelled ctx: a Ctrl-C must
// leave the cancelled attempt recorded, not lost.
func record(ctx context.Context, rec Recorder, row store.Result) (store.Result, error) {
	if err := rec.InsertResult(context.WithoutCancel(ctx), &row); err != nil {
		return row, err
	}
	return row, nil
}

// AgentEnv is the environment an agent gets, built from scratch: a fixed
// PATH, the sandbox's private HOME and TMPDIR, the provider's base URL and
// key, and the switches that keep Claude Code headless, quiet and bounded.
func AgentEnv(home, tmp, baseURL, apiKey string) map[string]string {
	return map[string]string{
		"PATH":               DefaultPath,
		"HOME":               home,
		"TMPDIR":             tmp,
		"LANG":               "C.UTF-8",
		"ANTHROPIC_BASE_URL": baseURL,
		"ANTHROPIC_API_KEY":  apiKey,
		// No side traffic to the vendor's hosts, no title-generation calls.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		// A failing provider costs a few retries, not ten minutes of them.
		"CLAUDE_CODE_MAX_RETRIES": "2",
		// A hung provider cannot hold one request for five minutes.
		"API_TIMEOUT_MS": "120000",
	}
}
