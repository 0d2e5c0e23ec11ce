package meterstore

import (
	"context"
	"fmt"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/store"
)

// Meter is the metering proxy as the runner's Meter: each attempt's
// requests come back with its row (the runner files them in the row's
// transaction), as the runner's Wire — the records as rows, the billed
// usage summed and checked against the agent's, the wire's cost.
type Meter struct{ p *meter.Proxy }

var (
	_ runner.Meter          = (*Meter)(nil)
	_ runner.MeteredAttempt = attempt{}
)

// Start starts a metering proxy on loopback, on a free port. Requests whose
// path names no live attempt are written to db as they finish.
func Start(db *store.DB) (*Meter, error) {
	p, err := meter.Start(meter.Options{Redact: store.Redact, Sink: meter.SinkFunc(func(r meter.Record) {
		if r.AttemptID != "" {
			return
		}
		// Best effort: an unattributed request is no attempt's outcome.
		_ = db.InsertRequests(context.Background(), []store.MeteredRequest{Row(r)})
	})})
	if err != nil {
		return nil, err
	}
	return &Meter{p: p}, nil
}

// Begin implements runner.Meter.
func (m *Meter) Begin(o runner.MeterOptions) (runner.MeteredAttempt, error) {
	a, err := m.p.Begin(meter.AttemptOptions{ID: o.ID, Upstream: o.Upstream, Secrets: o.Secrets, MaxRequests: o.MaxRequests, OnCap: o.OnCap})
	if err != nil {
		return nil, err
	}
	return attempt{a}, nil
}

// Close implements runner.Meter.
func (m *Meter) Close() error { return m.p.Close() }

// attempt is a meter.Attempt as a runner.MeteredAttempt.
type attempt struct{ a *meter.Attempt }

func (a attempt) BaseURL() string { return a.a.BaseURL() }

func (a attempt) End(ctx context.Context, agent runner.ReportedUsage) runner.Wire {
	return wireOf(a.a.End(ctx), agent)
}

// wireOf is what the runner takes of an attempt's log: its records as rows,
// what the provider failed that only the meter saw, the billed usage and
// its cross-check with the agent's report, and its cost at the price
// table's list prices.
func wireOf(log meter.Log, agent runner.ReportedUsage) runner.Wire {
	s := log.Summary
	w := runner.Wire{
		Requests: Rows(log.Records), Models: len(s.ModelRequests), Billed: len(s.Billed),
		Input: s.Input.Value, Output: s.Output.Value, CacheRead: s.CacheRead.Value, CacheCreation: s.CacheCreation.Value,
	}
	if w.Billed == 0 {
		w.NotBilled = s.Input.Why
	}
	for _, r := range log.Records {
		switch r.ProxyError {
		case meter.ErrUpstreamUnreachable, meter.ErrUpstreamFailed, meter.ErrUpstreamCut:
			w.ProviderFailures = append(w.ProviderFailures, fmt.Sprintf("request %d (%s %s): %s: %s", r.Seq, r.Method, r.Path, r.ProxyError, wfb.Clip(r.ErrorDetail, 200)))
		}
	}
	c := meter.CrossCheck(meter.Reported{Input: agent.Input, Output: agent.Output, CacheRead: agent.CacheRead, CacheCreation: agent.CacheCreation}, s)
	w.Check = runner.UsageCheck{Verdict: c.Outcome, Text: c.String()}
	for _, f := range c.Fields {
		if f.Outcome == wfb.VerdictRefused {
			w.Check.Refused = append(w.Check.Refused, runner.RefusedFigure{Column: f.Field, Why: f.Why, Wire: f.WireRaw, Agent: f.Agent})
		}
	}
	w.Cost, w.CostWhy = wireCost(log.Records)
	return w
}
