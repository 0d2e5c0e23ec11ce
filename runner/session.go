package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sort"
	"sync/atomic"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/proc"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// Recorder stores a row. *store.DB satisfies it.
type Recorder interface {
	InsertResult(ctx context.Context, r *store.Result) error
}

var _ Recorder = (*store.DB)(nil)

// Isolation is what the runner takes from a sandbox. *sandbox.Sandbox
// satisfies it.
type Isolation interface {
	Backend() string
	RequirePIDNamespace() bool
	// ArtifactDir is the directory the session may write outside its
	// workspace; the agent is granted it.
	ArtifactDir() string
	// Launch prepares one process start: the command prefix, the
	// credential, extra files, and the proof to run once it started.
	Launch(ctx context.Context) (*sandbox.Launch, error)
}

var _ Isolation = (*sandbox.Sandbox)(nil)

// SessionKey is what a Cell and the SessionSpec it becomes share: which
// attempt of which cell the session is (its row's identity), and which
// agent it runs, how, with what prompt and for how long.
type SessionKey struct {
	// Row identity.
	RunID, Task, Arm string
	Rep, Attempt     int
	RetryOf          string

	// The agent.
	Agent        string   // one of bench.Agents
	AgentBin     string   // the executable
	AgentArgs    []string // arguments before the adapter's flags ("mock", "agent" for the stand-in run through wfb)
	AgentVersion string
	Model        string
	MaxTurns     int // 0: the agent's default
	AllowedTools []string
	ExtraArgs    []string
	// Kit is the arm's MCP servers, skills, files, settings and expected
	// tools (see installKit).
	Kit bench.Kit

	Prompt  string
	Timeout time.Duration // 0: no timeout
	Limits  Limits        // the session's resource limits; zero fields: defaults
}

// newRow is the row of the session before anything ran, in the sandbox
// backend named.
func (k SessionKey) newRow(backend string) store.Result {
	return store.Result{
		RunID: k.RunID, AttemptID: store.NewID("att"), Task: k.Task, Arm: k.Arm,
		Rep: k.Rep, Attempt: max(k.Attempt, 1), RetryOf: k.RetryOf,
		Agent: k.Agent, AgentVersion: k.AgentVersion, Model: k.Model, Sandbox: backend,
		StartedAt: time.Now().UTC(), ProcessState: wfb.StateNotStarted,
	}
}

// SessionSpec describes one agent session and the row it becomes.
type SessionSpec struct {
	SessionKey

	OutputFormat string // "stream-json" (default) or "json"
	Permission   string // --permission-mode; empty: the adapter's default

	Workdir string
	// Env is the agent's WHOLE environment. Nothing of wfb's own environment
	// reaches the agent unless it is named here.
	Env map[string]string

	Grace time.Duration // SIGTERM → SIGKILL; default 5s

	// Sandbox supplies the command prefix and credentials; nil runs the
	// agent directly as wfb's own user (recorded as "none").
	Sandbox Isolation

	// Review, when set, makes this a review session: the workspace must not
	// change, and the artifact is parsed and scored.
	Review *ReviewSpec

	// MaxTranscriptBytes bounds the agent output kept in transcripts,
	// uncompressed; 0 is DefaultMaxTranscriptBytes.
	MaxTranscriptBytes int64

	// Boundary clears the workspace's write bits for the session and
	// restores their exact modes after: the host-unsafe way to keep a
	// workspace read-only (kernel backends bind it read-only instead).
	Boundary bool

	// Meter, when set, meters the session: the agent reaches its provider
	// through an attempt of this proxy (see beginMeter), and the row gets
	// the wire's requests and its cross-check. nil: not metered.
	Meter Meter
	// RequireWitness refuses a metered session whose agent reported billed
	// usage while no model request reached the meter (a session-error; see
	// unwitnessed). Without it such a row stays ok, its usage_verdict
	// unwitnessed.
	RequireWitness bool

	// Versions, when set, remembers agent versions across processes (the
	// results file): a binary already asked is not started a second time
	// to say its version. nil: asked once per binary per process.
	Versions VersionBook
}

