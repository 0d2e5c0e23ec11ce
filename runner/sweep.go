package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/scratch"
	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// InputError is a problem with what the user gave a sweep (a name the bench
// lacks, a variable missing from the environment, a ref that names no
// commit, a resume whose bench changed): nothing was started.
type InputError struct {
	Problems []string
}

func (e *InputError) Error() string { return strings.Join(e.Problems, "\n") }

// SweepOptions configure one `wfb run`.
type SweepOptions struct {
	Bench     *bench.Bench
	Selection bench.Selection
	DB        *store.DB
	Label     string
	// Resume names a run to continue; empty starts a new one.
	Resume string
	// RunID is the id of a new run; empty: a fresh one. The shards of one
	// run share it.
	RunID string
	// Workers runs this many cells at once; 0: the bench's.
	Workers int
	// Limits override the bench's per-session resource limits (zero
	// fields: the bench's, else the defaults).
	Limits Limits
	// Harness is wfb's version, recorded and part of the fingerprint.
	Harness string
	// Getenv reads wfb's environment: API keys and arm variables.
	Getenv func(string) string
	// StartMock starts a provider serving the mock script at path. Every
	// cell gets its own, so a script's replies are served in order within
	// the cell whatever the other workers do. cmd/wfb passes mock's.
	StartMock func(path string) (baseURL string, stop func(), err error)
	// StandInBin and StandInArgs run the stand-in agent (wfb mock agent).
	StandInBin  string
	StandInArgs []string
	// AgentEnv is added to every agent's environment after the arm's.
	AgentEnv map[string]string
	// Progress hears about every attempt; nil: nothing is shown.
	Progress Progress
	// TempDir holds the cells' workspaces; "": the system's.
	TempDir string
	// NoMeter runs the sessions unmetered (`wfb run --meter=off`); by
	// default one metering proxy serves every session of the sweep,
	// started by StartMeter once the sweep's checks have passed (the
	// requests that name no attempt it writes to db). cmd/wfb passes
	// runner/meterstore's.
	NoMeter    bool
	StartMeter func(db *store.DB) (Meter, error)
	// RequireWitness refuses every session's usage the meter did not
	// witness (`wfb run --require-witness`), as the bench's
	// require_witness does for the bench or an arm. Refused with NoMeter:
	// nothing could witness it.
	RequireWitness bool
	// MaxCost caps the run's cost in US dollars (`wfb run --max-cost`);
	// 0: the bench's budget, if any. See charge.
	MaxCost float64
}

// Summary is how a sweep ended.
type Summary struct {
	RunID  string
	Status string // wfb.RunComplete, RunAborted or RunInterrupted
	// Planned cells, those already complete when a resumed run began, and
	// attempts made now (retries and not-run rows included).
	Cells, Skipped, Attempts int
	// OK and Failed count this invocation's cells by their last attempt.
	OK, Failed int
	// Breaker says why the outage breaker opened; "" when it did not.
	Breaker string
	// Run counts the whole run's cells (earlier invocations included) by
	// their final attempts, and its attempts, by the cell rule (wfb.Cell);
	// Cost is the whole run's cost by the one rule (wfb.Cost) — the
	// figures wfb runs shows for the run.
	Run  wfb.Tally
	Cost wfb.CostSum
	// Budget is the run's cost cap in US dollars (0: none), checked against
	// Cost.USD. BudgetReached says why the budget stopped the run; "" when
	// it did not.
	Budget        float64
	BudgetReached string
}

// RunConfig is what runs.config holds. For a `wfb run` (Command "run")
// it is enough to check a resume against and to tell what changed: the
// bench file, the selection and the fingerprint. For a session run on its
// own (Command "session", see RunSession) it is how the session was asked
// for.
type RunConfig struct {
	Command     string             `json:"command"`
	Bench       string             `json:"bench,omitempty"`
	Selection   *bench.Selection   `json:"selection,omitempty"`
	Fingerprint *bench.Fingerprint `json:"fingerprint,omitempty"`
	Session     *SessionConfig     `json:"session,omitempty"`
	// Meter is "on" when the sessions were metered, "off" when not.
	Meter string `json:"meter,omitempty"`
	// RequireWitness is set when --require-witness refused usage the
	// meter did not witness (the bench's require_witness is in the bench
	// file, which the fingerprint covers).
	RequireWitness bool `json:"require_witness,omitempty"`
	// Budget is the run's cost cap, absent when it had none. A resume
	// with another cap records the new one: the run ran under it last.
	Budget *BudgetConfig `json:"budget,omitempty"`
}

// BudgetConfig is the cost cap runs.config records: USD dollars, from
// "max-cost" (wfb run --max-cost) or "bench" (the bench's budget).
type BudgetConfig struct {
	USD  float64 `json:"usd"`
	From string  `json:"from"`
}

