package meter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/wfbench/wfb/internal/inflight"
)

// AttemptOptions name an attempt to meter.
type AttemptOptions struct {
	// ID is the attempt's id (wfb's attempt_id); required.
	ID string
	// Upstream is the provider base URL for this attempt; "" takes the
	// proxy's default.
	Upstream string
	// Secrets are values never to be kept (the API key the agent was
	// given, tokens in its environment): scrubbed from kept bodies,
	// headers and paths in every form they take on the wire. Credential
	// headers are dropped whatever their value.
	Secrets []string
	// MaxRequests caps the requests the attempt may send: past it, each is
	// answered 429 (ErrRequestCap) and not forwarded, and OnCap is called
	// once. 0: no cap.
	MaxRequests int
	// OnCap, when set, is called (once, in its own goroutine) when the
	// first request past MaxRequests has been answered: a runaway agent's
	// session is stopped there, not at its timeout.
	OnCap func()
}

// Attempt is one attempt's base URL on the proxy, and what it recorded.
type Attempt struct {
	p        *Proxy
	id       string
	token    string
	upstream *url.URL
	scrub    *scrubber
	budget   budget
	bodies   *inflight.Budget // request bodies held at once
	ctx      context.Context  // cancelled by End: in-flight requests stop
	cancel   context.CancelFunc

	maxRequests int
	onCap       func()

	mu       sync.Mutex
	ended    bool
	capped   bool
	seq      int
	records  []Record
	inflight sync.WaitGroup // requests being served or finished
}

// ErrAttemptLive says Begin was given an id whose attempt is live.
var ErrAttemptLive = errors.New("attempt is already being metered")

// Begin starts metering an attempt: requests under its BaseURL are
// forwarded to its upstream and recorded until End.
func (p *Proxy) Begin(o AttemptOptions) (*Attempt, error) {
	if o.ID == "" {
		return nil, errors.New("meter: begin: the attempt id is empty")
	}
	up := o.Upstream
	if up == "" {
		up = p.opts.Upstream
	}
	if up == "" {
		return nil, fmt.Errorf("meter: begin %s: no upstream (neither the attempt nor the proxy names one)", o.ID)
	}
	u, err := parseUpstream(up)
	if err != nil {
		return nil, fmt.Errorf("meter: begin %s: %w", o.ID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Attempt{p: p, id: o.ID, token: newToken(), upstream: u,
		scrub: newScrubber(o.Secrets, p.opts.Redact), ctx: ctx, cancel: cancel,
		bodies: inflight.New(p.opts.MaxRequestBytesInFlight), maxRequests: o.MaxRequests, onCap: o.OnCap}
	a.budget.left.Store(p.opts.MaxExchangeBytes)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, other := range p.attempts {
		if other.id == o.ID {
			cancel()
			return nil, fmt.Errorf("meter: begin %s: %w", o.ID, ErrAttemptLive)
		}
	}
	p.attempts[a.token] = a
	return a, nil
}

// ID is the attempt's id.
func (a *Attempt) ID() string { return a.id }

// BaseURL is the attempt's base URL, http://127.0.0.1:P/m/<token>, to give
// the agent as its provider base URL (Claude Code's ANTHROPIC_BASE_URL;
// Codex's provider base_url with "/v1" appended when the upstream has
// none; Gemini's GOOGLE_GEMINI_BASE_URL). A request to BaseURL + "/rest"
// goes to the upstream's base + "/rest", query kept. The token is
// unguessable and unique to the attempt: attribution never trusts anything
// the agent sends.
func (a *Attempt) BaseURL() string { return a.p.url + "/m/" + a.token }

// enter admits a request unless the attempt has ended, and numbers it;
// overCap says the request is past the attempt's cap (it is recorded, not
// forwarded), notify that it is the first such and OnCap is the caller's
// to call once the request is answered: called here, the session could
// be stopped while the request's body was still being read, and the
// request recorded as the agent gone instead of refused.
func (a *Attempt) enter() (seq int, ok, overCap, notify bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return 0, false, false, false
	}
	a.inflight.Add(1)
	a.seq++
	if a.maxRequests > 0 && a.seq > a.maxRequests {
		notify = !a.capped && a.onCap != nil
		a.capped = true
		return a.seq, true, true, notify
	}
	return a.seq, true, false, false
}

// Log is what an attempt recorded.
type Log struct {
	AttemptID string
	Records   []Record // in Seq order
	Summary   Summary
	// Truncated says the attempt's bodies outgrew MaxExchangeBytes: some
	// are kept truncated or not at all (each Body says which).
	Truncated bool
}

// End stops metering the attempt and returns what it recorded. Requests
// that arrive after End begins are unattributed (404). It waits for
// in-flight requests to finish; when ctx is done first, they are cancelled
// (recorded as ErrAttemptEnded) and it waits for them to wind up. End is
// idempotent: a second call returns the same log.
func (a *Attempt) End(ctx context.Context) Log {
	a.p.mu.Lock()
	delete(a.p.attempts, a.token)
	a.p.mu.Unlock()
	a.mu.Lock()
	a.ended = true
	a.mu.Unlock()

	done := make(chan struct{})
	go func() { a.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		a.cancel()
		<-done
	}
	a.cancel()

	a.mu.Lock()
	recs := slices.Clone(a.records)
	a.mu.Unlock()
	slices.SortFunc(recs, func(x, y Record) int { return x.Seq - y.Seq })
	// Marked again in Seq order: add saw only what had finished before.
	for i := range recs {
		recs[i].RetryOf, recs[i].FallbackOf = 0, 0
		mark(&recs[i], recs[:i])
	}
	log := Log{AttemptID: a.id, Records: recs, Summary: Summarize(recs)}
	for _, r := range recs {
		log.Truncated = log.Truncated || r.Exchange.Request.Truncated || r.Exchange.Response.Truncated
	}
	return log
}

// add files a finished record, marking it against the earlier ones that
// have finished (End marks them all again, in order).
func (a *Attempt) add(r Record) Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	mark(&r, a.records)
	a.records = append(a.records, r)
	return r
}
