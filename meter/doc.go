// Package meter is wfb's metering proxy: the provider's wire as a second
// witness of usage, beside what the agent CLI reports.
//
// An agent CLI rewrites what its provider sent before wfb sees it (Claude
// Code zero-fills a missing cache field, turns -5 into 0 and true into 1,
// prints zeros for a 529). So every attempt gets its own base URL on one
// loopback listener, http://127.0.0.1:P/m/<token>, with a token that is
// unguessable and unique to the attempt: attribution never trusts anything
// the agent sends. A request under it is forwarded to the attempt's
// upstream (wfb's mock or the real API, http or https, path prefix kept),
// SSE passing through unbuffered, flushed as each read arrives; the
// response is read as it passes for the provider's NATIVE usage, with that
// protocol's arithmetic (Anthropic Messages, OpenAI Responses, OpenAI Chat
// Completions, Gemini generateContent; see the protocol types), mapped to
// wfb's one meaning (Usage). An absent figure stays absent and a nonsense
// one is kept as the wire wrote it, flagged — never coerced. A request
// whose path names no live attempt is answered 404 and recorded as
// unattributed.
//
// The proxy's own failures never hang an agent: an unreachable upstream
// (refused, DNS, connect timeout, TLS) is a 502 in the protocol's error
// shape, a response that breaks off drops the agent's connection too, and
// an agent that goes away cancels its upstream request. Request bodies are
// bounded (413); responses are never held whole on the way through.
//
// Every exchange is kept: request and response bodies (a stream as
// received), scrubbed of the attempt's secrets in every wire form (as
// given, URL-encoded, JSON-escaped), then compressed with zstd and bound to
// a SHA-256 of the kept bytes; credential headers are dropped, never kept,
// and the rest bounded (MaxKeptHeaderBytes). Bodies are bounded per attempt
// (64 MiB by default), truncation recorded. A gzip-encoded response is
// relayed encoded, as sent, and decoded for the meter's own reading up to
// MaxInflatedBytes.
//
// meter is a leaf: it imports nothing of wfb's. It hands records to a Sink
// and returns them from Attempt.End; the caller converts them to store
// rows. The use for one session:
//
//	p, _ := meter.Start(meter.Options{Upstream: providerURL, Sink: unattributedWriter, Redact: wfb.Redact})
//	a, _ := p.Begin(meter.AttemptOptions{ID: attemptID, Secrets: []string{apiKey}})
//	env["ANTHROPIC_BASE_URL"] = a.BaseURL() // run the session against it
//	log := a.End(ctx)                     // its records, in order, and their Summary
//	check := meter.CrossCheck(reported, log.Summary)
//
// Summarize sums what was billed (a 529 then a success counts the success
// once; a figure a billed request lacked makes that sum not measured, with
// the request named); CrossCheck compares that with the agent's report.
package meter
