package runner

// Price is a model's list price in US dollars per million tokens, by token
// bucket. Cached input is what a cache hit costs; CacheWrite is what writing
// the cache costs (Anthropic bills it, OpenAI does not).
type Price struct {
	Input, CachedInput, CacheWrite, Output float64
}

// Cost prices a usage in the results columns' semantics: uncached input,
// cache reads, cache writes and output are disjoint buckets, so nothing is
// counted twice. Reasoning tokens are part of output and billed as output.
func (p Price) Cost(uncachedInput, cacheRead, cacheWrite, output int64) float64 {
	return (float64(uncachedInput)*p.Input +
		float64(cacheRead)*p.CachedInput +
		float64(cacheWrite)*p.CacheWrite +
		float64(output)*p.Output) / 1e6
}

// PricesAsOf is when Prices was copied from the vendors' published price
// lists (https://openai.com/api/pricing, standard tier, text tokens;
// https://ai.google.dev/gemini-api/docs/pricing, paid tier, text tokens,
// prompts up to 200k tokens: a request with a longer prompt costs more than
// derived, and the context cache's storage is not counted).
// Prices change: a derived cost is as good as this table, which is why rows
// say cost_source "derived" rather than "reported".
const PricesAsOf = "2025-11"

// Prices maps exact model names to list prices; it derives cost for agents
// that report none (Codex, Gemini CLI). A name not listed gets no price — never a guess
// from a similar name — and its cost is NULL. Claude Code reports its own
// cost, so Anthropic models are not needed here.
var Prices = map[string]Price{
	"gpt-5":              {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-codex":        {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.1":            {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.1-codex":      {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.1-codex-mini": {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5-mini":         {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5-nano":         {Input: 0.05, CachedInput: 0.005, Output: 0.40},
	"gpt-4.1":            {Input: 2, CachedInput: 0.50, Output: 8},
	"gpt-4.1-mini":       {Input: 0.40, CachedInput: 0.10, Output: 1.60},
	"o3":                 {Input: 2, CachedInput: 0.50, Output: 8},
	"o4-mini":            {Input: 1.10, CachedInput: 0.275, Output: 4.40},
	// Gemini: cached input is a context-cache hit, thoughts bill as output.
	"gemini-2.5-pro":        {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gemini-2.5-flash":      {Input: 0.30, CachedInput: 0.03, Output: 2.50},
	"gemini-2.5-flash-lite": {Input: 0.10, CachedInput: 0.01, Output: 0.40},
}

// PriceFor returns the list price of an exactly named model.
func PriceFor(model string) (Price, bool) {
	p, ok := Prices[model]
	return p, ok
}
