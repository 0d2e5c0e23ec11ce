// Package runner runs agent sessions and sweeps and records each outcome as a
// row of the results store.
//
// A session is one agent CLI process: the runner builds its command from
// the agent's adapter (package agent), takes the command prefix and
// credentials from the sandbox, gives it an environment built from
// scratch, runs it in its own process group with a timeout, has the
// adapter parse what it printed strictly, and writes a row whatever
// happened — success, failure or refusal — with what was measured, what
// was not (NULL) and why.
//
// The agents themselves (command lines, private configuration, strict
// parsing, prices) are package agent; the bench file (its types, strict
// parse, plan and shards) is runner/bench; the review artifact is
// runner/review; process supervision (a process group, a cgroup when wfb
// has one, limits, SIGTERM then SIGKILL, no descendant left behind) is
// runner/proc. Here:
//
//   - session.go: a SessionSpec (its SessionKey shared with Cell) run to a
//     row: the sandbox's launch, the workspace boundary, the strict reading
//     of the process and, for a review, of its artifact.
//   - agents.go: what a session's adapter is given (agentSession), and the
//     CLI's version probe run as a process of the session; kit.go places
//     an arm's files and skills, tooluse.go holds a session to the tools
//     its arm expects it to use.
//   - limits.go: a session's Limits — proc's, and its requests' cap.
//   - cell.go: a Cell run in a sandbox of its own (RunCell); runsession.go:
//     one cell in a run of its own (RunSession, `wfb session`).
//   - sweep.go, sweep_new.go, sweep_backend.go, sweep_attempt.go: a bench
//     run (NewSweep, Sweep.Run) — the checks before anything is recorded,
//     the sandbox backend resolved once, workers, retries, the outage
//     breaker, resume; sweep_budget.go: the run's cost budget (a budget
//     of its own: its cap, the run's cost so far, when it was reached);
//     workspace.go makes each cell's private copy and runs a task's setup
//     and verify. A sweep holds its run in the results
//     file (store.DB.HoldRun) from before its first row to its end, so two
//     processes never record one run.
//   - rescore.go and score.go: scoring review artifacts into the scores
//     table, as a cell ends and again later (Rescore, `wfb rescore`).
//   - meter.go: the Meter the runner talks to the metering proxy through
//     (cmd/wfb passes runner/meterstore's), and the Wire it gives back;
//     metering.go and wirecost.go: what a metered session's row makes of
//     the wire — its requests, the cross-check of the agent's usage, the
//     wire's cost and its check against the agent's.
//   - transcript.go: the agent's whole output, kept redacted;
//     progress.go: the progress line; leftovers.go: the scratch
//     directories a killed wfb left, reaped by the next.
package runner
