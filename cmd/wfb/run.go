package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/shellword"
	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// runOptions are the flags and argument of `wfb run`.
type runOptions struct {
	Bench            string
	DB               string
	Label            string
	Workers          int
	Tasks, Arms      []string
	Runs             int
	Resume           string
	IncludeExpensive bool
	Sandbox          string
	Shard            string
	RunID            string
	Format           string
	Meter            string
	RequireWitness   bool
	MaxCost          float64
	limits           limitFlags
}

// runLong is `wfb run --help`.
const runLong = `Run every cell of a bench file (task × arm × repetition) and record one row per
attempt in the results file, whatever happened, as each attempt ends: a crash,
even SIGKILL, loses at most the cells in flight.

A bad bench file is reported whole (every problem with file:line and field)
and nothing starts. Secrets come from the environment, never the file.

Retries (per error kind, with a run budget) are new attempt rows linked to the
one they retry. After the bench's breaker count of consecutive systemic
failures (provider-error, infra-error, spawn-failure, sandbox-refused) no cell
starts: the rest get a "not run" row each and the run is aborted. Ctrl-C kills
the sessions in flight, records them as cancelled and marks the run
interrupted.

--max-cost USD (or the bench's budget: field; the flag wins) caps the run's
cost: no new cell starts once the cost recorded in the run so far reaches it
(each row's metered cost where the proxy measured one, else its reported or
derived cost; a row with neither counts $0, and the end note says how many
had none). Cells in flight finish; each cell left gets a "not run" row
(cancelled, no usage), the run is aborted with the reason and exit 1, as
the breaker's. On --resume the budget covers the whole run, earlier
invocations included: raise it with --max-cost to continue.

The sandbox (the bench's, or --sandbox) is resolved once, before any session
starts: auto becomes the strongest backend that passes the preflight of every
kind of task in the run (a review's workspace read-only to its session, any
other task's cell copy writable), and every row names that backend. A backend
that fails preflight, named or auto with none passing, refuses the whole run
with the reason and exit 2: no session starts and nothing is recorded, so a
rerun or --resume on a machine that can keep the promise loses nothing. A
resumed run under auto keeps the backend its earlier sessions ran in.

--resume RUN continues a run with the same bench (same fingerprint: bench
file, mock scripts, workspaces, agent versions, wfb version; otherwise it is
refused and the differences named). Only cells without a completed attempt run:
one that is ok, or whose failure is final (not cancelled, not a "not run" row,
no retry owed). Earlier rows stay; new attempts are appended to the same run.
A run is held by the process recording it, from before its first row to
after its last: a --resume of a run still being recorded is refused (exit
2), naming that process. Two names of one results file (a hard link, a bind
mount of the file) are never written at once (see docs/results-file.md:
Who writes a results file).

--shard i/n (or JOB_COMPLETION_INDEX + WFB_SHARD_COUNT, or SLURM_ARRAY_TASK_ID)
runs a deterministic, disjoint slice of the cells. Every shard of one run
records into the same run id (--run-id or $WFB_RUN_ID, required with a shard),
each in its own results file; wfb merge combines the files into one run. A
sharded run is resumed shard by shard, each naming its shard again.

Every session is metered (--meter=off disables it): the agent reaches its
provider through a loopback proxy of this process, under a base URL of its
attempt's own, and the provider's usage on the wire is cross-checked against
what the agent reported (results.usage_check; the requests table keeps every
request and exchange). An attempt whose agent reported usage while no model
request reached the proxy is recorded with usage_verdict unwitnessed (the
agent bypassed its base URL, or invented the figures); --require-witness (or
the bench's require_witness, for the bench or an arm) refuses such an
attempt instead: ok=0, session-error. It cannot be combined with
--meter=off, where nothing could witness the usage.

Exit status: 0 when the run completed (failed cells are measurements: see
wfb report), 1 when it was aborted, 2 on bad input, 130 when interrupted.`