// ReviewSpec configures a review session.
type ReviewSpec struct {
	// ArtifactPath is where the agent must write its review, OUTSIDE the
	// workspace, in a directory it can write.
	ArtifactPath string
}

// DefaultPath is the PATH an agent gets when the spec names none.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// RecordSession runs one session, writes its row with rec, and returns the
// row. Every outcome — success, failure, refusal — is recorded; the error is
// non-nil only when the row itself could not be written.
func RecordSession(ctx context.Context, rec Recorder, spec SessionSpec) (store.Result, error) {
	row := runSession(ctx, spec)
	if err := rec.InsertResult(ctx, &row); err != nil {
		return row, fmt.Errorf("record attempt %s: %w", row.AttemptID, err)
	}
	return row, nil
}

// runSession runs the session and returns its row, with every secret value
// the session was given scrubbed from it.
func runSession(ctx context.Context, spec SessionSpec) store.Result {
	row := runAgent(ctx, spec)
	if row.UsageSource == "" && row.InputTokens != nil {
		// Unmetered, or the wire saw no model request: the agent's word.
		row.UsageSource = wfb.UsageReported
	}
	// By VALUE and in every encoding (see store.Scrubber), from every text
	// field of the row the agent controls. Pattern-based redaction
	// (store.Redact) catches keys that look like keys; this catches a key
	// of any shape that the agent echoed (a proxy key, a token without a
	// NAME= in front of it, a session id or model name it made up).
	store.NewScrubber(sessionSecrets(spec)...).Result(&row)
	return row
}

// sessionSecrets are the values scrubbed from everything a session
// records — its row, its transcript, its requests on the wire: the
// environment's secrets by name, and the kit's servers' secrets whatever
// their names.
func sessionSecrets(spec SessionSpec) []string {
	return append(secretValues(spec.Env), kitSecrets(spec.Kit)...)
}

// secretScrubber is a Recorder that scrubs secrets by value from whatever
// it writes (*store.DB, and so the review recorder): RunCell gives it the
// agent's secrets before the session, so that an artifact, which the row
// does not carry, is scrubbed too.
type secretScrubber interface {
	ScrubSecrets(values ...string)
}

// runAgent runs the session and returns its row: the sandbox's launch, the
// agent's command, the process, and what it printed read strictly.
func runAgent(ctx context.Context, spec SessionSpec) (row store.Result) {
	backend := "none"
	if spec.Sandbox != nil {
		backend = spec.Sandbox.Backend()
	}
	row = spec.newRow(backend)
	launch, err := launchIn(ctx, spec.Sandbox)
	if err != nil {
		return failed(row, err)
	}
	defer launch.Close()
	// The agent's process runs under procCtx: a runaway agent (past its
	// request cap) is stopped through it, the way Ctrl-C stops it.
	procCtx, stopRunaway := context.WithCancel(ctx)
	defer stopRunaway()
	ad, err := agent.For(spec.Agent)
	if err != nil {
		return failed(row, stepFailed(wfb.KindInfraError, "%v", err))
	}
	var runaway atomic.Bool
	if spec.Meter != nil {
		m, err := beginMeter(&spec, ad, row.AttemptID, func() { runaway.Store(true); stopRunaway() })
		if err != nil {
			return failed(row, err)
		}
		if m != nil {
			// Deferred (row is the named result): the requests are filed
			// whatever happens below.
			defer endMeter(ctx, m, &row, spec.RequireWitness)
		}
	}
	ws, err := prepareWorkspace(spec)
	// Modes come back even if something below panics.
	defer ws.restoreModes()
	if err != nil {
		return failed(row, err)
	}
	if err := installKit(spec, ad); err != nil {
		return failed(row, stepFailed(wfb.KindInfraError, "install the arm's kit: %v", err))
	}
	cmd, err := ad.Command(agentSession(spec), ws.prompt)
	if err != nil {
		return failed(row, stepFailed(wfb.KindInfraError, "build the agent command: %v", err))
	}
	version := ""
	if p, ok := ad.Version(); ok {
		version = probeVersion(ctx, spec.AgentBin, sessionProbe(spec), p)
	}
	out := ad.Output(version)
	ps := agentProcess(ctx, spec, launch, cmd, ws.env, out)
	transcript := newTranscriptCapture(spec.MaxTranscriptBytes, sessionSecrets(spec))
	ps.Transcript = transcript
	pr := proc.Run(procCtx, ps)
	execFailure(&pr, launch)
	recordProcess(&row, pr)
	if pr.State != wfb.StateSpawnFailure {
		row.Transcript = transcript.finish(ws.prompt)
	}
	if runaway.Load() && ctx.Err() == nil {
		row.AddFailure(wfb.KindRunaway, fmt.Sprintf("the agent sent its provider more than its cap of %d requests (max_requests); wfb refused the rest and stopped the session", spec.Limits.orDefault().Requests))
	}
	interpret(&row, spec, pr, out)
	quietFailure(&row, pr)
	checkExpectations(&row, spec.Kit.ExpectTools, out.Tools().Used)
	if err := ws.restoreModes(); err != nil {
		row.AddFailure(wfb.KindInfraError, fmt.Sprintf("restore the workspace's modes: %v", err))
	}
	if spec.Review != nil {
		checkReview(&row, spec, ws.digestBefore)
	}
	return row
}

