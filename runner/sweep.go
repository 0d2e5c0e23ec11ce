package runner

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
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
}

// Summary is how a sweep ended.
type Summary struct {
	RunID  string
	Status string // store.RunComplete, RunAborted or RunInterrupted
	// Planned cells, those already complete when a resumed run began, and
	// attempts made now (retries and not-run rows included).
	Cells, Skipped, Attempts int
	// OK and Failed count this invocation's cells by their last attempt.
	OK, Failed int
	// Breaker says why the outage breaker opened; "" when it did not.
	Breaker string
}

// RunConfig is what runs.config holds for a `wfb run`: enough to check a
// resume against and to tell what changed.
type RunConfig struct {
	Command     string            `json:"command"`
	Bench       string            `json:"bench"`
	Selection   bench.Selection   `json:"selection"`
	Fingerprint bench.Fingerprint `json:"fingerprint"`
}

// NotRunDetail starts the detail of the row a cell gets when the outage
// breaker kept it from starting.
const NotRunDetail = "not run: "

// systemic kinds say the outside world failed, not the workflow: a run of
// them in a row is an outage.
var systemic = []string{store.KindProviderError, store.KindInfraError, store.KindSpawnFailure, store.KindSandboxRefused}

// Sweep runs the cells of a bench into one run.
type Sweep struct {
	opts    SweepOptions
	bench   *bench.Bench
	cells   []*cellState
	run     store.Run
	config  RunConfig
	tmp     string
	cred    *syscall.Credential          // the session identity of a root wfb; nil otherwise
	backend string                       // the concrete sandbox backend of every cell (resolveBackend)
	passed  []sandbox.Status             // why auto passed each stronger backend over
	keys    map[string]string            // api key per provider env var
	envs    map[string]map[string]string // arm → resolved variables
	agents  map[string]agentCmd          // arm → command
	pristin map[string]pristine          // task → tree
	lock    *os.File                     // this process's hold on the run (lockRun)

	mu          sync.Mutex
	retriesUsed int
	consecutive int
	breakerWhy  string
	fatal       error
	summary     Summary
}