// NotRunDetail starts the detail of the row a cell gets when the outage
// breaker or the run's budget kept it from starting.
const NotRunDetail = "not run: "

// systemic kinds say the outside world failed, not the workflow: a run of
// them in a row is an outage.
var systemic = []string{wfb.KindProviderError, wfb.KindInfraError, wfb.KindSpawnFailure, wfb.KindSandboxRefused}

// Sweep runs the cells of a bench into one run.
type Sweep struct {
	opts   SweepOptions
	bench  *bench.Bench
	cells  []*cellState
	run    store.Run
	config RunConfig
	// prevConfig is the config a resumed run was recorded with, and
	// prevRaw its JSON as recorded.
	prevConfig RunConfig
	prevRaw    string
	tmp        string                       // the run's directory (tmpDir's path)
	tmpDir     *scratch.Dir                 // holds it locked while the sweep uses it
	cred       *syscall.Credential          // the session identity of a root wfb; nil otherwise
	backend    string                       // the concrete sandbox backend of every cell (resolveBackend)
	passed     []sandbox.Status             // why auto passed each stronger backend over
	keys       map[string]string            // api key per provider env var
	envs       map[string]map[string]string // arm → resolved variables
	kits       map[string]bench.Kit         // arm → its kit, secrets and programs resolved (resolveKit)
	agents     map[string]agentCmd          // arm → command
	trees      map[string]pristine          // task → its pristine tree
	newID      string                       // the id a run given none is recorded under (holdRun)
	held       string                       // the run this process holds in the results file (holdRun)
	meter      Meter                        // the sessions' metering proxy; nil: not metered

	mu          sync.Mutex
	retriesUsed int
	consecutive int
	breakerWhy  string
	fatal       error

	budget    budget         // the run's cost cap and its cost so far
	unplanned []store.Result // rows of the run's cells this invocation does not plan
	summary   Summary
}

type agentCmd struct {
	bin     string
	args    []string
	version string
	staged  bool // bin is the run's own copy (see stageStandIn)
	probe   bool // version is asked of the binary (probeAgents)
}

// cellState is one cell and its attempts in attempt order: those a resumed
// run found, then those made now.
type cellState struct {
	bench.Cell
	task     bench.Task
	arm      bench.Arm
	attempts []store.Result
	started  bool // an attempt was made in this invocation

	// The cell's own mock provider, kept across its attempts so a retry
	// sees the script's next reply.
	mockURL  string
	mockStop func()
}

// RunID is the run the sweep records into.
func (s *Sweep) RunID() string { return s.run.ID }

// Sandbox is the backend every cell of the run uses, resolved once before
// any started, and, when the bench asked for auto, why each stronger
// backend was passed over.
func (s *Sweep) Sandbox() (backend string, passedOver []sandbox.Status) {
	return s.backend, append([]sandbox.Status(nil), s.passed...)
}

// Close removes the sweep's temporary files.
func (s *Sweep) Close() error {
	if s.held != "" {
		s.opts.DB.ReleaseRun(s.held)
		s.held = ""
	}
	if s.meter != nil {
		s.meter.Close()
		s.meter = nil
	}
	for _, c := range s.cells {
		if c.mockStop != nil {
			c.mockStop()
			c.mockStop = nil
		}
	}
	err := s.tmpDir.Remove()
	s.tmp, s.tmpDir = "", nil
	return err
}

// removeAll removes a tree a session may have left without write or
// search permission on some directories.
func removeAll(dir string) error { return scratch.RemoveAll(dir) }

// isRetry says whether attempt i of a cell was a retry: the attempt before
// it failed with a kind the bench retries. (An attempt after a cancelled or
// not-run one is a resumption, not a retry, and costs no budget.)
func (s *Sweep) isRetry(c *cellState, i int) bool {
	if i == 0 {
		return false
	}
	prev := c.attempts[i-1]
	_, retried := s.bench.Retries[prev.ErrorKind]
	return !prev.OK && retried && !notRun(prev)
}

// notRun says whether a row is the placeholder of a cell the breaker kept
// from starting.
func notRun(r store.Result) bool {
	return r.ProcessState == wfb.StateNotStarted && r.ErrorKind == wfb.KindInfraError && strings.HasPrefix(r.ErrorDetail, NotRunDetail)
}

// retryOwed says whether the cell's last attempt failed with a kind the
// bench retries and the cell has retries of that kind left; the run's
// budget is checked separately when the retry is taken.
func (s *Sweep) retryOwed(c *cellState) bool {
	last := c.attempts[len(c.attempts)-1]
	limit, ok := s.bench.Retries[last.ErrorKind]
	if last.OK || !ok || notRun(last) {
		return false
	}
	failures := 0
	for _, a := range c.attempts {
		if !a.OK && a.ErrorKind == last.ErrorKind && !notRun(a) {
			failures++
		}
	}
	return failures <= limit
}

