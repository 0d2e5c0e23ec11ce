package agent

import "github.com/wfbench/wfb"

// PriceTableVersion names the contents of Prices. Change it with any row
// (a new model, a new price, a new date read): a stored cost is as good as
// the table that priced it, and docs/metering.md's "Prices" section says which
// version it documents.
const PriceTableVersion = "2026-12-01"

// The vendors' pricing pages the rows were read from.
const (
	AnthropicPricingURL = "https://platform.claude.com/docs/en/about-claude/pricing"
	OpenAIPricingURL    = "https://openai.com/api/pricing"
	GooglePricingURL    = "https://ai.google.dev/gemini-api/docs/pricing"
)

// anthropic and openai are rows of the two vendors, read on the dates
// given.
func anthropic(input, cacheWrite, cacheRead, output float64, longPromptOver int64) wfb.Price {
	return wfb.Price{Input: input, CacheRead: cacheRead, CacheWrite: cacheWrite, Output: output,
		LongPromptOver: longPromptOver, Source: AnthropicPricingURL, Read: "2026-12-01"}
}

func openai(input, cachedInput, output float64) wfb.Price {
	return wfb.Price{Input: input, CacheRead: cachedInput, Output: output, Source: OpenAIPricingURL, Read: "2025-11"}
}

// google is a row of Google's Gemini API, paid tier, text tokens: cached
// input is a context-cache hit (its storage is not counted), thoughts bill
// as output.
func google(input, cachedInput, output float64, longPromptOver int64) wfb.Price {
	return wfb.Price{Input: input, CacheRead: cachedInput, Output: output,
		LongPromptOver: longPromptOver, Source: GooglePricingURL, Read: "2025-11"}
}

// Prices maps exact model names — the names the provider's responses carry,
// dated snapshots and the aliases agents request — to list prices
// (standard tier, text tokens; Anthropic's cache writes at its 5-minute
// rate). It
// prices the wire's usage of every metered attempt (metered_cost_usd), and
// derives a cost for agents that report none (Codex, Gemini CLI). A name not listed
// gets no price — never a guess from a similar name — and its cost is NULL.
// Models whose context reaches past 200K tokens carry LongPromptOver, as
// the vendor bills (or may bill) longer prompts at another rate.
//
// Anthropic: base input, 5-minute cache writes, cache hits, output, from
// the model pricing table. OpenAI: input, cached input, output (the rows
// as first copied; re-read them before trusting a new model).
var Prices = map[string]wfb.Price{
	// Claude Sonnet 5 / 4.6 / 4.5 / 4: 1M-token context.
	"claude-sonnet-5":            anthropic(2, 2.50, 0.20, 10, 200_000),
	"claude-sonnet-4-6":          anthropic(3, 3.75, 0.30, 15, 200_000),
	"claude-sonnet-4-5":          anthropic(3, 3.75, 0.30, 15, 200_000),
	"claude-sonnet-4-5-20250929": anthropic(3, 3.75, 0.30, 15, 200_000),
	"claude-sonnet-4-0":          anthropic(3, 3.75, 0.30, 15, 200_000),
	"claude-sonnet-4-20250514":   anthropic(3, 3.75, 0.30, 15, 200_000),
	"claude-opus-4-6":            anthropic(5, 6.25, 0.50, 25, 200_000),
	"claude-opus-4-5":            anthropic(5, 6.25, 0.50, 25, 0),
	"claude-opus-4-5-20251101":   anthropic(5, 6.25, 0.50, 25, 0),
	"claude-opus-4-1":            anthropic(15, 18.75, 1.50, 75, 0),
	"claude-opus-4-1-20250805":   anthropic(15, 18.75, 1.50, 75, 0),
	"claude-opus-4-0":            anthropic(15, 18.75, 1.50, 75, 0),
	"claude-opus-4-20250514":     anthropic(15, 18.75, 1.50, 75, 0),
	"claude-haiku-4-5":           anthropic(1, 1.25, 0.10, 5, 0),
	"claude-haiku-4-5-20251001":  anthropic(1, 1.25, 0.10, 5, 0),
	"claude-3-5-haiku-20241022":  anthropic(0.80, 1, 0.08, 4, 0),
	"claude-3-haiku-20240307":    anthropic(0.25, 0.30, 0.03, 1.25, 0),

	"gpt-5":              openai(1.25, 0.125, 10),
	"gpt-5-codex":        openai(1.25, 0.125, 10),
	"gpt-5.1":            openai(1.25, 0.125, 10),
	"gpt-5.1-codex":      openai(1.25, 0.125, 10),
	"gpt-5.1-codex-mini": openai(0.25, 0.025, 2),
	"gpt-5-mini":         openai(0.25, 0.025, 2),
	"gpt-5-nano":         openai(0.05, 0.005, 0.40),
	"gpt-4.1":            openai(2, 0.50, 8),
	"gpt-4.1-mini":       openai(0.40, 0.10, 1.60),
	"o3":                 openai(2, 0.50, 8),
	"o4-mini":            openai(1.10, 0.275, 4.40),

	// Gemini 2.5 Pro bills prompts over 200K tokens at another rate.
	"gemini-2.5-pro":        google(1.25, 0.125, 10, 200_000),
	"gemini-2.5-flash":      google(0.30, 0.03, 2.50, 0),
	"gemini-2.5-flash-lite": google(0.10, 0.01, 0.40, 0),
}

// PriceFor returns the list price of an exactly named model.
func PriceFor(model string) (wfb.Price, bool) {
	p, ok := Prices[model]
	return p, ok
}
