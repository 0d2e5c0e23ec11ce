package meterstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/store"
)

// AttemptPrefix starts the id of every attempt a standalone proxy meters:
// "proxy-20261201T101500Z-1f2e3d4c". A run's attempts are "att-...", so a
// standalone proxy's requests never share an attempt id (and so never an
// (attempt_id, seq) pair) with a run's, in one results file or after a
// merge. Such an attempt has no results row.
const AttemptPrefix = "proxy"

// StandaloneOptions configure a standalone proxy (wfb proxy).
type StandaloneOptions struct {
	Addr     string // loopback host:port; "" is any free port on 127.0.0.1
	Upstream string // the provider base URL, http or https
	Attempts int    // how many attempts (base URLs) to meter; 0 is 1
	// Secrets are scrubbed from everything kept (the API keys in the
	// proxy's environment); credential headers are never kept at all.
	Secrets []string
	// Drain bounds the wait for in-flight requests at the end (default
	// 10 s); past it they are cancelled and recorded as such.
	Drain time.Duration
}

// LiveAttempt is one attempt a standalone proxy meters: its id in the
// results file and the base URL to give the agent.
type LiveAttempt struct {
	ID      string
	BaseURL string
}

// AttemptReport is what one attempt recorded.
type AttemptReport struct {
	ID       string
	Requests int
	Summary  meter.Summary
}

// StandaloneReport is what a standalone proxy recorded, once it stopped.
type StandaloneReport struct {
	Attempts     []AttemptReport
	Unattributed int // requests that named no attempt (answered 404)
	Written      int // rows written to the results file
}

// Standalone runs a metering proxy until ctx is done, recording every
// request of its attempts (and every unattributed one) into db as each
// finishes. ready is called once it listens, with the attempts to use.
// When ctx is done it stops taking requests, waits up to Drain for those
// in flight, writes what is queued and returns. An error after ready means
// some requests could not be written; everything else was.
func Standalone(ctx context.Context, db *store.DB, o StandaloneOptions, ready func([]LiveAttempt)) (StandaloneReport, error) {
	var rep StandaloneReport
	w := NewWriter(db)
	var unattributed atomic.Int64
	sink := meter.SinkFunc(func(r meter.Record) {
		if r.AttemptID == "" {
			unattributed.Add(1)
		}
		w.Record(r)
	})
	p, err := meter.Start(meter.Options{Addr: o.Addr, Upstream: o.Upstream, Sink: sink, Redact: store.Redact})
	if err != nil {
		w.Close()
		return rep, err
	}
	attempts, err := begin(p, o)
	if err != nil {
		p.Close()
		w.Close()
		return rep, err
	}
	live := make([]LiveAttempt, len(attempts))
	for i, a := range attempts {
		live[i] = LiveAttempt{ID: a.ID(), BaseURL: a.BaseURL()}
	}
	ready(live)
	<-ctx.Done()
	rep.Attempts = end(attempts, o.Drain)
	closeErr := p.Close()
	rep.Written, err = w.Close()
	rep.Unattributed = int(unattributed.Load())
	if closeErr != nil && !errors.Is(closeErr, context.Canceled) {
		err = errors.Join(err, closeErr)
	}
	return rep, err
}

func begin(p *meter.Proxy, o StandaloneOptions) ([]*meter.Attempt, error) {
	n := max(o.Attempts, 1)
	out := make([]*meter.Attempt, 0, n)
	for range n {
		a, err := p.Begin(meter.AttemptOptions{ID: store.NewID(AttemptPrefix), Secrets: o.Secrets})
		if err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// end ends every attempt, giving in-flight requests drain to finish.
func end(attempts []*meter.Attempt, drain time.Duration) []AttemptReport {
	if drain <= 0 {
		drain = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	out := make([]AttemptReport, len(attempts))
	for i, a := range attempts {
		log := a.End(ctx)
		out[i] = AttemptReport{ID: a.ID(), Requests: len(log.Records), Summary: log.Summary}
	}
	return out
}