// complete says whether a cell needs no further attempt. It does when one
// of its attempts is ok, or when its last attempt failed for good: not
// cancelled (Ctrl-C), not a not-run row of the breaker, and with no retry
// owed (its kind is not retried, that kind's retries are used up, or the
// run's retry budget is spent).
func (s *Sweep) complete(c *cellState) bool {
	if len(c.attempts) == 0 {
		return false
	}
	for _, a := range c.attempts {
		if a.OK {
			return true
		}
	}
	last := c.attempts[len(c.attempts)-1]
	if last.ErrorKind == wfb.KindCancelled || notRun(last) {
		return false
	}
	if !s.retryOwed(c) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bench.RetryBudget >= 0 && s.retriesUsed >= s.bench.RetryBudget
}

// Run records the run (or reopens a resumed one), runs every cell not yet
// complete with the configured workers, and finishes the run: complete,
// aborted (the breaker opened, or a row could not be written) or
// interrupted (ctx was cancelled: in-flight cells are recorded as
// cancelled; cells not started get no row and run on --resume). The error
// is non-nil only when the run could not be recorded.
func (s *Sweep) Run(ctx context.Context) (Summary, error) {
	if err := s.recordRun(ctx); err != nil {
		return Summary{}, err
	}
	pending := s.pending()
	s.work(ctx, pending)
	return s.finish(ctx, pending)
}

// recordRun records a new run, or marks a resumed one running again
// (finish closes it anew).
func (s *Sweep) recordRun(ctx context.Context) error {
	if s.opts.Resume != "" {
		if err := s.opts.DB.ReopenRun(ctx, s.run.ID); err != nil {
			return err
		}
		return s.recordBudget(ctx)
	}
	config, err := json.Marshal(s.config)
	if err != nil {
		return err
	}
	s.run.StartedAt = time.Now().UTC()
	s.run.Config = string(config)
	return s.opts.DB.CreateRun(ctx, s.run)
}

// recordBudget records a resumed run's cap in its config when it differs
// from the one recorded: the run continues under the new cap (or none).
func (s *Sweep) recordBudget(ctx context.Context) error {
	was, now := s.prevConfig.Budget, s.budget.config()
	if (was == nil && now == nil) || (was != nil && now != nil && *was == *now) {
		return nil
	}
	// Only the budget changes: fields this wfb does not know (a config
	// another version wrote) are kept as they were.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s.prevRaw), &fields); err != nil {
		return fmt.Errorf("run %s: its recorded configuration cannot be read: %w", s.run.ID, err)
	}
	delete(fields, "budget")
	if now != nil {
		b, err := json.Marshal(now)
		if err != nil {
			return err
		}
		fields["budget"] = b
	}
	config, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return s.opts.DB.SetRunConfig(ctx, s.run.ID, string(config))
}

// pending lists the cells still to run, counting the others as skipped,
// and starts the progress display.
func (s *Sweep) pending() []*cellState {
	var pending []*cellState
	for _, c := range s.cells {
		if s.complete(c) {
			s.summary.Skipped++
			continue
		}
		pending = append(pending, c)
	}
	s.summary.RunID, s.summary.Cells = s.run.ID, len(s.cells)
	if s.opts.Progress != nil {
		s.opts.Progress.Start(len(s.cells), s.summary.Skipped)
	}
	return pending
}

// work runs the pending cells on the configured workers, feeding them one
// at a time until all are taken, no further attempt may start, or ctx
// ends, and waits for the workers.
func (s *Sweep) work(ctx context.Context, pending []*cellState) {
	jobs := make(chan *cellState)
	var wg sync.WaitGroup
	for range min(s.opts.Workers, max(len(pending), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				// The breaker may have opened while c waited in the
				// channel: it then gets a not-run row in finish.
				if s.stopping(ctx) {
					continue
				}
				c.started = true
				s.runCell(ctx, c)
			}
		}()
	}
