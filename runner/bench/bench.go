package bench

import (
	"maps"
	"slices"
	"time"

	"github.com/wfbench/wfb/runner/review"
)

// MaxRuns and MaxWorkers bound a bench's (and a run's flags') repetitions
// and parallel cells.
const (
	MaxRuns    = 10000
	MaxWorkers = 256
)

// The ranges of the per-session resource limits a bench (or a flag) may
// set: pids_max processes, memory_max_mib MiB.
const (
	MinPidsMax      = 8
	MaxPidsMax      = 1 << 22
	MinMemoryMaxMiB = 64
	MaxMemoryMaxMiB = 1 << 24
	MinMaxRequests  = 1
	MaxMaxRequests  = 1 << 24
)

// Bench is an experiment: tasks × arms × repetitions, with the defaults
// every cell shares. Load reads one from a YAML file; examples/bench.yaml
// documents every field.
type Bench struct {
	// Path is the bench file as given; Dir is its directory, absolute:
	// every relative path in the file is resolved against it.
	Path, Dir string
	// Digest is the sha256 (hex) of the file's bytes.
	Digest string

	Description         string
	Runs                int           // repetitions of each (task, arm); default 1
	Timeout             time.Duration // per session; default 10m
	Sandbox             string        // default auto: the strongest backend whose preflight passes
	RequirePIDNamespace bool
	// RequireWitness refuses every session whose agent reported usage the
	// metering proxy did not witness (no model request reached it): a
	// session-error instead of a row with usage_verdict unwitnessed.
	RequireWitness bool
	Workers        int // cells at once; default 1
	// PidsMax and MemoryMaxMiB bound each session's processes and memory;
	// 0: the defaults (runner/proc.DefaultPidsMax, DefaultMemoryMax).
	PidsMax, MemoryMaxMiB int
	// MaxRequests caps the requests each metered session may send its
	// provider (max_requests); 0: runner.DefaultRequestsMax.
	MaxRequests int
	// Provider is every cell's whose arm and task name none; zero (and
	// then never used) where every arm or every task names its own.
	Provider Provider
	// Retries maps an error kind to how many times a cell is retried after
	// an attempt that failed with it.
	Retries map[string]int
	// RetryBudget caps the retries of a whole run; -1 means no cap.
	RetryBudget int
	// Breaker is how many consecutive systemic failures stop the run; 0
	// disables it. Default DefaultBreaker.
	Breaker int
	// Budget caps the run's cost in US dollars: no new cell starts once
	// the cost recorded so far reaches it. 0: no cap.
	Budget float64

	Tasks []Task
	Arms  []Arm
}

// Provider says where sessions send model requests: a mock script served
// locally (a dry run) or a real base URL whose key is read from the
// environment, never from the bench file.
type Provider struct {
	Mock      string // absolute path of the mock script; empty for a real provider
	BaseURL   string
	APIKeyEnv string // default ANTHROPIC_API_KEY
}

// IsMock reports whether the provider is a mock script.
func (p Provider) IsMock() bool { return p.Mock != "" }

// Task is one piece of work every arm is measured on.
type Task struct {
	ID        string
	Class     string
	Workspace Workspace
	Prompt    string
	// Setup runs in the cell's workspace before the agent (as wfb's own
	// user, with /bin/sh -c); a failure is an infra-error row.
	Setup string
	// Verify runs in the cell's workspace after the agent exited, never
	// while it runs; non-zero marks the row verify-failed.
	Verify string
	Labels []review.Label
	// Verdict is the review verdict the task expects; "" lets the labels
	// decide (see review.ExpectedVerdict).
	Verdict   string
	Expensive bool
	Review    bool
	Timeout   time.Duration // 0: the bench's
	Provider  *Provider     // nil: the bench's
}

// Workspace is a task's starting tree: a local directory, or a git
// repository at a pinned ref. Every cell gets a fresh copy of its own.
type Workspace struct {
	Dir      string // absolute
	Git, Ref string // Git is a URL or an absolute path
}

func (w Workspace) String() string {
	if w.Git != "" {
		return w.Git + "@" + w.Ref
	}
	return w.Dir
}

// Arm is one workflow variant.
type Arm struct {
	ID           string
	Agent        string // one of Agents
	AgentBin     string // the executable; default: wfb itself for stand-in, else the agent's name on PATH
	Model        string
	Flags        []string
	PromptPrefix string
	PromptSuffix string
	AllowedTools []string
	MaxTurns     int
	// RequireWitness is the bench's RequireWitness for this arm alone.
	RequireWitness bool
	Env            []EnvVar
	Provider       *Provider // nil: the task's, else the bench's
	// Kit is the arm's MCP servers, skills, files, settings and expected
	// tools.
	Kit
}

// EnvVar is one variable an arm's agent gets. Its value comes from wfb's
// environment (FromEnv) or, for settings that are not secrets, from the
// file (Value, with Literal set).
type EnvVar struct {
	Name    string
	FromEnv string
	Value   string
	Literal bool
}

// Agents an arm may name. The stand-in is wfb's own scripted agent
// (`wfb mock agent`), which has Claude Code's interface; Codex is OpenAI's
// Codex CLI (npm @openai/codex), run as `codex exec --json`; opencode (npm
// opencode-ai) and Qwen Code (npm @qwen-code/qwen-code) speak OpenAI's
// Chat Completions.
const (
	AgentStandIn  = "stand-in"
	AgentClaude   = "claude"
	AgentCodex    = "codex"
	AgentGemini   = "gemini"
	AgentOpencode = "opencode"
	AgentQwen     = "qwen"
)

// Agents are the agents an arm may name, in the order messages list them.
var Agents = []string{AgentStandIn, AgentClaude, AgentCodex, AgentGemini, AgentOpencode, AgentQwen}

// Defaults of a bench file.
const (
	DefaultTimeout = 10 * time.Minute
	DefaultBreaker = 5
	DefaultKeyEnv  = "ANTHROPIC_API_KEY"
)

// ProviderFor returns the provider of a cell: the arm's, else the task's,
// else the bench's.
func (b *Bench) ProviderFor(t Task, a Arm) Provider {
	switch {
	case a.Provider != nil:
		return *a.Provider
	case t.Provider != nil:
		return *t.Provider
	}
	return b.Provider
}

// TimeoutFor returns a task's session timeout.
func (b *Bench) TimeoutFor(t Task) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return b.Timeout
}

// MockScripts lists the absolute paths of every mock script the bench names,
// sorted, each once.
func (b *Bench) MockScripts() []string {
	set := map[string]bool{}
	add := func(p *Provider) {
		if p != nil && p.Mock != "" {
			set[p.Mock] = true
		}
	}
	add(&b.Provider)
	for i := range b.Tasks {
		add(b.Tasks[i].Provider)
	}
	for i := range b.Arms {
		add(b.Arms[i].Provider)
	}
	return slices.Sorted(maps.Keys(set))
}

// Task returns the task with the given id.
func (b *Bench) Task(id string) (Task, bool) {
	for _, t := range b.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

// Arm returns the arm with the given id.
func (b *Bench) Arm(id string) (Arm, bool) {
	for _, a := range b.Arms {
		if a.ID == id {
			return a, true
		}
	}
	return Arm{}, false
}
