// Package runner runs agent sessions and sweeps and records each outcome as a
// row of the results store.
//
// A session is one agent CLI process: the runner builds its command from an
// adapter, takes the command prefix and credentials from the sandbox, gives
// it an environment built from scratch, runs it in its own process group with
// a timeout, parses what it printed strictly, and writes a row whatever
// happened — success, failure or refusal — with what was measured, what was
// not (NULL) and why.
//
// The bench file itself (its types, strict parse, plan and shards) is
// runner/bench; the review artifact is runner/review; process supervision
// (a process group, a cgroup when wfb has one, limits, SIGTERM then
// SIGKILL, no descendant left behind) is runner/proc. Here:
//
//   - session.go: a SessionSpec (its SessionKey shared with Cell) run to a
//     row: the sandbox's launch, the workspace boundary, the strict reading
//     of the process and, for a review, of its artifact.
//   - adapter.go: what an agent adapter is and which one an agent gets, one
//     file per adapter: claude.go (Claude Code and the stand-in, which
//     shares its interface) and codex.go; agentoutput.go holds what they
//     share in reading JSON Lines and usage counts.
//   - limits.go: a session's Limits — proc's, and its requests' cap.
//   - cell.go: a Cell run in a sandbox of its own (RunCell); runsession.go:
//     one cell in a run of its own (RunSession, `wfb session`).
//   - sweep.go, sweep_new.go, sweep_backend.go, sweep_attempt.go: a bench
//     run (NewSweep, Sweep.Run) — the checks before anything is recorded,
//     the sandbox backend resolved once, workers, retries, the outage
//     breaker, resume; workspace.go makes each cell's private copy and runs
//     a task's setup and verify. A sweep holds its run in the results
//     file (store.DB.HoldRun) from before its first row to its end, so two
//     processes never record one run.
//   - rescore.go and score.go: scoring review artifacts into the scores
//     table, as a cell ends and again later (Rescore, `wfb rescore`).
//   - prices.go, progress.go: the price table for derived cost, the
//     progress line; leftovers.go: the scratch directories a killed wfb
//     left, reaped by the next.
package runner