func newRunCmd(s *Streams) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run BENCH",
		Short: "Run a bench: every task × arm × repetition, one row per attempt",
		Long:  runLong,
		Example: `  wfb run bench.yaml
  wfb run bench.yaml --label nightly --workers 4 --arms baseline,candidate
  wfb run bench.yaml --resume run-20260101T000000Z-1a2b3c4d`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("wfb run takes one bench file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Bench = args[0]
			if err := checkCounts(cmd, opts); err != nil {
				return err
			}
			if err := opts.limits.check(cmd); err != nil {
				return err
			}
			return runRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	f.StringVar(&opts.Label, "label", "", "label for the run")
	f.IntVar(&opts.Workers, "workers", 0, "cells at once (default: the bench's workers, else 1)")
	f.StringSliceVar(&opts.Tasks, "tasks", nil, "only these tasks (comma-separated ids); named tasks run even if expensive")
	f.StringSliceVar(&opts.Arms, "arms", nil, "only these arms (comma-separated ids)")
	f.IntVar(&opts.Runs, "runs", 0, "repetitions of each task × arm (default: the bench's runs)")
	f.StringVar(&opts.Resume, "resume", "", "continue this run: its cells without a completed attempt")
	f.BoolVar(&opts.IncludeExpensive, "include-expensive", false, "also run tasks marked expensive")
	f.StringVar(&opts.Sandbox, "sandbox", "", "sandbox backend for every cell: bwrap, landlock, host-unsafe, or auto (default: the bench's; see wfb doctor)")
	f.StringVar(&opts.Shard, "shard", "", "run only shard i of n (i/n, from 0); default from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID")
	f.StringVar(&opts.RunID, "run-id", "", "id of the new run (default $WFB_RUN_ID, else a fresh one); the shards of one run must share it")
	f.StringVar(&opts.Format, "format", "auto", "summary format: auto, table, tsv, markdown, csv, json")
	f.Float64Var(&opts.MaxCost, "max-cost", 0, "stop starting cells once the run's recorded cost reaches this many US dollars (default: the bench's budget)")
	f.StringVar(&opts.Meter, "meter", "on", "meter every session's provider traffic (on) or not (off); recorded in the run's config")
	f.BoolVar(&opts.RequireWitness, "require-witness", false, "refuse (session-error) every attempt whose agent reported usage no request through the meter witnessed")
	opts.limits.add(cmd, "the bench's pids_max / memory_max_mib / max_requests")
	return cmd
}

// meterOff reads --meter: on (the default) or off. A witness required
// of an unmetered session is bad input: only the meter can witness usage.
func meterOff(v string, requireWitness bool) (bool, error) {
	switch v {
	case "on":
		return false, nil
	case "off":
		if requireWitness {
			return true, badInput("--require-witness needs the meter to witness each session's usage, and --meter=off runs them unmetered: drop one of them")
		}
		return true, nil
	}
	return false, badInput("--meter %q: want on or off", v)
}

// checkCounts refuses --runs and --workers outside the ranges a bench file
// accepts for runs and workers (runner's bench parser: 1 to 10000, 1 to
// 256), and a --max-cost that is not a positive number of dollars. Given
// as 0, each is refused rather than read as "the bench's", which is what
// leaving it out means.
func checkCounts(cmd *cobra.Command, o *runOptions) error {
	if cmd.Flags().Changed("max-cost") && !(o.MaxCost > 0 && o.MaxCost < math.Inf(1)) {
		return badInput("--max-cost %v: want a positive number of US dollars, such as 25 or 2.5 (leave it out for the bench's budget)", o.MaxCost)
	}
	for _, c := range []struct {
		flag     string
		val, max int
	}{{"runs", o.Runs, bench.MaxRuns}, {"workers", o.Workers, bench.MaxWorkers}} {
		if cmd.Flags().Changed(c.flag) && (c.val < 1 || c.val > c.max) {
			return badInput("--%s %d: want 1 to %d (leave it out for the bench's)", c.flag, c.val, c.max)
		}
	}
	return nil
}

// selection turns the flags into the run's selection and sets the run id
// (see bench.Request.Resolve: the resume, shard and run id rules).
func (o *runOptions) selection(s *Streams) (bench.Selection, error) {
	if o.Workers < 0 {
		return bench.Selection{}, badInput("--workers %d: must be at least 1", o.Workers)
	}
	if o.Runs < 0 {
		return bench.Selection{}, badInput("--runs %d: must be at least 1", o.Runs)
	}
	sel, id, err := bench.Request{Tasks: o.Tasks, Arms: o.Arms, Runs: o.Runs, IncludeExpensive: o.IncludeExpensive, Sandbox: o.Sandbox,
		Label: o.Label, RunID: o.RunID, Resume: o.Resume, Shard: o.Shard}.Resolve(s.Getenv)
	o.RunID = id
	return sel, err
}

// checkScript validates a mock script named by a bench.
func checkScript(path string, data []byte) error {
	_, err := provider.ParseScript(path, data)
	return err
}

