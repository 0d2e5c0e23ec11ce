package wfb

import "slices"

// Error kinds: the one documented vocabulary of why an attempt is not ok.
const (
	KindSessionError      = "session-error"
	KindProviderError     = "provider-error"
	KindTimeout           = "timeout"
	KindCancelled         = "cancelled"
	KindSpawnFailure      = "spawn-failure"
	KindSandboxRefused    = "sandbox-refused"
	KindWorkspaceModified = "workspace-modified"
	KindArtifactMissing   = "artifact-missing"
	KindArtifactInvalid   = "artifact-invalid"
	KindVerifyFailed      = "verify-failed"
	KindOracleFailed      = "oracle-failed"
	KindInfraError        = "infra-error"
	// KindRunaway: the attempt sent its provider more requests than its
	// cap (max_requests) and wfb stopped it — a workflow that ran away, a
	// failure of the workflow.
	KindRunaway = "runaway"
	// KindWorkflowNotUsed: the session ended ok but never called what its
	// arm's expect_tools name (an MCP server's tool, a skill) — it did not
	// measure the workflow the arm stands for. A failure of the workflow:
	// never scored as its success, never left out of its rate.
	KindWorkflowNotUsed = "workflow-not-used"
)

// ErrorKinds lists every error kind, in documentation order.
var ErrorKinds = []string{
	KindSessionError, KindProviderError, KindTimeout, KindCancelled,
	KindSpawnFailure, KindSandboxRefused, KindWorkspaceModified,
	KindArtifactMissing, KindArtifactInvalid, KindVerifyFailed,
	KindOracleFailed, KindInfraError, KindRunaway, KindWorkflowNotUsed,
}

// Error kinds split in two classes, and the split is the difference between
// the strict and the clean pass rate:
//
//   - An error says the workflow was never fairly measured: the harness, the
//     sandbox, the provider or the user got in the way (infra-error,
//     sandbox-refused, spawn-failure, cancelled, provider-error,
//     oracle-failed). A cell whose final attempt ended so is errored: left
//     out of the clean rate's denominator, never out of the strict rate's.
//   - A failure says the workflow ran and did badly (session-error, timeout,
//     workspace-modified, artifact-missing, artifact-invalid,
//     verify-failed, runaway, workflow-not-used). It counts against the
//     workflow in both rates.
//
// A kind outside the documented vocabulary counts as a failure: when wfb
// does not know what happened it does not excuse the cell.
var erroredKinds = []string{
	KindInfraError, KindSandboxRefused, KindSpawnFailure,
	KindCancelled, KindProviderError, KindOracleFailed,
}

// IsErrored reports whether kind is an error (the workflow was never fairly
// measured) rather than a failure of the workflow. See erroredKinds.
func IsErrored(kind string) bool { return slices.Contains(erroredKinds, kind) }

// ErroredKinds lists the error kinds that make a cell errored, in
// documentation order.
func ErroredKinds() []string { return slices.Clone(erroredKinds) }

// KindOrder is the position of kind in the documented vocabulary; a kind
// wfb does not know comes after every known one.
func KindOrder(kind string) int {
	if i := slices.Index(ErrorKinds, kind); i >= 0 {
		return i
	}
	return len(ErrorKinds)
}

// Process states recorded in results.process_state.
const (
	StateExited       = "exited"
	StateTimeout      = "timeout"
	StateForcedKill   = "forced-kill"
	StateSpawnFailure = "spawn-failure"
	StateCancelled    = "cancelled"
	StateNotStarted   = "not-started"
)

// Run statuses recorded in runs.status.
const (
	RunRunning     = "running"
	RunComplete    = "complete"
	RunAborted     = "aborted"
	RunInterrupted = "interrupted"
)