type agentCmd struct {
	bin     string
	args    []string
	version string
	staged  bool // bin is the run's own copy (see stageStandIn)
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

// NewSweep checks everything a sweep needs before anything is recorded:
// the selection, the environment variables arms and providers name, the
// agents and their versions, the pinned git refs; with Resume, that the
// run exists and its fingerprint is unchanged. The user's mistakes come
// back as *InputError. Close the sweep when done.
func NewSweep(ctx context.Context, opts SweepOptions) (_ *Sweep, retErr error) {
	b := opts.Bench
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	s := &Sweep{opts: opts, bench: b, keys: map[string]string{}, envs: map[string]map[string]string{},
		agents: map[string]agentCmd{}, pristin: map[string]pristine{}}
	var prev *store.Run
	var prevConfig RunConfig
	if id := cmp.Or(opts.Resume, opts.RunID); id != "" && bench.ValidID(id) {
		lock, err := lockRun(opts.DB.Path(), id)
		if err != nil {
			return nil, err
		}
		s.lock = lock
		// Released by Close, or here when NewSweep fails.
		defer func() {
			if s.lock != nil && retErr != nil {
				s.lock.Close()
			}
		}()
	}
	if opts.Resume != "" {
		r, err := opts.DB.Run(ctx, opts.Resume)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: no such run in %s", opts.Resume, opts.DB.Path())}}
		}
		if err != nil {
			return nil, err
		}
		if r.Kind != "run" {
			return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: a %s, not a bench run", r.ID, r.Kind)}}
		}
		if err := json.Unmarshal([]byte(r.Config), &prevConfig); err != nil || prevConfig.Command != "run" {
			return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: its recorded configuration cannot be read", r.ID)}}
		}
		prev = &r
		// The cells of a run are the ones it was started with; of a sharded
		// run, those of the shard this process is.
		sel := prevConfig.Selection
		if sel.ShardCount > 0 && opts.Selection.ShardCount != sel.ShardCount {
			return nil, &InputError{Problems: []string{fmt.Sprintf(
				"--resume %s: the run is sharded %d ways; name this file's shard again (--shard i/%d, or the batch engine's variables)",
				r.ID, sel.ShardCount, sel.ShardCount)}}
		}
		if sel.ShardCount == 0 && opts.Selection.ShardCount > 0 {
			return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: the run is not sharded; drop the shard", r.ID)}}
		}
		sel.Shard = opts.Selection.Shard
		opts.Selection, s.opts.Selection = sel, sel
	} else if opts.RunID != "" && !bench.ValidID(opts.RunID) {
		return nil, &InputError{Problems: []string{fmt.Sprintf("run id %q: use letters, digits, '.', '_' and '-'", opts.RunID)}}
	}
	plan, err := b.Plan(opts.Selection)
	var unknown *bench.SelectionError
	if errors.As(err, &unknown) {
		return nil, &InputError{Problems: unknown.Problems}
	}
	if err != nil {
		return nil, err
	}
	if s.opts.Workers <= 0 {
		s.opts.Workers = b.Workers
	}
	var problems []string
	used := map[string]bool{}
	for _, c := range plan {
		t, _ := b.Task(c.Task)
		a, _ := b.Arm(c.Arm)
		s.cells = append(s.cells, &cellState{Cell: c, task: t, arm: a})
		used["t/"+t.ID], used["a/"+a.ID] = true, true
		p := b.ProviderFor(t, a)
		if !p.IsMock() {
			if _, done := s.keys[p.APIKeyEnv]; !done {
				s.keys[p.APIKeyEnv] = opts.Getenv(p.APIKeyEnv)
				if s.keys[p.APIKeyEnv] == "" {
					problems = append(problems, fmt.Sprintf("provider %s needs its API key in $%s, which is not set", p.BaseURL, p.APIKeyEnv))
				}
			}
		} else if opts.StartMock == nil {
			problems = append(problems, "a mock provider is named but this wfb cannot start one")
		}
	}
	for _, a := range b.Arms {
		if !used["a/"+a.ID] {
			continue
		}
		env := map[string]string{}
		for _, v := range a.Env {
			if v.Literal {
				env[v.Name] = v.Value
				continue
			}
			val, ok := lookup(opts.Getenv, v.FromEnv)
			if !ok {
				problems = append(problems, fmt.Sprintf("arm %s: env %s comes from $%s, which is not set", a.ID, v.Name, v.FromEnv))
			}
			env[v.Name] = val
		}
		s.envs[a.ID] = env
		s.agents[a.ID] = s.agentFor(ctx, a)
	}
	if len(problems) > 0 {
		return nil, &InputError{Problems: problems}
	}

	if s.cred, err = sandbox.SessionCredential(os.Geteuid()); err != nil {
		return nil, &InputError{Problems: []string{err.Error()}}
	}
	if s.tmp, err = os.MkdirTemp(opts.TempDir, "wfb-run-"); err != nil {
		return nil, err
	}
	// Sessions of another uid must traverse it to reach their workspace.
	if err := os.Chmod(s.tmp, 0o755); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.stageStandIn(); err != nil {
		s.Close()
		return nil, err
	}
	for _, t := range b.Tasks {
		if !used["t/"+t.ID] {
			continue
		}
		p, err := preparePristine(ctx, t, s.tmp)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		s.pristin[t.ID] = p
	}
	if len(problems) > 0 {
		s.Close()
		return nil, &InputError{Problems: problems}
	}
	fp, err := s.fingerprint(used)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.config = RunConfig{Command: "run", Bench: b.Path, Selection: s.opts.Selection, Fingerprint: fp}
	if prev != nil {
		if changes := fp.Changes(prevConfig.Fingerprint); len(changes) > 0 {
			s.Close()
			return nil, &InputError{Problems: append([]string{fmt.Sprintf(
				"--resume %s: refused, the bench is not the one the run started with (resume needs the same fingerprint):", prev.ID)}, changes...)}
		}
		s.run = *prev
		if err := s.loadAttempts(ctx); err != nil {
			s.Close()
			return nil, err
		}
	} else {
		id := opts.RunID
		if id == "" {
			id = store.NewID("run")
		} else if _, err := opts.DB.Run(ctx, id); err == nil {
			s.Close()
			return nil, &InputError{Problems: []string{fmt.Sprintf("run %s is already recorded in %s; continue it with --resume %s", id, opts.DB.Path(), id)}}
		}
		s.run = store.Run{ID: id, Label: opts.Label, Kind: "run", Status: store.RunRunning,
			Fingerprint: fp.Sum(), Harness: opts.Harness}
	}
	// Last: it runs live probes, and a refusal must come before anything
	// is recorded.
	if err := s.resolveBackend(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// fingerprint computes the sweep's fingerprint over the tasks and arms it
// uses (used holds "t/ID" and "a/ID").
func (s *Sweep) fingerprint(used map[string]bool) (bench.Fingerprint, error) {
	b := s.bench
	f := bench.Fingerprint{BenchSHA256: b.Digest, Workspaces: map[string]string{}, Agents: map[string]string{}, Harness: s.opts.Harness}
	var err error
	if f.MockScripts, err = b.MockScriptDigests(); err != nil {
		return f, fmt.Errorf("fingerprint: %w", err)
	}
	for _, t := range b.Tasks {
		if !used["t/"+t.ID] {
			continue
		}
		p := s.pristin[t.ID]
		if p.commit != "" {
			f.Workspaces[t.ID] = "git " + p.commit
			continue
		}
		d, err := sandbox.Digest(p.dir)
		if err != nil {
			return f, fmt.Errorf("fingerprint: workspace of task %s: %w", t.ID, err)
		}
		if !strings.HasPrefix(d, "sha256:") {
			d = "sha256:" + d
		}
		f.Workspaces[t.ID] = d
	}
	for _, a := range b.Arms {
		if used["a/"+a.ID] {
			f.Agents[a.ID] = s.agents[a.ID].version
		}
	}
	return f, nil
}

// agentFor resolves an arm's agent command and version. A binary that
// cannot be found is not an input error: each cell records the spawn
// failure, as a row.
func (s *Sweep) agentFor(ctx context.Context, a bench.Arm) agentCmd {
	if a.Agent == bench.AgentStandIn && a.AgentBin == "" {
		return agentCmd{bin: s.opts.StandInBin, args: s.opts.StandInArgs, version: "wfb " + s.opts.Harness}
	}
	bin := a.AgentBin
	if bin == "" {
		bin = a.Agent // claude, codex: looked up on PATH
	}
	if p, err := exec.LookPath(bin); err == nil {
		bin = p
	}
	v := probeVersion(ctx, bin)
	if v == "" {
		v = "unknown (" + bin + " --version gave none)"
	}
	return agentCmd{bin: bin, version: v}
}

// stageStandIn copies the stand-in's executable into the run's directory
// once, before any worker starts, for every arm that runs it. A copy per
// cell (the sandbox's StageAgent) would be written while other workers
// fork: a child forked while the copy is open for writing holds it, and
// the exec of that copy then fails with ETXTBSY ("text file busy"). The
// copy is wfb's, mode 0755, in a directory only wfb can write, so no
// session can replace it.
func (s *Sweep) stageStandIn() error {
	var staged string
	for id, ag := range s.agents {
		if ag.bin != s.opts.StandInBin || ag.bin == "" {
			continue
		}
		if staged == "" {
			dir := filepath.Join(s.tmp, "bin")
			if err := os.Mkdir(dir, 0o755); err != nil {
				return fmt.Errorf("stage the stand-in agent: %w", err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				return fmt.Errorf("stage the stand-in agent: %w", err)
			}
			staged = filepath.Join(dir, filepath.Base(ag.bin))
			if err := copyFile(ag.bin, staged, 0o755); err != nil {
				return fmt.Errorf("stage the stand-in agent: %w", err)
			}
		}
		ag.bin, ag.staged = staged, true
		s.agents[id] = ag
	}
	return nil
}

// RunID is the run the sweep records into.
func (s *Sweep) RunID() string { return s.run.ID }

// Sandbox is the backend every cell of the run uses, resolved once before
// any started, and, when the bench asked for auto, why each stronger
// backend was passed over.
func (s *Sweep) Sandbox() (backend string, passedOver []sandbox.Status) {
	return s.backend, append([]sandbox.Status(nil), s.passed...)
}

// Config is the configuration recorded with the run.
func (s *Sweep) Config() RunConfig { return s.config }

// Close removes the sweep's temporary files.
func (s *Sweep) Close() error {
	if s.lock != nil {
		s.lock.Close() // drops the run's lock
		s.lock = nil
	}
	for _, c := range s.cells {
		if c.mockStop != nil {
			c.mockStop()
			c.mockStop = nil
		}
	}
	if s.tmp == "" {
		return nil
	}
	err := removeAll(s.tmp)
	s.tmp = ""
	return err
}

// removeAll removes a tree a session may have left without write or
// search permission on some directories.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// loadAttempts reads a resumed run's rows into its cells. A row of a cell
// that is no longer planned is left alone.
func (s *Sweep) loadAttempts(ctx context.Context) error {
	rows, err := s.opts.DB.Results(ctx, s.run.ID)
	if err != nil {
		return err
	}
	byKey := map[bench.Cell]*cellState{}
	for _, c := range s.cells {
		byKey[c.Cell] = c
	}
	for _, r := range rows {
		c, ok := byKey[bench.Cell{Task: r.Task, Arm: r.Arm, Rep: r.Rep}]
		if !ok {
			continue
		}
		c.attempts = append(c.attempts, r)
	}
	for _, c := range s.cells {
		slices.SortStableFunc(c.attempts, func(a, b store.Result) int { return a.Attempt - b.Attempt })
		for i := range c.attempts {
			if s.isRetry(c, i) {
				s.retriesUsed++
			}
		}
	}
	return nil
}

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
	return r.ProcessState == store.StateNotStarted && r.ErrorKind == store.KindInfraError && strings.HasPrefix(r.ErrorDetail, NotRunDetail)
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
	if last.ErrorKind == store.KindCancelled || notRun(last) {
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
	db := s.opts.DB
	config, err := json.Marshal(s.config)
	if err != nil {
		return Summary{}, err
	}
	if s.opts.Resume == "" {
		s.run.StartedAt = time.Now().UTC()
		s.run.Config = string(config)
		if err := db.CreateRun(ctx, s.run); err != nil {
			return Summary{}, err
		}
	} else if err := reopenRun(ctx, db, s.run.ID); err != nil {
		return Summary{}, err
	}

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

	jobs := make(chan *cellState)
	var wg sync.WaitGroup
	for range min(s.opts.Workers, max(len(pending), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				// The breaker may have opened while c waited in the
				// channel: it then gets a not-run row below.
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

	status := store.RunComplete
	switch {
	case ctx.Err() != nil:
		status = store.RunInterrupted
	case s.fatal != nil:
		status = store.RunAborted
	case s.breakerWhy != "":
		status = store.RunAborted
		for _, c := range pending {
			if !c.started {
				s.recordNotRun(ctx, c)
			}
		}
	}
	if s.opts.Progress != nil {
		s.opts.Progress.Finish()
	}
	s.summary.Status, s.summary.Breaker = status, s.breakerWhy
	ferr := db.FinishRun(context.WithoutCancel(ctx), s.run.ID, status, time.Now().UTC())
	return s.summary, errors.Join(s.fatal, ferr)
}

// reopenRun marks a resumed run running again; FinishRun closes it anew.
func reopenRun(ctx context.Context, db *store.DB, id string) error {
	return db.ReopenRun(ctx, id)
}

// stopping says whether no further attempt may start.
func (s *Sweep) stopping(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ctx.Err() != nil || s.breakerWhy != "" || s.fatal != nil
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
	return !last.OK && retried && !notRun(last) && last.ErrorKind != store.KindCancelled
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
	switch {
	case row.ErrorKind == store.KindCancelled:
	case slices.Contains(systemic, row.ErrorKind):
		s.consecutive++
		if s.bench.Breaker > 0 && s.consecutive >= s.bench.Breaker && s.breakerWhy == "" {
			s.breakerWhy = fmt.Sprintf("the outage breaker opened after %d consecutive systemic failures (the last: %s: %s)",
				s.consecutive, row.ErrorKind, clip(row.ErrorDetail, 200))
		}
	default:
		s.consecutive = 0
	}
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress.Attempt(row)
	}
}

// recordNotRun writes the row of a cell the breaker kept from starting.
func (s *Sweep) recordNotRun(ctx context.Context, c *cellState) {
	cell := s.cellFor(c, "")
	row := cell.row(store.KindInfraError, NotRunDetail+s.breakerWhy+"; `wfb run --resume "+s.run.ID+"` runs it once the outage is over")
	if _, err := record(ctx, s.opts.DB, row); err != nil {
		s.mu.Lock()
		s.fatal = errors.Join(s.fatal, err)
		s.mu.Unlock()
		return
	}
	c.attempts = append(c.attempts, row)
	s.mu.Lock()
	s.summary.Attempts++
	s.summary.Failed++
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress.Attempt(row)
		s.opts.Progress.CellDone(row)
	}
}

// cellFor builds the runner's Cell for the next attempt of c.
func (s *Sweep) cellFor(c *cellState, dir string) Cell {
	t, a := c.task, c.arm
	ag := s.agents[a.ID]
	cell := Cell{
		SessionKey: SessionKey{
			RunID: s.run.ID, Task: t.ID, Arm: a.ID, Rep: c.Rep, Attempt: len(c.attempts) + 1,
			Agent: a.Agent, AgentBin: ag.bin, AgentArgs: ag.args, AgentVersion: ag.version,
			Model: a.Model, Prompt: a.PromptPrefix + t.Prompt + a.PromptSuffix, Timeout: s.bench.TimeoutFor(t),
			ExtraArgs: a.Flags, MaxTurns: a.MaxTurns, AllowedTools: a.AllowedTools,
		},
		AgentStaged: ag.staged,
		Sandbox:     s.backend, Review: t.Review, WorkspaceWritable: !t.Review,
		RequirePIDNamespace: s.bench.RequirePIDNamespace,
		ExtraEnv:            map[string]string{},
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
		return s.recordFailure(ctx, c, store.KindInfraError, "create the cell directory: "+err.Error())
	}
	defer removeAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return s.recordFailure(ctx, c, store.KindInfraError, "create the cell directory: "+err.Error())
	}
	cell := s.cellFor(c, dir)
	t := c.task
	if err := copyTree(s.pristin[t.ID].dir, cell.Workspace); err != nil {
		return s.recordFailure(ctx, c, store.KindInfraError, "copy the workspace: "+err.Error())
	}
	if t.Setup != "" {
		// The tree is still the task's own, so setup may run as wfb.
		res, err := runCommand(ctx, t.Setup, cell.Workspace, s.bench.TimeoutFor(t), nil, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return s.recordFailure(ctx, c, store.KindCancelled, "cancelled during setup")
		case err != nil:
			return s.recordFailure(ctx, c, store.KindInfraError, "run setup: "+err.Error())
		case res.exitCode != 0 || res.timedOut:
			return s.recordFailure(ctx, c, store.KindInfraError, res.describe("setup", t.Setup, s.bench.TimeoutFor(t)))
		}
	}
	if err := shareWithSession(cell.Workspace, s.cred, !t.Review); err != nil {
		return s.recordFailure(ctx, c, store.KindInfraError, "share the workspace with the session's group: "+err.Error())
	}
	var gitEnv map[string]string
	if t.Workspace.Git != "" && s.cred != nil {
		// The agent and verify run as the session uid in a root-owned clone.
		real, err := filepath.EvalSymlinks(cell.Workspace)
		if err != nil {
			return s.recordFailure(ctx, c, store.KindInfraError, "resolve the workspace: "+err.Error())
		}
		gitEnv = gitSafeDirectory(real)
		for k, v := range gitEnv {
			cell.ExtraEnv[k] = v
		}
	}
	if t.Verify != "" {
		timeout := s.bench.TimeoutFor(t)
		// After the agent, the tree holds what the agent wrote: a test
		// suite it edited must not run with more rights than the agent
		// had, so verify runs as the session's identity.
		cell.Verify = func(ctx context.Context, ws string) (string, error) {
			res, err := runCommand(ctx, t.Verify, ws, timeout, s.cred, gitEnv)
			if err != nil {
				return "", err
			}
			if res.exitCode != 0 || res.timedOut {
				return res.describe("verify", t.Verify, timeout), nil
			}
			return "", nil
		}
	}
	p := s.bench.ProviderFor(t, c.arm)
	if p.IsMock() {
		if c.mockStop == nil {
			url, stop, err := s.opts.StartMock(p.Mock)
			if err != nil {
				return s.recordFailure(ctx, c, store.KindInfraError, "start the mock provider: "+err.Error())
			}
			c.mockURL, c.mockStop = url, stop
		}
		cell.BaseURL, cell.APIKey = c.mockURL, "offline"
	} else {
		cell.BaseURL, cell.APIKey = p.BaseURL, s.keys[p.APIKeyEnv]
	}
	rec := Recorder(s.opts.DB)
	if t.Review {
		rec = &reviewRecorder{db: s.opts.DB, artifact: filepath.Join(cell.ArtifactDir, review.ReviewOutput), task: t}
	}
	return RunCell(ctx, rec, cell)
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
	content, readErr := os.ReadFile(r.artifact)
	return r.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := r.db.InsertResultTx(ctx, tx, row); err != nil {
			return err
		}
		if readErr != nil {
			return nil // never written (or unreadable): the row says so
		}
		if err := r.db.InsertArtifactTx(ctx, tx, row.AttemptID, review.ReviewOutput, content); err != nil {
			return err
		}
		if row.FindingsCount == nil || (len(r.task.Labels) == 0 && r.task.Verdict == "") {
			return nil // not accepted, or nothing to score against
		}
		rv, err := review.ParseReviewBytes(r.artifact, content)
		if err != nil {
			return nil // the row already says artifact-invalid
		}
		sc := StoredScore(row.AttemptID, review.ScoreReview(rv, r.task.Labels, r.task.Verdict),
			review.LabelsDigest(r.task.Labels, r.task.Verdict))
		return r.db.InsertScoreTx(ctx, tx, &sc)
	})
}

var _ Recorder = (*reviewRecorder)(nil)