// runawayRisks warns of the cells a real agent may never end: a mock
// script whose default reply calls a tool answers every turn with another
// tool call, and an arm without max_turns takes them all, until the
// session's request cap (or its timeout) stops it. The stand-in ends after
// one round of tools, so only the real CLIs are named.
func runawayRisks(b *bench.Bench, requests int) []string {
	if requests <= 0 {
		requests = b.MaxRequests
	}
	if requests <= 0 {
		requests = runner.DefaultRequestsMax
	}
	var out []string
	loops := map[string]bool{} // script path → its default reply calls a tool; each read once
	for _, a := range b.Arms {
		if a.Agent == bench.AgentStandIn || a.MaxTurns > 0 {
			continue
		}
		for _, t := range b.Tasks {
			p := b.ProviderFor(t, a)
			if !p.IsMock() {
				continue
			}
			loop, seen := loops[p.Mock]
			if !seen {
				sc, err := provider.LoadScript(p.Mock)
				loop = err == nil && sc.Default != nil && len(sc.Default.Tools) > 0
				loops[p.Mock] = loop
			}
			if !loop {
				continue
			}
			fix := "set max_turns on the arm, or end the script's default reply without tools"
			if a.Agent == bench.AgentCodex || a.Agent == bench.AgentOpencode {
				fix = a.Agent + " has no turn limit: end the script's default reply without tools"
			}
			out = append(out, fmt.Sprintf("arm %s (%s, no max_turns) on task %s: the mock script %s answers every turn past its replies with a tool call, so the agent may never end; each session is stopped as runaway after %d requests (max_requests) — %s",
				a.ID, a.Agent, t.ID, filepath.Base(p.Mock), requests, fix))
		}
	}
	return out
}

// startMock returns a StartMock that parses each script once and starts a
// fresh provider per cell.
func startMock() func(path string) (string, func(), error) {
	scripts := map[string]*provider.Script{}
	var mu sync.Mutex
	load := func(path string) (*provider.Script, error) {
		mu.Lock()
		defer mu.Unlock()
		if sc, ok := scripts[path]; ok {
			return sc, nil
		}
		sc, err := provider.LoadScript(path)
		if err == nil {
			scripts[path] = sc
		}
		return sc, err
	}
	return func(path string) (string, func(), error) {
		sc, err := load(path)
		if err != nil {
			return "", nil, err
		}
		return provider.Serving(sc)
	}
}

func runRun(ctx context.Context, s *Streams, opts *runOptions) error {
	// The report comes after the sweep: a bad --format must fail before it.
	if _, err := outputFormat(s, opts.Format); err != nil {
		return err
	}
	noMeter, err := meterOff(opts.Meter, opts.RequireWitness)
	if err != nil {
		return err
	}
	sel, err := opts.selection(s)
	if err != nil {
		return err
	}
	b, err := bench.Load(opts.Bench, checkScript)
	if err != nil {
		return err // a *bench.Error: exit 2 by exitRules
	}
	for _, w := range runawayRisks(b, opts.limits.limits().Requests) {
		fmt.Fprintln(s.ErrOut, "wfb run: warning: "+termtext.Show(w, ""))
	}
	_, _, err = sweepAndReport(ctx, s, opts.DB, opts.Format, "arm", "wfb run "+shellword.Quote(opts.Bench), runner.SweepOptions{
		Bench: b, Selection: sel, Label: opts.Label, Resume: opts.Resume, RunID: opts.RunID, Workers: opts.Workers,
		NoMeter: noMeter, RequireWitness: opts.RequireWitness, MaxCost: opts.MaxCost,
		Limits: opts.limits.limits(),
	})
	return err
}

// sweepAndReport runs a sweep into the results file named by dbFlag, with
// the stand-in agent and mock providers wfb serves itself, prints the run's
// report grouped by `by`, and says how the run ended (see sweepOutcome),
// resume being the command that continues it ("" when none can). It
// returns the run's summary and the file's path.
func sweepAndReport(ctx context.Context, s *Streams, dbFlag, format, by, resume string, o runner.SweepOptions) (runner.Summary, string, error) {
	sum, path, err := sweepServed(ctx, s, dbFlag, o)
	if err != nil {
		return runner.Summary{}, "", err
	}
	// The report and the summary are printed even after Ctrl-C: they say
	// what was recorded and how to resume.
	if err := reportRun(context.WithoutCancel(ctx), s, &reportOptions{DB: path, Format: format, By: by, Selections: []string{sum.RunID}}); err != nil {
		return runner.Summary{}, "", err
	}
	return sum, path, sweepOutcome(s, sum, path, resume)
}

