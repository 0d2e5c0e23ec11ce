package runner

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// Cell is one session to run in a sandbox of its own and record.
type Cell struct {
	SessionKey
	Workspace string
	// Sandbox is the backend: a concrete one (a sweep resolves auto once,
	// before any cell, see resolveSandbox), or sandbox.Auto for a session
	// run on its own.
	Sandbox string
	// Review makes this a review: the workspace is read-only to the session
	// (whatever WorkspaceWritable says), and the artifact is checked.
	Review bool
	// WorkspaceWritable lets the session edit the workspace
	// (sandbox.Options.WorkspaceWritable), and preflight proves it can. A
	// sweep sets it for every task that is not a review, on the cell's own
	// copy. It is not the default: a session run on its own (wfb session,
	// conformance) works in a directory that is not a copy made for it,
	// which the session uid may not be able to write, and asks for writes
	// only when it needs them.
	WorkspaceWritable   bool
	ArtifactDir         string // empty: inside the sandbox's private root
	BaseURL, APIKey     string
	RequirePIDNamespace bool
	ExtraEnv            map[string]string
	// AgentStaged says AgentBin is already a copy the session uid can
	// execute and cannot replace (a sweep stages the stand-in once per run):
	// the sandbox need not copy it again for this cell.
	AgentStaged bool
	// Verify, when set, runs after a session that ended ok, once the
	// agent's processes are gone and before the row is written, so the
	// agent can never see it. It gets the workspace the agent worked in.
	// A non-empty failure marks the row verify-failed with that detail; an
	// error marks it infra-error. cred is the identity the agent ran as
	// (nil: wfb's own), taken from the session uid pool while the sandbox
	// still holds it, so verify can work with the files the agent made.
	Verify func(ctx context.Context, workspace string, cred *syscall.Credential) (failure string, err error)
	// Meter, when set, meters the session (see SessionSpec.Meter).
	Meter Meter
	// RequireWitness refuses usage the meter did not witness (see
	// SessionSpec.RequireWitness).
	RequireWitness bool
}

// RunCell prepares the cell's sandbox, runs its session and writes its row.
// A review's workspace is read-only to the session; a cell with
// WorkspaceWritable may edit its own; preflight proves whichever was
// promised. A sandbox refusal is a row too (sandbox-refused: nothing ran,
// the reason is named). The error is non-nil only when no row could be
// written.
func RunCell(ctx context.Context, rec Recorder, c Cell) (store.Result, error) {
	sb, err := sandbox.Prepare(ctx, sandbox.Options{
		Workspace: c.Workspace, WorkspaceWritable: c.WorkspaceWritable && !c.Review, Backend: c.Sandbox, AgentBin: c.AgentBin,
		ArtifactDir: c.ArtifactDir, RequirePIDNamespace: c.RequirePIDNamespace, ProbeAtLaunch: true,
		StageAgent: c.Agent == bench.AgentStandIn && !c.AgentStaged,
		ShmMax:     c.Limits.orDefault().Memory,
		Programs:   kitSandboxPrograms(c.Kit),
	})
	var refused *sandbox.RefusedError
	switch {
	case err != nil && ctx.Err() != nil:
		// Ctrl-C during preflight: the probes died of it, not of a fault.
		return record(ctx, rec, c.row(wfb.KindCancelled, "cancelled before the agent started"))
	case errors.As(err, &refused):
		return record(ctx, rec, c.row(wfb.KindSandboxRefused, refused.Reason))
	case err != nil:
		return record(ctx, rec, c.row(wfb.KindInfraError, "prepare the sandbox: "+err.Error()))
	}
	defer sb.Close()

	env := AgentEnv(sb.Home(), sb.TmpDir(), c.BaseURL, c.APIKey)
	for k, v := range c.ExtraEnv {
		env[k] = v
	}
	for k, v := range kitEnv(c.Kit) {
		env[k] = v
	}
	if sc, ok := rec.(secretScrubber); ok {
		sc.ScrubSecrets(append(secretValues(env), kitSecrets(c.Kit)...)...)
	}
	spec := SessionSpec{SessionKey: c.SessionKey, Workdir: sb.Workspace(), Sandbox: sb, Env: env, Meter: c.Meter, RequireWitness: c.RequireWitness}
	if book, ok := rec.(VersionBook); ok {
		spec.Versions = book
	}
	spec.AgentBin = sb.AgentBin()
	if c.Review {
		artifact, err := sandbox.PrepareReviewWorkspace(sb, review.ReviewOutput)
		if err != nil {
			return record(ctx, rec, c.row(wfb.KindInfraError, "prepare the artifact path: "+err.Error()))
		}
		spec.Review = &ReviewSpec{ArtifactPath: artifact}
	}
	// A workspace the session may not edit is read-only on every backend:
	// kernel backends bind it so; host-unsafe clears its write bits for the
	// session.
	spec.Boundary = !sb.WorkspaceWritable() && sb.Backend() == sandbox.HostUnsafe
	row := runSession(ctx, spec)
	if c.Verify != nil && row.OK {
		failure, err := c.Verify(ctx, sb.Workspace(), sb.Credential())
		switch {
		case err != nil && ctx.Err() != nil:
			row.AddFailure(wfb.KindCancelled, "cancelled while verifying")
		case err != nil:
			row.AddFailure(wfb.KindInfraError, "run the verify command: "+err.Error())
		case failure != "":
			row.AddFailure(wfb.KindVerifyFailed, failure)
		}
	}
	bringBack(&row, sb)
	// The row as recorded (redacted, scrubbed) is the one the caller prints.
	row, err = record(ctx, rec, row)
	if err != nil {
		return row, fmt.Errorf("record attempt %s: %w", row.AttemptID, err)
	}
	return row, nil
}

// bringBack puts what the session made where the caller asked for it, when
// a root wfb had to give the session a place of its own (see
// sandbox.Sandbox.ApplyEdits and DeliverArtifacts): the edits of a copy of
// the workspace applied to the original, the artifacts copied out of the
// private root. A failure is the row's too.
func bringBack(row *store.Result, sb *sandbox.Sandbox) {
	if err := sb.ApplyEdits(); err != nil {
		row.AddFailure(wfb.KindInfraError, err.Error())
	}
	if err := sb.DeliverArtifacts(); err != nil {
		row.AddFailure(wfb.KindInfraError, "copy the artifacts out to "+sb.DeliverTo()+": "+err.Error())
	}
}

// row is the row of a cell that never started.
func (c Cell) row(kind, detail string) store.Result {
	backend := c.Sandbox
	if backend == sandbox.Auto {
		// The column names a backend, never "auto": auto that no backend
		// accepted records the first it tried, the strongest (the detail
		// gives every backend's reason). A sweep never gets here with
		// auto: it resolves it before any cell.
		backend = sandbox.Strength[0]
	}
	row := c.newRow(backend)
	row.ErrorKind, row.ErrorDetail = kind, detail
	return row
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