// stepFailure is why a session could not get as far as running its agent:
// the row's error kind and detail.
type stepFailure struct{ kind, detail string }

func (f *stepFailure) Error() string { return f.kind + ": " + f.detail }

func stepFailed(kind, format string, args ...any) *stepFailure {
	return &stepFailure{kind: kind, detail: fmt.Sprintf(format, args...)}
}

// failed marks the row failed with err's kind and detail (infra-error for
// an error that is not a *stepFailure).
func failed(row store.Result, err error) store.Result {
	f := &stepFailure{kind: wfb.KindInfraError, detail: err.Error()}
	errors.As(err, &f)
	row.OK, row.ErrorKind, row.ErrorDetail = false, f.kind, f.detail
	return row
}

// launchIn prepares the process start in the sandbox: the command prefix,
// the credential and the proof to run. Without a sandbox the launch is
// empty. A sandbox that must prove a PID namespace but has no command
// prefix to create one is refused here, before anything runs.
func launchIn(ctx context.Context, sb Isolation) (*sandbox.Launch, error) {
	if sb == nil {
		return &sandbox.Launch{}, nil
	}
	launch, err := sb.Launch(ctx)
	var refused *sandbox.RefusedError
	switch {
	case errors.As(err, &refused):
		return nil, stepFailed(wfb.KindSandboxRefused, "%s; nothing was run", refused.Reason)
	case err != nil:
		return nil, stepFailed(wfb.KindInfraError, "prepare the sandbox launch: %v", err)
	}
	if sb.RequirePIDNamespace() && len(launch.Prefix) == 0 {
		launch.Close()
		return nil, stepFailed(wfb.KindSandboxRefused,
			"a PID namespace is required but the %s backend runs the agent without a command prefix, so nothing creates one; nothing was run", sb.Backend())
	}
	return launch, nil
}

// sessionWorkspace is what a session does to its workspace and
// environment around the agent: a review's artifact path and digest, and
// the write boundary to take down after.
type sessionWorkspace struct {
	env          map[string]string
	prompt       string
	digestBefore string
	restore      func() error
}

// prepareWorkspace builds the agent's environment (the spec's, with a
// default PATH) and prompt; for a review it names the artifact path and
// takes the workspace's digest, and with a boundary it clears the
// workspace's write bits.
func prepareWorkspace(spec SessionSpec) (*sessionWorkspace, error) {
	ws := &sessionWorkspace{env: maps.Clone(spec.Env), prompt: spec.Prompt}
	if ws.env == nil {
		ws.env = map[string]string{}
	}
	if _, ok := ws.env["PATH"]; !ok {
		ws.env["PATH"] = DefaultPath
	}
	var err error
	if spec.Review != nil {
		ws.env[review.OutputEnv] = spec.Review.ArtifactPath
		ws.prompt += "\n\nWrite your review as JSON to " + spec.Review.ArtifactPath +
			" (schema_version 1, verdict, findings). Do not modify the workspace."
		// Taken before the boundary: modes are part of the digest.
		if ws.digestBefore, err = sandbox.Digest(spec.Workdir); err != nil {
			return ws, stepFailed(wfb.KindInfraError, "digest the workspace before the session: %v", err)
		}
	}
	if spec.Boundary {
		if ws.restore, err = sandbox.WorkspaceWriteBoundary(spec.Workdir); err != nil {
			return ws, stepFailed(wfb.KindInfraError, "apply the workspace write boundary: %v", err)
		}
	}
	return ws, nil
}

