package runner

import (
	"context"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Meter is the metering proxy as the runner uses it: the wire between an
// agent and its provider as a second witness of usage. Each attempt gets a
// base URL of its own on it, and, at its end, what the wire showed. The
// sessions of a sweep share one Meter. cmd/wfb passes the real proxy
// (package meter, through runner/meterstore); the runner knows it only
// by this interface.
type Meter interface {
	// Begin starts metering one attempt.
	Begin(MeterOptions) (MeteredAttempt, error)
	// Close stops the proxy.
	Close() error
}

// MeterOptions say what to meter of one attempt.
type MeterOptions struct {
	// ID is the attempt's id: its requests are filed under it.
	ID string
	// Upstream is the provider base URL the agent would call.
	Upstream string
	// Secrets are scrubbed from everything the meter keeps.
	Secrets []string
	// MaxRequests caps the attempt's requests: past it the meter refuses
	// each, and calls OnCap once.
	MaxRequests int
	OnCap       func()
}

// MeteredAttempt is one attempt being metered.
type MeteredAttempt interface {
	// BaseURL is the attempt's base URL, given to the agent in place of
	// the upstream's.
	BaseURL() string
	// End stops metering the attempt, giving requests in flight until ctx
	// ends, and returns what the wire showed, its usage checked against
	// what the agent reported.
	End(ctx context.Context, agent ReportedUsage) Wire
}

// ReportedUsage is the agent's usage as the row holds it (in the token
// columns' semantics); nil is a figure it did not report, or one that was
// refused.
type ReportedUsage struct {
	Input, Output, CacheRead, CacheCreation *int64
}

// Wire is what the meter saw of one attempt.
type Wire struct {
	// Requests are the attempt's requests as the results file keeps them,
	// in order, filed with the attempt's row.
	Requests []store.MeteredRequest
	// Models counts the model requests among them, Billed those the
	// provider answered with usage that counts.
	Models, Billed int
	// ProviderFailures name the requests the provider failed in a way only
	// the meter saw — unreachable, failing, a response cut off — one line
	// each: "request 2 (POST /v1/messages): upstream-unreachable: ...".
	ProviderFailures []string
	// NotBilled says why no model request was billed (Billed is 0).
	NotBilled string
	// Input, Output, CacheRead and CacheCreation are the billed usage
	// summed, in the token columns' semantics; nil when a figure is not
	// measured or not reported.
	Input, Output, CacheRead, CacheCreation *int64
	// Check is the agent's usage checked against the wire's (when Billed
	// is above 0).
	Check UsageCheck
	// Cost is what the billed requests cost at the price table's list
	// prices; nil, and CostWhy says why, when any of them cannot be priced.
	Cost    *float64
	CostWhy string
}

// UsageCheck is the cross-check of the two witnesses of an attempt's
// usage.
type UsageCheck struct {
	// Verdict is wfb.VerdictAgree, VerdictDisagree or VerdictRefused.
	Verdict wfb.Verdict
	// Text is the verdict and, for each figure not in agreement, both
	// values: the row's usage_check.
	Text string
	// Refused are the figures the wire lacked or carried as nonsense.
	Refused []RefusedFigure
}

// RefusedFigure is one usage figure the wire refused.
type RefusedFigure struct {
	Column string // its usage column, e.g. cache_read_input_tokens
	Why    string
	// Wire is the nonsense the wire carried; "" when the figure was
	// absent.
	Wire  string
	Agent *int64 // what the agent reported; nil when it reported none
}
