package store

import (
	"time"

	"github.com/wfbench/wfb"
)

// Run is one wfb invocation that records attempts: a `wfb run`, or a single
// `wfb session` (which gets a run of its own).
type Run struct {
	ID          string
	Label       string
	Kind        string // "run" or "session"
	StartedAt   time.Time
	FinishedAt  *time.Time // nil while running or when the process died
	Status      string
	Fingerprint string // bench fingerprint; empty for a lone session
	Harness     string // wfb version that wrote the run
	Config      string // JSON describing how the run was invoked (redacted)
}

// Result is one attempt of one cell: the row wfb writes whatever happened.
//
// Pointer fields are nullable: nil is stored as NULL and means "not
// measured"; a non-nil zero is a measured zero.
type Result struct {
	RunID     string
	AttemptID string
	Task      string
	Arm       string
	Rep       int // repetition index, from 0
	Attempt   int // 1 for the first try of a cell; retries count up
	RetryOf   string

	Agent        string
	AgentVersion string
	Model        string
	Sandbox      string

	StartedAt  time.Time
	DurationMS *int64 // wfb's wall clock, spawn to exit
	// AgentDurationMS is the agent's own account (its result event's
	// duration_ms); nil when it reported none or nonsense.
	AgentDurationMS *int64

	OK          bool
	ErrorKind   string // empty when OK; one of the ErrorKind vocabulary otherwise
	ErrorDetail string

	ProcessState string // exited, timeout, forced-kill, spawn-failure, cancelled, not-started
	ExitCode     *int64

	InputTokens              *int64
	OutputTokens             *int64
	CacheReadInputTokens     *int64
	CacheCreationInputTokens *int64
	CostUSD                  *float64
	CostSource               string // "reported", "derived" or empty when cost is NULL
	NumTurns                 *int64
	SessionID                string

	Verdict       string
	FindingsCount *int64

	// UsageSemantics says how the token columns relate (migration 0003):
	// "anthropic" — input_tokens is uncached input and the cache columns
	// ADD to it; "openai" — the agent reported cached tokens as a SUBSET of
	// its input, and wfb stored input_tokens = reported input − cached,
	// cache_read_input_tokens = cached, cache_creation_input_tokens NULL
	// (not reported). Empty when no usage was recorded. Either way
	// input_tokens + cache_read + cache_creation is the whole prompt.
	UsageSemantics string
	// ReportedInputTokens and ReportedCachedInputTokens are the agent's
	// own figures before normalisation (cached: OpenAI semantics only).
	ReportedInputTokens       *int64
	ReportedCachedInputTokens *int64
	// ReasoningOutputTokens are reasoning tokens the agent reported; they
	// are part of OutputTokens, not added to it.
	ReasoningOutputTokens *int64
	// APIRetries counts the provider retries the agent reported (Claude
	// Code's stream-json api_retry events, Codex's "Reconnecting" errors);
	// NULL when its output format does not show them.
	APIRetries *int64
	// PermissionDenials counts tool calls the agent's permission policy
	// refused; NULL when the agent does not report them.
	PermissionDenials *int64
	// ModelUsage is the agent's per-model usage (Claude Code's modelUsage),
	// stored in model_usage, one row per model.
	ModelUsage []ModelUsage
	// ToolCalls counts the tool calls the agent's output showed; nil: not
	// measured. ToolUses splits them by tool name (tool_uses, migration
	// 0011), in name order; their calls add up to ToolCalls.
	ToolCalls *int64
	ToolUses  []ToolUse

	// The wire's witness (migration 0006): the sums over the attempt's
	// billed requests as the metering proxy read them, in the token
	// columns' semantics; nil when not measured.
	MeteredInputTokens              *int64
	MeteredOutputTokens             *int64
	MeteredCacheReadInputTokens     *int64
	MeteredCacheCreationInputTokens *int64
	// UsageSource says which witness reports use: wfb.UsageMetered,
	// wfb.UsageReported, or "" when neither is a measurement.
	UsageSource string
	// UsageCheck is the cross-check's verdict: "" not checked, "agree", or
	// the verdict with each field in question and both its values.
	UsageCheck string
	// UsageVerdict is the check's typed outcome (results.usage_verdict),
	// set exactly when UsageCheck is; reports count by it.
	UsageVerdict wfb.Verdict
	// MeteredCostUSD is the wire's usage priced with wfb's price table; nil
	// when not measured or the model is not priced. CostCheck compares it
	// with CostUSD: "" not checked, "agree", or both values.
	MeteredCostUSD *float64
	CostCheck      string
	// CostVerdict is the cost check's typed outcome (results.cost_verdict),
	// set exactly when CostCheck is.
	CostVerdict wfb.Verdict
	// Requests are the attempt's metered requests, written in the same
	// transaction as the row (their AttemptID is the row's). Results does
	// not read them back: see DB.Requests.
	Requests []MeteredRequest

	// Evidence, redacted before it is stored.
	ResultEvent string // the agent's final result event, raw JSON
	StdoutTail  string
	StderrTail  string

	// Transcript, when set, is the agent's whole output, stored in
	// transcripts; nil: no process ran, nothing was captured.
	Transcript *Transcript
}

// ToolUse is how many times an attempt called one tool: a built-in tool
// as the agent names it, an MCP tool as mcp__SERVER__TOOL, a skill as
// skill:NAME.
type ToolUse struct {
	Tool  string
	Calls int64
}

// MaxToolNameBytes bounds a tool name as stored: the agent controls it.
const MaxToolNameBytes = 200

// ModelUsage is one model's share of an attempt's usage, as the agent
// reported it (Anthropic semantics: the cache fields add to input). Nil is
// NULL: not reported.
type ModelUsage struct {
	Model                    string
	InputTokens              *int64
	OutputTokens             *int64
	CacheReadInputTokens     *int64
	CacheCreationInputTokens *int64
	CostUSD                  *float64
}