// restoreModes takes the write boundary down, once.
func (ws *sessionWorkspace) restoreModes() error {
	if ws == nil || ws.restore == nil {
		return nil
	}
	restore := ws.restore
	ws.restore = nil
	return restore()
}

// agentProcess is the process of the agent's command: behind the
// sandbox's prefix, in the workspace, with the environment built for it
// (plus what the adapter adds), its stdout read by the adapter's output.
func agentProcess(ctx context.Context, spec SessionSpec, launch *sandbox.Launch, cmd agent.Command, env map[string]string, out agent.Output) proc.Spec {
	for k, v := range cmd.Env {
		env[k] = v
	}
	return proc.Spec{
		Argv:         append(append([]string{}, launch.Prefix...), cmd.Argv...),
		Dir:          spec.Workdir,
		Env:          envList(env),
		Stdin:        cmd.Stdin,
		NoStdin:      cmd.NoStdin,
		Credential:   launch.Credential,
		ExtraFiles:   launch.ExtraFiles,
		Started:      func(pid int) error { return launch.Started(ctx, pid) },
		Timeout:      spec.Timeout,
		Grace:        spec.graceOrDefault(),
		OnStdoutLine: out.Line,
		Limits:       spec.Limits.proc(),
	}
}

// execFailure makes a sandbox that started but could not execute the agent
// (bwrap's "execvp ...: No such file or directory") the spawn failure it
// is, as the same exec failing outside a sandbox is: the agent never ran.
func execFailure(pr *proc.Result, launch *sandbox.Launch) {
	if pr.State != wfb.StateExited || pr.ExitCode == nil {
		return
	}
	if ee := launch.ExecFailure(int(*pr.ExitCode), pr.StdoutTail, pr.StderrTail); ee != nil {
		pr.State, pr.SpawnErr = wfb.StateSpawnFailure, ee
	}
}

// quietFailure names, in the detail of a failed session that printed
// nothing on stdout, the last line it printed on stderr: that is where a
// launcher's own failure is ("bwrap: Can't make symlink at …"), which the
// row otherwise told only as "the agent printed no result event". The line
// is the agent's (or the launcher's) text, stored as it is and shown with
// its controls made visible by every surface.
func quietFailure(row *store.Result, pr proc.Result) {
	if row.OK || pr.StdoutTail != "" || pr.State == wfb.StateSpawnFailure {
		return
	}
	tail := lastLine(pr.StderrTail)
	if tail == "" {
		return
	}
	row.AddDetail("its stderr ends: " + wfb.Clip(tail, 300))
}

// recordProcess copies how the process ran into the row.
func recordProcess(row *store.Result, pr proc.Result) {
	row.ProcessState = pr.State
	row.ExitCode = pr.ExitCode
	row.StdoutTail = pr.StdoutTail
	row.StderrTail = pr.StderrTail
	if pr.State != wfb.StateSpawnFailure && pr.State != wfb.StateNotStarted {
		ms := pr.Duration.Milliseconds()
		row.DurationMS = &ms
	}
}

// interpret turns what the process did and printed into the row's outcome
// and measurements.
func interpret(row *store.Result, spec SessionSpec, pr proc.Result, out agent.Output) {
	// The calls the output showed count whatever became of the process: a
	// session stopped at its timeout called its tools all the same.
	if pr.State != wfb.StateSpawnFailure {
		out.Tools().Record(row)
	}
	if !interpretProcess(row, spec, pr) {
		return
	}
	out.Interpret(row, agent.Process{ExitCode: pr.ExitCode, Exit: pr.ExitText(), MaxLine: proc.MaxLineBytes})
}

