package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/store"
)

// meterGrace bounds how long, after the agent's process is gone, the
// session waits for its metered requests to be filed.
const meterGrace = 5 * time.Second

// beginMeter starts metering the session as attempt attemptID: the
// provider base URL the agent would use (its adapter says which variable
// holds it: agent.Adapter.Upstream) becomes the attempt's upstream, and
// the agent is given the attempt's base URL instead, in that variable.
// The meter tells the protocol by the request's path. spec.Env is
// replaced, not changed in place. The attempt's secrets are the secret
// values of the agent's environment. An agent that would call no base
// URL (the stand-in, Codex and Gemini CLI without one; Claude Code's is
// its vendor's API) refuses to run: the attempt is then not metered (nil),
// so that its refusal stands.
//
// The attempt's requests are capped at the session's request limit: past
// it the meter refuses each and calls onCap, once, to stop the session.
func beginMeter(spec *SessionSpec, ad agent.Adapter, attemptID string, onCap func()) (MeteredAttempt, error) {
	key, upstream := ad.Upstream(spec.Env)
	if upstream == "" {
		return nil, nil
	}
	a, err := spec.Meter.Begin(MeterOptions{ID: attemptID, Upstream: upstream, Secrets: sessionSecrets(*spec),
		MaxRequests: spec.Limits.orDefault().Requests, OnCap: onCap})
	if err != nil {
		return nil, stepFailed(wfb.KindInfraError, "meter the session: %v", err)
	}
	env := maps.Clone(spec.Env)
	env[key] = a.BaseURL()
	spec.Env = env
	return a, nil
}

// endMeter stops metering the session, files what the wire showed with
// the row (its requests, written in the row's transaction), and
// cross-checks the agent's usage against the wire's. With requireWitness,
// usage the wire did not witness is refused (see crossCheck).
func endMeter(ctx context.Context, a MeteredAttempt, row *store.Result, requireWitness bool) {
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), meterGrace)
	defer cancel()
	w := a.End(endCtx, reported(row))
	row.Requests = w.Requests
	if len(w.Requests) == 0 && !row.OK {
		meterDown(row, a.BaseURL())
	}
	noteProxyErrors(row, w)
	noteStatusesAtTimeout(row, w)
	crossCheck(row, w, requireWitness)
	if row.UsageSource == wfb.UsageMetered {
		priceWire(row, w)
	}
}

// meterDown makes a failed session that never reached the metering proxy
// an infra-error when the proxy is not listening: the agent's provider was
// never the cause, wfb's own proxy was.
func meterDown(row *store.Result, baseURL string) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err == nil {
		conn.Close()
		return
	}
	prev := row.ErrorKind + ": " + row.ErrorDetail
	row.ErrorKind = wfb.KindInfraError
	row.ErrorDetail = fmt.Sprintf("the metering proxy at %s was not listening (%v), so the agent reached no provider; the agent said %s", u.Host, err, prev)
}

// noteProxyErrors names, in the row's detail, what went wrong between the
// agent and its provider that only the meter saw: an unreachable or
// failing upstream, a stream that broke off. A failure the agent called a
// session error is the provider's when every model request it made failed
// this way.
func noteProxyErrors(row *store.Result, w Wire) {
	if len(w.ProviderFailures) == 0 {
		return
	}
	detail := "the meter saw the provider fail: " + strings.Join(w.ProviderFailures, "; ")
	if !row.OK && row.ErrorKind == wfb.KindSessionError && len(w.ProviderFailures) >= w.Models {
		row.ErrorKind = wfb.KindProviderError
	}
	row.AddDetail(detail)
}

// noteStatusesAtTimeout names, in the detail of a session wfb's timeout
// ended, the error statuses its provider answered every model request
// with: the agent never got to say what it was doing, and the wire shows
// it was retrying a failing provider (Qwen Code retries a 529 for 85 s,
// opencode a 502 for a minute and more, whatever wfb's timeout).
func noteStatusesAtTimeout(row *store.Result, w Wire) {
	if row.OK || row.ErrorKind != wfb.KindTimeout || w.Models == 0 || w.Billed > 0 {
		return
	}
	count := map[int64]int{}
	for _, q := range w.Requests {
		if q.Protocol == "" {
			continue
		}
		if q.Status == nil || *q.Status < 400 {
			return // a request that was not an error status: nothing to name
		}
		count[*q.Status]++
	}
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%d ×%d", st, count[st]))
	}
	row.AddDetail(fmt.Sprintf("the meter saw the provider answer all %d model requests with an error status (%s): the agent was retrying them when the timeout ended it", w.Models, strings.Join(parts, ", ")))
}

