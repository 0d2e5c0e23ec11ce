package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/scratch"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// NewSweep checks everything a sweep needs before anything is recorded:
// the selection, the environment variables arms and providers name, the
// agents and their versions, the pinned git refs; with Resume, that the
// run exists and its fingerprint is unchanged. The user's mistakes come
// back as *InputError. Close the sweep when done.
func NewSweep(ctx context.Context, opts SweepOptions) (_ *Sweep, retErr error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	s := &Sweep{opts: opts, bench: opts.Bench, keys: map[string]string{}, envs: map[string]map[string]string{}, kits: map[string]bench.Kit{},
		agents: map[string]agentCmd{}, trees: map[string]pristine{}, budget: newBudget(opts.Bench.Budget, opts.MaxCost)}
	// One way out on failure: whatever was made so far (the run's lock,
	// the run's directory) goes with the sweep.
	defer func() {
		if retErr != nil {
			s.Close()
		}
	}()
	if err := s.holdRun(); err != nil {
		return nil, err
	}
	prev, err := s.resumed(ctx)
	if err != nil {
		return nil, err
	}
	// A shard's fingerprint covers every task and arm of the unsharded
	// selection, not just those of the cells it drew, so that every shard
	// of one run records the same run row and wfb merge combines them.
	_, all, err := s.planCells(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.prepareTrees(ctx, all); err != nil {
		return nil, err
	}
	if prev != nil {
		// A resumed run keeps the backend its sessions ran in
		// (resolveBackend reads it from their attempts).
		s.run = prev.run
		if err := s.loadAttempts(ctx); err != nil {
			return nil, err
		}
	}
	// It runs live probes, and a refusal must come before anything is
	// recorded.
	if err := s.resolveBackend(ctx); err != nil {
		return nil, err
	}
	// The versions are the fingerprint's; each is asked in the backend
	// the sessions run in, as their uid.
	s.probeAgents(ctx, all)
	if err := s.prepareRun(ctx, all, prev); err != nil {
		return nil, err
	}
	return s, s.startMeter()
}

// holdRun takes this process's hold on the run it records (see
// store.DB.HoldRun) before any of its rows is written: the run it resumes,
// the id it was given, or the one it is given now, so that every writer of
// a run holds it from its first row to its last. Close releases it. An
// invalid id is refused later (resumed), with nothing held.
func (s *Sweep) holdRun() error {
	id := cmp.Or(s.opts.Resume, s.opts.RunID)
	if id == "" {
		id = store.NewID("run")
		s.newID = id
	}
	if !bench.ValidID(id) {
		return nil
	}
	if err := s.opts.DB.HoldRun(id); err != nil {
		return err
	}
	s.held = id
	return nil
}

// priorRun is the run a resume continues, as it was recorded.
type priorRun struct {
	run    store.Run
	config RunConfig
}

// resumed reads the run a resume continues and takes the selection it was
// started with, the shard named again; nil without Resume. A new run's
// given id must be a valid one.
func (s *Sweep) resumed(ctx context.Context) (*priorRun, error) {
	opts := s.opts
	if opts.Resume == "" {
		if opts.RunID != "" && !bench.ValidID(opts.RunID) {
			return nil, &InputError{Problems: []string{fmt.Sprintf("run id %q: use letters, digits, '.', '_' and '-'", opts.RunID)}}
		}
		return nil, nil
	}
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
	prev := &priorRun{run: r}
	if err := json.Unmarshal([]byte(r.Config), &prev.config); err != nil || prev.config.Command != "run" {
		return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: its recorded configuration cannot be read", r.ID)}}
	}
	// The cells of a run are the ones it was started with; of a sharded
	// run, those of the shard this process is.
	var sel bench.Selection
	if prev.config.Selection != nil {
		sel = *prev.config.Selection
	}
	if sel.ShardCount > 0 && opts.Selection.ShardCount != sel.ShardCount {
		return nil, &InputError{Problems: []string{fmt.Sprintf(
			"--resume %s: the run is sharded %d ways; name this file's shard again (--shard i/%d, or the batch engine's variables)",
			r.ID, sel.ShardCount, sel.ShardCount)}}
	}
	if sel.ShardCount == 0 && opts.Selection.ShardCount > 0 {
		return nil, &InputError{Problems: []string{fmt.Sprintf("--resume %s: the run is not sharded; drop the shard", r.ID)}}
	}
	sel.Shard = opts.Selection.Shard
	s.opts.Selection = sel
	return prev, nil
}

// planCells lays out the selected cells and resolves what they need from
// wfb's environment: each real provider's API key, each arm's variables
// and agent. Every missing piece is reported at once, as an *InputError.
// It returns the tasks and arms the cells use ("t/ID" and "a/ID"), and
// those the selection uses before sharding (the same set when the run is
// not sharded): the run's fingerprint covers the latter, so it is the same
// in every shard. An arm of all gets its agent command (its version is in
// the fingerprint); only an arm of used needs its variables and kit.
func (s *Sweep) planCells(ctx context.Context) (used, all map[string]bool, err error) {
	b := s.bench
	plan, err := b.Plan(s.opts.Selection)
	var unknown *bench.SelectionError
	if errors.As(err, &unknown) {
		return nil, nil, &InputError{Problems: unknown.Problems}
	}
	if err != nil {
		return nil, nil, err
	}
	whole := plan
	if s.opts.Selection.ShardCount > 0 {
		unsharded := s.opts.Selection
		unsharded.Shard, unsharded.ShardCount = 0, 0
		if whole, err = b.Plan(unsharded); err != nil {
			return nil, nil, err
		}
	}
	all = map[string]bool{}
	for _, c := range whole {
		all["t/"+c.Task], all["a/"+c.Arm] = true, true
	}
	if s.opts.Workers <= 0 {
		s.opts.Workers = b.Workers
	}
	var problems []string
	used = map[string]bool{}
	for _, c := range plan {
		t, _ := b.Task(c.Task)
		a, _ := b.Arm(c.Arm)
		s.cells = append(s.cells, &cellState{Cell: c, task: t, arm: a})
		used["t/"+t.ID], used["a/"+a.ID] = true, true
		problems = append(problems, s.providerKey(b.ProviderFor(t, a))...)
	}
	for _, a := range b.Arms {
		if all["a/"+a.ID] {
			s.agents[a.ID] = s.agentFor(a)
		}
		if !used["a/"+a.ID] {
			continue
		}
		env, missing := armEnv(a, s.opts.Getenv)
		problems = append(problems, missing...)
		s.envs[a.ID] = env
		kit, missing := s.resolveKit(a)
		problems = append(problems, missing...)
		s.kits[a.ID] = kit
	}
	problems = append(problems, s.witnessProblems(used)...)
	if len(problems) > 0 {
		return nil, nil, &InputError{Problems: problems}
	}
	return used, all, nil
}

// witnessProblems refuses a witness required of an unmetered sweep
// (--require-witness, or the bench's or a selected arm's require_witness
// with --meter=off): only the meter can witness usage, so every row
// would be refused.
func (s *Sweep) witnessProblems(used map[string]bool) []string {
	if !s.opts.NoMeter {
		return nil
	}
	var by []string
	if s.opts.RequireWitness {
		by = append(by, "--require-witness")
	}
	if s.bench.RequireWitness {
		by = append(by, "the bench's require_witness")
	}
	for _, a := range s.bench.Arms {
		if used["a/"+a.ID] && a.RequireWitness {
			by = append(by, fmt.Sprintf("arm %s's require_witness", a.ID))
		}
	}
	if len(by) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s requires the meter to witness every session's usage, but --meter=off runs them unmetered: nothing could witness it; drop one of them", strings.Join(by, " and "))}
}

// providerKey reads a real provider's API key from wfb's environment, once
// per variable, and says when it is missing. A mock provider needs no key,
// but a wfb that can start one.
func (s *Sweep) providerKey(p bench.Provider) []string {
	if p.IsMock() {
		if s.opts.StartMock == nil {
			return []string{"a mock provider is named but this wfb cannot start one"}
		}
		return nil
	}
	if _, done := s.keys[p.APIKeyEnv]; done {
		return nil
	}
	s.keys[p.APIKeyEnv] = s.opts.Getenv(p.APIKeyEnv)
	if s.keys[p.APIKeyEnv] == "" {
		return []string{fmt.Sprintf("provider %s needs its API key in $%s, which is not set", p.BaseURL, p.APIKeyEnv)}
	}
	return nil
}

// armEnv resolves the variables an arm names, and says which of those it
// passes from wfb's environment are not set there.
func armEnv(a bench.Arm, getenv func(string) string) (map[string]string, []string) {
	env := map[string]string{}
	var missing []string
	for _, v := range a.Env {
		if v.Literal {
			env[v.Name] = v.Value
			continue
		}
		val := getenv(v.FromEnv)
		if val == "" {
			missing = append(missing, fmt.Sprintf("arm %s: env %s comes from $%s, which is not set", a.ID, v.Name, v.FromEnv))
		}
		env[v.Name] = val
	}
	return env, missing
}

// agentFor resolves an arm's agent command (its version is probed later,
// see probeAgents). A binary that cannot be found is not an input error:
// each cell records the spawn failure, as a row.
func (s *Sweep) agentFor(a bench.Arm) agentCmd {
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
	return agentCmd{bin: bin, probe: true}
}

// prepareTrees makes the run's directory, stages the stand-in in it, and
// prepares the pristine tree of every task in used (of a shard, every task
// of the unsharded selection: the fingerprint digests each); a ref that
// names no commit is an *InputError.
func (s *Sweep) prepareTrees(ctx context.Context, used map[string]bool) error {
	var err error
	if s.cred, err = sandbox.SessionCredential(os.Geteuid()); err != nil {
		return &InputError{Problems: []string{err.Error()}}
	}
	if s.tmpDir, err = scratch.New(s.opts.TempDir, RunDirPrefix); err != nil {
		return err
	}
	s.tmp = s.tmpDir.Path
	// Sessions of another uid must traverse it to reach their workspace.
	if err := os.Chmod(s.tmp, 0o755); err != nil {
		return err
	}
	if err := s.stageStandIn(); err != nil {
		return err
	}
	var problems []string
	for _, t := range s.bench.Tasks {
		if !used["t/"+t.ID] {
			continue
		}
		p, err := preparePristine(ctx, t, s.tmp)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		s.trees[t.ID] = p
	}
	if len(problems) > 0 {
		return &InputError{Problems: problems}
	}
	return nil
}

// stageStandIn stages the stand-in's executable in the run's directory
// once, before any worker starts, for every arm that runs it. A copy per
// cell (the sandbox's StageAgent, where the executable cannot be linked)
// would be written while other workers fork: a child forked while the copy
// is open for writing holds it, and the exec of that copy then fails with
// ETXTBSY ("text file busy"). What is staged is wfb's or root's, not
// writable by a session (sandbox.StageExecutable), in a directory only wfb
// can write, so no session can replace it.
//
// The stand-in MCP server (an MCP server whose command is wfb) runs from
// the same copy.
func (s *Sweep) stageStandIn() error {
	need := false
	for _, ag := range s.agents {
		need = need || (ag.bin == s.opts.StandInBin && ag.bin != "")
	}
	for _, k := range s.kits {
		need = need || usesWFB(k)
	}
	if !need || s.opts.StandInBin == "" {
		return nil
	}
	dir := filepath.Join(s.tmp, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("stage the stand-in agent: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("stage the stand-in agent: %w", err)
	}
	staged := filepath.Join(dir, filepath.Base(s.opts.StandInBin))
	if err := sandbox.StageExecutable(s.opts.StandInBin, staged); err != nil {
		return fmt.Errorf("stage the stand-in agent: %w", err)
	}
	for id, ag := range s.agents {
		if ag.bin == s.opts.StandInBin && ag.bin != "" {
			ag.bin, ag.staged = staged, true
			s.agents[id] = ag
		}
	}
	for id, k := range s.kits {
		for i, srv := range k.MCPServers {
			if srv.Command == bench.WFBCommand {
				k.MCPServers[i].Command = staged
			}
		}
		s.kits[id] = k
	}
	return nil
}

// prepareRun fingerprints what the sweep runs and sets up its run: the
// resumed one (refused when the fingerprint changed, with what changed),
// with its attempts so far; or a new one, under the id given (refused when
// the file already has it) or a fresh one.
func (s *Sweep) prepareRun(ctx context.Context, used map[string]bool, prev *priorRun) error {
	fp, err := s.fingerprint(used)
	if err != nil {
		return err
	}
	sel := s.opts.Selection
	s.config = RunConfig{Command: "run", Bench: s.bench.Path, Selection: &sel, Fingerprint: &fp, Meter: meterSetting(s.opts.NoMeter),
		RequireWitness: s.opts.RequireWitness, Budget: s.budget.config()}
	if prev != nil {
		s.prevConfig, s.prevRaw = prev.config, prev.run.Config
		var was bench.Fingerprint
		if prev.config.Fingerprint != nil {
			was = *prev.config.Fingerprint
		}
		if changes := fp.Changes(was); len(changes) > 0 {
			return &InputError{Problems: append([]string{fmt.Sprintf(
				"--resume %s: refused, the bench is not the one the run started with (resume needs the same fingerprint):", prev.run.ID)}, changes...)}
		}
		return nil
	}
	id := s.opts.RunID
	if id == "" {
		id = s.newID
	} else if _, err := s.opts.DB.Run(ctx, id); err == nil {
		return &InputError{Problems: []string{fmt.Sprintf("run %s is already recorded in %s; continue it with --resume %s", id, s.opts.DB.Path(), id)}}
	}
	s.run = store.Run{ID: id, Label: s.opts.Label, Kind: "run", Status: wfb.RunRunning,
		Fingerprint: fp.Sum(), Harness: s.opts.Harness}
	return nil
}

// fingerprint computes the sweep's fingerprint over the tasks and arms its
// selection uses before sharding (used holds "t/ID" and "a/ID"; see
// planCells).
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
		p := s.trees[t.ID]
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
		if !used["a/"+a.ID] {
			continue
		}
		f.Agents[a.ID] = s.agents[a.ID].version
		d, err := a.KitDigest()
		if err != nil {
			return f, fmt.Errorf("fingerprint: arm %s: %w", a.ID, err)
		}
		if d != "" {
			if f.Kits == nil {
				f.Kits = map[string]string{}
			}
			f.Kits[a.ID] = d
		}
	}
	return f, nil
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
		s.budget.charge(r) // the budget is the whole run's
		c, ok := byKey[bench.Cell{Task: r.Task, Arm: r.Arm, Rep: r.Rep}]
		if !ok {
			s.unplanned = append(s.unplanned, r)
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