// interpretProcess records how the process ended. It returns false when the
// agent never produced output worth parsing (it did not start, was stopped,
// or timed out); the row then already says why.
func interpretProcess(row *store.Result, spec SessionSpec, pr proc.Result) bool {
	if pr.LimitHit != "" {
		row.AddFailure(wfb.KindSessionError, "resource limit: "+pr.LimitHit+"; wfb stopped the session")
		return false
	}
	switch pr.State {
	case wfb.StateSpawnFailure:
		row.AddFailure(wfb.KindSpawnFailure, fmt.Sprintf("start %s: %v", spec.AgentBin, pr.SpawnErr))
		return false
	case wfb.StateNotStarted:
		row.AddFailure(wfb.KindSandboxRefused, fmt.Sprintf("the agent was stopped before it ran: %v", pr.RefusedErr))
		return false
	case wfb.StateCancelled:
		detail := "the session was cancelled (SIGTERM to its process group)"
		if pr.Killed != "" {
			detail += "; " + killedText(pr, spec)
		}
		row.AddFailure(wfb.KindCancelled, detail)
		return false
	case wfb.StateTimeout, wfb.StateForcedKill:
		how := "it exited after SIGTERM"
		if pr.State == wfb.StateForcedKill {
			how = killedText(pr, spec)
		}
		row.AddFailure(wfb.KindTimeout, fmt.Sprintf("no result within the %s timeout; %s", spec.Timeout, how))
		return false
	}
	row.OK = true
	if pr.PipesHeld {
		row.AddFailure(wfb.KindSessionError, "a descendant of the agent left its process group and held its output open")
	}
	if pr.KillFailure != "" {
		row.AddFailure(wfb.KindInfraError, "descendants of the agent outlived it: "+pr.KillFailure)
	}
	return true
}

// killedText says why a stopped session was killed after its SIGTERM.
func killedText(pr proc.Result, spec SessionSpec) string {
	if pr.Killed == proc.KilledInHurry {
		return "it was killed at once at a second interrupt"
	}
	return fmt.Sprintf("it ignored SIGTERM and was killed %s later", spec.graceOrDefault())
}

func (spec SessionSpec) graceOrDefault() time.Duration {
	if spec.Grace > 0 {
		return spec.Grace
	}
	return 5 * time.Second
}

// checkReview holds a review session to its contract: the workspace did not
// move, and the artifact was written and is valid.
func checkReview(row *store.Result, spec SessionSpec, digestBefore string) {
	after, err := sandbox.Digest(spec.Workdir)
	switch {
	case err != nil:
		row.AddFailure(wfb.KindInfraError, fmt.Sprintf("digest the workspace after the session: %v", err))
	case after != digestBefore:
		// The boundary failed: this outranks whatever else went wrong.
		prev := row.ErrorKind
		row.OK, row.ErrorKind = false, wfb.KindWorkspaceModified
		detail := "the workspace changed during a review session (digest before " + short(digestBefore) + ", after " + short(after) + ")"
		if prev != "" {
			detail += "; also " + prev + ": " + row.ErrorDetail
		}
		row.ErrorDetail = detail
	}
	if !row.OK {
		return // a failed session's missing artifact is a consequence, not a cause
	}
	rv, err := review.ParseReviewOutput(spec.Review.ArtifactPath)
	var invalid *review.InvalidError
	switch {
	case errors.Is(err, review.ErrArtifactMissing):
		row.AddFailure(wfb.KindArtifactMissing, "the agent never wrote "+spec.Review.ArtifactPath)
	case errors.As(err, &invalid):
		row.AddFailure(wfb.KindArtifactInvalid, invalid.Error())
	case err != nil:
		row.AddFailure(wfb.KindArtifactInvalid, err.Error())
	default:
		row.Verdict = rv.Verdict
		n := int64(len(rv.Findings))
		row.FindingsCount = &n
	}
}

func short(digest string) string { return wfb.Clip(digest, 12) }

// envList renders the environment sorted, so the command is reproducible.
func envList(env map[string]string) []string {
	kv := make([]string, 0, len(env))
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return kv
}

// StandInAgent returns the command that runs wfb's stand-in agent: this
// executable with "mock agent".
func StandInAgent() (bin string, args []string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("locate the wfb executable for the stand-in agent: %w", err)
	}
	return self, []string{"mock", "agent"}, nil
}