// crossCheck applies the wire's witness to the row (see migration 0006):
// the wire's sums beside the agent's, which one the reports use, and the
// verdict. A figure the wire lacked or carried as nonsense refuses the
// measurement whatever the agent printed; the agent's figures for an
// attempt whose model requests were never billed are invented, not
// measured. Billed usage the agent reported while no model request
// reached the meter is unwitnessed (see unwitnessed).
func crossCheck(row *store.Result, w Wire, requireWitness bool) {
	switch {
	case w.Models == 0:
		// Nothing on the wire to compare: the agent's word stands alone
		// (runSession marks it reported), and says so when it claims
		// usage nothing witnessed.
		unwitnessed(row, len(w.Requests), requireWitness)
		return
	case w.Billed == 0:
		why := w.NotBilled
		if row.OK {
			row.AddFailure(wfb.KindSessionError, "usage refused: the agent reported success but "+why)
		}
		if hadUsage(row) {
			row.AddDetail("the agent's usage figures are not recorded: " + why + ", so they are not a measurement")
		}
		dropReported(row)
		return
	}
	c := w.Check
	row.UsageVerdict, row.UsageCheck = c.Verdict, c.Text
	if c.Verdict == wfb.VerdictRefused {
		why := refusal(row, c)
		row.UsageCheck = string(wfb.VerdictRefused) + ": " + why
		malformedUsage(row, "usage refused by the wire, tokens and cost not recorded: "+why)
		dropReported(row)
		return
	}
	row.MeteredInputTokens, row.MeteredOutputTokens = w.Input, w.Output
	row.MeteredCacheReadInputTokens, row.MeteredCacheCreationInputTokens = w.CacheRead, w.CacheCreation
	row.UsageSource = wfb.UsageMetered
}

// malformedUsage fails the row for usage the provider sent malformed or
// incomplete, with one kind whatever the agent made of it: session-error,
// the kind the seed contract gives refused usage. An agent that passed the
// figures on is failed here; one that choked on them and blamed the
// provider (Codex drops a response.completed event it cannot parse, then
// reports the stream as disconnected: a provider-error by its words) is
// reclassified, its own account kept in the detail — the wire shows the
// provider answered, and its answer's usage is what was wrong.
func malformedUsage(row *store.Result, detail string) {
	if !row.OK && row.ErrorKind == wfb.KindProviderError {
		row.ErrorKind = wfb.KindSessionError
		row.ErrorDetail = detail + "; the agent reported a provider-error: " + row.ErrorDetail
		return
	}
	row.AddFailure(wfb.KindSessionError, detail)
}

// unwitnessed gives a metered attempt whose agent reported billed usage
// (a token count above zero, or a cost above zero) while no model request
// reached the meter the verdict unwitnessed: the agent bypassed the base
// URL it was given (the sandbox shares the host's network) or invented the
// figures. The figures stay recorded as the agent's (usage_source
// reported), unless a witness is required: then the row fails as a
// session-error — the agent's doing, as other usage that is not a
// measurement — and the figures are not recorded (its result event keeps
// what it printed).
func unwitnessed(row *store.Result, requests int, requireWitness bool) {
	claimed := billedClaim(row)
	if claimed == "" {
		return
	}
	wire := "no request reached the meter"
	if requests > 0 {
		wire = fmt.Sprintf("none of the %d requests that reached the meter was a model request", requests)
	}
	row.UsageVerdict = wfb.VerdictUnwitnessed
	row.UsageCheck = fmt.Sprintf("%s: the agent reported usage (%s) but %s", wfb.VerdictUnwitnessed, claimed, wire)
	if !requireWitness {
		return
	}
	row.AddFailure(wfb.KindSessionError, fmt.Sprintf("usage not witnessed, tokens and cost not recorded: the agent reported %s but %s, and a witness is required (require_witness)", claimed, wire))
	dropReported(row)
}

