package wfb

// Usage sources recorded in results.usage_source: which witness of an
// attempt's usage the reports use.
const (
	// UsageMetered: the provider's wire, as the metering proxy read it
	// (results.metered_*).
	UsageMetered = "metered"
	// UsageReported: the agent's own report (results.input_tokens and the
	// rest), when the session was not metered or the wire saw no model
	// request.
	UsageReported = "reported"
)

// Usage semantics: how a usage report's token fields relate.
const (
	// SemanticsAnthropic: input is uncached input; cache reads and writes
	// add to it. The results token columns always hold this semantics.
	SemanticsAnthropic = "anthropic"
	// SemanticsOpenAI: cached tokens are a subset of input; cache writes
	// are not reported.
	SemanticsOpenAI = "openai"
	// SemanticsGemini: cached content tokens are a subset of the prompt
	// (proto3 omits a zero count).
	SemanticsGemini = "gemini"
)
