package meter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// The meter's own error types (Record.ProxyError): what went wrong between
// the agent and the provider, as opposed to an error the provider answered
// (Record.ErrorType).
const (
	// ErrUpstreamUnreachable: no connection to the upstream (refused, DNS,
	// connect timeout, TLS handshake). The agent got a 502.
	ErrUpstreamUnreachable = "upstream-unreachable"
	// ErrUpstreamFailed: the connection broke before a response came. The
	// agent got a 502.
	ErrUpstreamFailed = "upstream-failed"
	// ErrUpstreamCut: the response broke off mid-way; the agent's
	// connection was dropped too, so it cannot take the part for the whole.
	ErrUpstreamCut = "upstream-cut"
	// ErrClientGone: the agent went away before its answer was complete.
	ErrClientGone = "client-gone"
	// ErrAttemptEnded: the attempt was ended (End's context ran out) with
	// the request still in flight; it was cancelled.
	ErrAttemptEnded = "attempt-ended"
	// ErrRequestTooLarge: the request body exceeded the limit; the agent
	// got a 413 and nothing was forwarded.
	ErrRequestTooLarge = "request-too-large"
	// ErrRequestUnreadable: the request body could not be read.
	ErrRequestUnreadable = "request-unreadable"
	// ErrUnattributed: the path named no live attempt; the agent got a
	// 404 and nothing was forwarded.
	ErrUnattributed = "unattributed"
	// ErrRequestCap: the attempt had sent as many requests as its cap
	// allows (AttemptOptions.MaxRequests); the agent got a 429 and nothing
	// was forwarded.
	ErrRequestCap = "request-cap"
)

// Record is one metered request.
type Record struct {
	// ID is unique per proxy (and, being random, across files): the
	// store's key for the request.
	ID string
	// AttemptID is the attempt the request's path named; "" when it named
	// none (unattributed).
	AttemptID string
	// Seq numbers the attempt's requests from 1 in arrival order (the
	// proxy's unattributed requests are numbered apart).
	Seq int
	// Protocol is a Protocol* constant for a model request, "" for
	// anything else (a HEAD probe, count_tokens).
	Protocol string
	Method   string
	// Path is the request's path after the attempt prefix, with its query,
	// scrubbed (credential-named query values replaced).
	Path           string
	RequestedModel string // the request body's "model" (Gemini: the path's)
	ResponseModel  string // the model the response names
	// Status is what the agent was answered: the provider's status, or the
	// meter's own (502, 404, 413); 0 when it was answered nothing.
	Status    int
	StartedAt time.Time // when the request arrived
	// Latency runs from arrival to the last byte relayed to the agent.
	Latency time.Duration
	// TTFB runs from arrival to the first byte of the response body from
	// the provider; nil when none came.
	TTFB          *time.Duration
	Streamed      bool  // the response was an SSE stream
	RequestBytes  int64 // as received (the body, not the headers)
	ResponseBytes int64 // as relayed to the agent
	// ErrorType is the provider's error type (e.g. "overloaded_error"),
	// from an error body or event; ProxyError is the meter's (Err*).
	ErrorType   string
	ProxyError  string
	ErrorDetail string // the explanation that came with either, scrubbed
	// RetryOf is the Seq of an earlier request of the attempt with the
	// same method, path and body (this is a re-send of it); 0 if none.
	RetryOf int
	// FallbackOf is the Seq of an earlier streaming request whose body is
	// this non-streaming one's but for the stream setting; 0 if none.
	FallbackOf int
	// Billed says the response is a model answer whose usage counts: a 2xx
	// that reached the protocol's final usage report. A failed request
	// (an error status, an error event, a cut stream) is not billed, and
	// its usage, if the wire showed any, is recorded but not summed.
	Billed bool
	Usage  Usage
	// Surcharges name what the response says was billed beyond its token
	// counts at the model's standard rates (1-hour cache writes, server
	// tool calls, another service tier): a table of token prices cannot
	// price such a request. Not stored; read by whoever prices the wire.
	Surcharges []string
	Exchange   Exchange

	// Request body analysis, for the retry and fallback markers.
	bodyDigest  string
	canonDigest string
	streamAsked bool
}

// requestFacts is what a request body says about the request.
type requestFacts struct {
	model       string
	streamAsked bool
	digest      string // of method, path and body
	canon       string // of method, path and body without its stream setting
}

// analyseRequest reads the model and the stream setting from a JSON body
// (Gemini: from the path) and digests the request for the markers. The
// canonical form keeps each top-level value as written: a client that
// re-sends a request serialises it the same way.
func analyseRequest(method, path string, body []byte) requestFacts {
	sum := sha256.Sum256(append([]byte(method+" "+path+"\n"), body...))
	f := requestFacts{digest: hex.EncodeToString(sum[:])}
	canonPath := path
	if i := strings.Index(path, ":streamGenerateContent"); i >= 0 {
		f.streamAsked = true
		canonPath = path[:i] + ":generateContent"
	}
	if i := strings.LastIndex(canonPath, "/models/"); i >= 0 {
		f.model, _, _ = strings.Cut(canonPath[i+len("/models/"):], ":")
	}
	canonPath, _, _ = strings.Cut(canonPath, "?")
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return f
	}
	var model string
	if json.Unmarshal(top["model"], &model) == nil && model != "" {
		f.model = model
	}
	var stream bool
	if json.Unmarshal(top["stream"], &stream) == nil && stream {
		f.streamAsked = true
	}
	delete(top, "stream")
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	h.Write([]byte(method + " " + canonPath + "\n"))
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(top[k])
		h.Write([]byte{0})
	}
	f.canon = hex.EncodeToString(h.Sum(nil))
	return f
}

// mark sets r's retry and fallback markers against the attempt's earlier
// requests.
func mark(r *Record, earlier []Record) {
	for i := len(earlier) - 1; i >= 0; i-- {
		e := &earlier[i]
		if e.Seq >= r.Seq {
			continue
		}
		if r.RetryOf == 0 && e.bodyDigest == r.bodyDigest {
			r.RetryOf = e.Seq
		}
		if r.FallbackOf == 0 && r.canonDigest != "" && !r.streamAsked && e.streamAsked && e.canonDigest == r.canonDigest {
			r.FallbackOf = e.Seq
		}
	}
}