// billedClaim spells the billed usage the agent reported — each token
// figure above zero and a cost above zero — or "" when it reported none.
func billedClaim(row *store.Result) string {
	var parts []string
	for _, f := range []struct {
		name string
		v    *int64
	}{
		{"input", row.InputTokens}, {"output", row.OutputTokens},
		{"cache read", row.CacheReadInputTokens}, {"cache write", row.CacheCreationInputTokens},
	} {
		if f.v != nil && *f.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, *f.v))
		}
	}
	if row.CostUSD != nil && *row.CostUSD > 0 {
		parts = append(parts, "cost $"+wfb.Dollars(*row.CostUSD))
	}
	return strings.Join(parts, ", ")
}

// refusal names each figure the wire refused: why, the wire's value and
// what the agent printed for it.
func refusal(row *store.Result, c UsageCheck) string {
	var parts []string
	for _, f := range c.Refused {
		wire := f.Wire
		if wire == "" {
			wire = "absent"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (wire %s, agent %s)", f.Column, f.Why, wire, agentPrinted(row, f)))
	}
	if len(parts) == 0 {
		return "no usage figure could be compared"
	}
	return strings.Join(parts, "; ")
}

// agentPrinted is what the agent printed for a figure: the row's value
// when it took one, else the text of its result event's usage field (the
// agent's own name for it), else "absent".
func agentPrinted(row *store.Result, f RefusedFigure) string {
	if f.Agent != nil {
		return fmt.Sprint(*f.Agent)
	}
	var ev struct {
		Usage map[string]json.RawMessage `json:"usage"`
	}
	name := f.Column
	if ad, err := agent.For(row.Agent); err == nil {
		name = ad.ReportedField(name)
	}
	if json.Unmarshal([]byte(row.ResultEvent), &ev) == nil {
		if raw, ok := ev.Usage[name]; ok {
			return wfb.Clip(string(raw), 40)
		}
	}
	return "absent"
}

func hadUsage(row *store.Result) bool {
	return row.InputTokens != nil || row.OutputTokens != nil || row.CacheReadInputTokens != nil ||
		row.CacheCreationInputTokens != nil || row.CostUSD != nil
}

// dropReported clears what the agent reported as a measurement: its token
// columns, its cost and its per-model usage. Its result event keeps what
// it printed.
func dropReported(row *store.Result) {
	row.InputTokens, row.OutputTokens, row.CacheReadInputTokens, row.CacheCreationInputTokens = nil, nil, nil, nil
	row.ReportedInputTokens, row.ReportedCachedInputTokens, row.ReasoningOutputTokens = nil, nil, nil
	row.CostUSD, row.CostSource, row.ModelUsage, row.UsageSemantics = nil, "", nil, ""
}

// reported is the agent's usage as the row holds it (already in the
// token columns' semantics).
func reported(row *store.Result) ReportedUsage {
	return ReportedUsage{Input: row.InputTokens, Output: row.OutputTokens,
		CacheRead: row.CacheReadInputTokens, CacheCreation: row.CacheCreationInputTokens}
}

// secretValues are the values of the environment's secret-named variables
// long enough to be told from ordinary words, longest first (so a secret
// that contains another is replaced whole).
func secretValues(env map[string]string) []string {
	var secrets []string
	for k, v := range env {
		// Short values would scrub ordinary words; the mock's "offline"
		// is not a secret.
		if wfb.IsSecretName(k) && len(v) >= store.MinSecretBytes {
			secrets = append(secrets, v)
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	return secrets
}

// startMeter starts the sweep's metering proxy, unless it runs unmetered.
func (s *Sweep) startMeter() error {
	if s.opts.NoMeter {
		return nil
	}
	if s.opts.StartMeter == nil {
		return errors.New("the sweep is metered, but it was given no meter to start (SweepOptions.StartMeter)")
	}
	m, err := s.opts.StartMeter(s.opts.DB)
	if err != nil {
		return fmt.Errorf("start the metering proxy: %w", err)
	}
	s.meter = m
	return nil
}

// meterSetting is how runs.config records whether sessions were metered.
func meterSetting(off bool) string {
	if off {
		return "off"
	}
	return "on"
}