feed:
	for _, c := range pending {
		if s.stopping(ctx) {
			break
		}
		select {
		case jobs <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
}

// finish says how the run ended, gives each cell the breaker kept from
// starting its not-run row, and records the run's end, even after ctx was
// cancelled.
func (s *Sweep) finish(ctx context.Context, pending []*cellState) (Summary, error) {
	status := wfb.RunComplete
	switch {
	case ctx.Err() != nil:
		status = wfb.RunInterrupted
	case s.fatal != nil:
		status = wfb.RunAborted
	case s.breakerWhy != "" || s.budgetCut(pending):
		status = wfb.RunAborted
		s.recordNotRuns(ctx, pending)
	}
	s.summary.Status, s.summary.Breaker = status, s.breakerWhy
	s.summary.Budget, s.summary.Cost, s.summary.Run = s.budget.usd, s.budget.cost, s.tally()
	if status == wfb.RunAborted && s.budget.reached && s.breakerWhy == "" {
		s.summary.BudgetReached = s.budget.why()
	}
	if s.opts.Progress != nil {
		s.opts.Progress.Finish(s.summary)
	}
	ferr := s.opts.DB.FinishRun(context.WithoutCancel(ctx), s.run.ID, status, time.Now().UTC())
	return s.summary, errors.Join(s.fatal, ferr)
}

// tally counts the whole run's cells by the cell rule: the planned cells'
// attempts, and the rows of cells this invocation does not plan.
func (s *Sweep) tally() wfb.Tally {
	var t wfb.Tally
	for _, c := range s.cells {
		if len(c.attempts) > 0 {
			t.AddCell(cellOf(c.attempts))
		}
	}
	others := map[bench.Cell][]store.Result{}
	var order []bench.Cell
	for _, r := range s.unplanned {
		k := bench.Cell{Task: r.Task, Arm: r.Arm, Rep: r.Rep}
		if others[k] == nil {
			order = append(order, k)
		}
		others[k] = append(others[k], r)
	}
	for _, k := range order {
		t.AddCell(cellOf(others[k]))
	}
	return t
}

// cellOf is one cell's outcome from its attempts.
func cellOf(attempts []store.Result) wfb.Cell {
	var c wfb.Cell
	for _, a := range attempts {
		c.Add(a.Attempt, a.OK, a.ErrorKind)
	}
	return c
}

// stopping says whether no further attempt may start.
func (s *Sweep) stopping(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ctx.Err() != nil || s.breakerWhy != "" || s.budget.reached || s.fatal != nil
}

// runCell makes a cell's attempts until it is complete, retries included.
func (s *Sweep) runCell(ctx context.Context, c *cellState) {
	defer func() {
		if c.mockStop != nil {
			c.mockStop()
			c.mockStop = nil
		}
	}()
	for {
		if len(c.attempts) > 0 && s.isRetryNext(c) && !s.takeRetry() {
			break
		}
		row, err := s.attempt(ctx, c)
		if err != nil {
			s.mu.Lock()
			if s.fatal == nil {
				s.fatal = err
			}
			s.mu.Unlock()
			return
		}
		c.attempts = append(c.attempts, row)
		s.observe(row)
		if s.complete(c) || s.stopping(ctx) {
			break
		}
	}
	s.mu.Lock()
	last := c.attempts[len(c.attempts)-1]
	if last.OK {
		s.summary.OK++
	} else {
		s.summary.Failed++
	}
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress.CellDone(last)
	}
}

// isRetryNext says whether the next attempt of a cell is a retry (and so
// costs budget) rather than its first attempt or a resumption.
func (s *Sweep) isRetryNext(c *cellState) bool {
	last := c.attempts[len(c.attempts)-1]
	_, retried := s.bench.Retries[last.ErrorKind]
	return !last.OK && retried && !notRun(last) && last.ErrorKind != wfb.KindCancelled
}

// takeRetry spends one retry of the run's budget, if any is left.
func (s *Sweep) takeRetry() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bench.RetryBudget >= 0 && s.retriesUsed >= s.bench.RetryBudget {
		return false
	}
	s.retriesUsed++
	return true
}

// observe feeds the outage breaker and the progress display.
func (s *Sweep) observe(row store.Result) {
	s.mu.Lock()
	s.summary.Attempts++
	s.budget.charge(row)
	switch {
	case row.ErrorKind == wfb.KindCancelled:
	case slices.Contains(systemic, row.ErrorKind):
		s.consecutive++
		if s.bench.Breaker > 0 && s.consecutive >= s.bench.Breaker && s.breakerWhy == "" {
			s.breakerWhy = fmt.Sprintf("the outage breaker opened after %d consecutive systemic failures (the last: %s: %s)",
				s.consecutive, row.ErrorKind, termtext.Show(wfb.Clip(row.ErrorDetail, 200), ""))
		}
	default:
		s.consecutive = 0
	}
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress.Attempt(row)
	}
}

// recordNotRun writes the row of a cell the breaker or the budget kept
// from starting.
func (s *Sweep) recordNotRun(ctx context.Context, c *cellState, kind, detail string) {
	cell := s.cellFor(c, "")
	row, err := record(ctx, s.opts.DB, cell.row(kind, detail))
	if err != nil {
		s.mu.Lock()
		s.fatal = errors.Join(s.fatal, err)
		s.mu.Unlock()
		return
	}
	c.attempts = append(c.attempts, row)
	s.mu.Lock()
	s.summary.Attempts++
	s.summary.Failed++
	s.budget.charge(row)
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress.Attempt(row)
		s.opts.Progress.CellDone(row)
	}
}