// sweepServed runs a sweep into the results file named by dbFlag, with
// the stand-in agent and mock providers wfb serves itself, and returns the
// run's summary and the file's path.
func sweepServed(ctx context.Context, s *Streams, dbFlag string, o runner.SweepOptions) (runner.Summary, string, error) {
	bin, args, err := runner.StandInAgent()
	if err != nil {
		return runner.Summary{}, "", err
	}
	o.StandInBin, o.StandInArgs = bin, args
	o.StartMock, o.Getenv, o.Harness = startMock(), s.Getenv, version
	path := dbPath(dbFlag, s)
	db, err := store.Open(ctx, path)
	if err != nil {
		return runner.Summary{}, "", err
	}
	o.DB, o.StartMeter = db, startMeter
	sum, err := sweep(ctx, s, o)
	db.Close()
	if err != nil {
		return runner.Summary{}, "", err
	}
	return sum, path, nil
}

// startMeter starts the metering proxy of a run or a session recorded in
// db, as the runner's Meter.
func startMeter(db *store.DB) (runner.Meter, error) { return meterstore.Start(db) }

// sweep prepares and runs a sweep, showing progress on ErrOut.
func sweep(ctx context.Context, s *Streams, o runner.SweepOptions) (runner.Summary, error) {
	recoverLeftovers(s, o.TempDir)
	o.Progress = runner.NewProgressLine(s.ErrOut, s.ErrOutIsTerminal)
	sw, err := runner.NewSweep(ctx, o)
	if err != nil { // a *runner.InputError is exit 2 by exitRules
		return runner.Summary{}, err
	}
	defer sw.Close()
	if o.Resume != "" {
		fmt.Fprintf(s.ErrOut, "wfb run: resuming %s\n", sw.RunID())
	} else {
		fmt.Fprintf(s.ErrOut, "wfb run: %s\n", sw.RunID())
	}
	fmt.Fprintln(s.ErrOut, sandboxLine(sw.Sandbox()))
	return sw.Run(ctx)
}

// sandboxLine names the backend every cell of the run uses and, under
// auto, why each stronger one was passed over, so that a run's isolation
// is never a surprise found later in its rows.
func sandboxLine(backend string, passedOver []sandbox.Status) string {
	line := "sandbox: " + backend
	if len(passedOver) == 0 {
		return line
	}
	reasons := make([]string, len(passedOver))
	for i, p := range passedOver {
		reasons[i] = p.Backend + " — " + p.Reason
	}
	return line + " (passed over: " + strings.Join(reasons, "; ") + ")"
}

// sweepOutcome says how the run ended and maps it to the exit status. A
// stopped run's hint is the command that continues it, resume (wfb run
// with the bench file as the user named it) followed by --db and
// --resume; with resume "" (the demo, whose bench was a temporary copy)
// it says to start again.
func sweepOutcome(s *Streams, sum runner.Summary, path, resume string) error {
	if sum.Budget > 0 {
		fmt.Fprintf(s.ErrOut, "wfb run: the run's budget is $%s; its cost so far: %s\n", wfb.Dollars(sum.Budget), sum.Cost.Phrase())
	}
	cont := func(extra string) string {
		if resume == "" {
			return "wfb demo --db " + shellword.Quote(path) + " (a new run: the demo's bench was a temporary copy)"
		}
		return resume + " --db " + shellword.Quote(path) + " --resume " + sum.RunID + extra
	}
	switch sum.Status {
	case wfb.RunInterrupted:
		fmt.Fprintf(s.ErrOut, "wfb run: interrupted; the cells in flight are recorded as cancelled. Continue with: %s\n", cont(""))
		return errInterrupted
	case wfb.RunAborted:
		if sum.BudgetReached != "" {
			fmt.Fprintf(s.ErrOut, "wfb run: aborted: %s. Continue with a higher budget: %s\n", sum.BudgetReached, cont(" --max-cost USD"))
			return errNotOK
		}
		fmt.Fprintf(s.ErrOut, "wfb run: aborted: %s. Continue later with: %s\n", sum.Breaker, cont(""))
		return errNotOK
	}
	if sum.Skipped == sum.Cells {
		fmt.Fprintf(s.ErrOut, "wfb run: %s: every cell already has a completed attempt; nothing to run\n", sum.RunID)
	}
	return nil
}
