package conformance

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/store"
)

// metered returns a cell adjustment that meters the session through a
// proxy of the test's own.
func metered(t *testing.T, r *rig) func(*runner.Cell) {
	t.Helper()
	m, err := meterstore.Start(r.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return func(c *runner.Cell) { c.Meter = m }
}

func (r *rig) requests(t *testing.T, attemptID string) []store.MeteredRequest {
	t.Helper()
	reqs, err := r.db.Requests(context.Background(), attemptID)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// modelRequests are the attempt's requests that were model requests.
func modelRequests(reqs []store.MeteredRequest) []store.MeteredRequest {
	var out []store.MeteredRequest
	for _, q := range reqs {
		if q.Protocol != "" {
			out = append(out, q)
		}
	}
	return out
}

// wantMetered is what the wire's columns hold after the mock served u (the
// script's Anthropic fields) under the agent's protocol: for the Responses
// and Gemini APIs, cache writes are part of input and not reported apart.
func wantMetered(c cli, u [4]int64) [4]*int64 {
	if c.agent == bench.AgentCodex || c.agent == bench.AgentGemini || chatCLI(c) {
		return [4]*int64{ptr(u[0] + u[3]), ptr(u[1]), ptr(u[2]), nil}
	}
	return [4]*int64{ptr(u[0]), ptr(u[1]), ptr(u[2]), ptr(u[3])}
}

func meteredCols(r store.Result) [4]*int64 {
	return [4]*int64{r.MeteredInputTokens, r.MeteredOutputTokens, r.MeteredCacheReadInputTokens, r.MeteredCacheCreationInputTokens}
}

func sameCounts(a, b [4]*int64) bool {
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || (a[i] != nil && *a[i] != *b[i]) {
			return false
		}
	}
	return true
}

func show(v [4]*int64) string {
	var parts []string
	for _, p := range v {
		if p == nil {
			parts = append(parts, "NULL")
		} else {
			parts = append(parts, strconv.FormatInt(*p, 10))
		}
	}
	return strings.Join(parts, "/")
}

// TestARealCLIsUsageAgreesWithTheWireExactly stops the wire's witness from
// being lost or mis-read for a real CLI: the wire's sums equal what the
// mock served, the agent's report agrees, and the requests are the row's.
func TestARealCLIsUsageAgreesWithTheWireExactly(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			reply := provider.Reply{Text: "hello", Usage: provider.FullUsage(1200, 30, 4000, 500)}
			r := newRig(t, &provider.Script{Replies: []provider.Reply{reply}})
			row := r.run(t, r.cell(c, metered(t, r)))
			requireOK(t, row)
			if want := wantMetered(c, served(t, reply)); !sameCounts(want, meteredCols(row)) {
				t.Errorf("metered %s, want %s", show(meteredCols(row)), show(want))
			}
			if row.UsageSource != wfb.UsageMetered || row.UsageCheck != "agree" {
				t.Errorf("usage source %q check %q, want metered, agree", row.UsageSource, row.UsageCheck)
			}
			if m := modelRequests(r.requests(t, row.AttemptID)); len(m) != 1 || !m[0].Billed {
				t.Errorf("model requests %+v, want one billed", m)
			}
			// The wire priced at list price: claude-sonnet-4-5 1200×$3 +
			// 4000×$0.30 + 500×$3.75 + 30×$15; gpt-5-codex (cache writes
			// are input) 1700×$1.25 + 4000×$0.125 + 30×$10, per MTok.
			// gemini-2.5-pro has gpt-5-codex's prices, and Gemini bills no
			// cache writes either: the same sum. Claude Code prices its
			// own usage: the two agree. Codex's and Gemini CLI's cost is
			// wfb's, derived: not checked.
			want, check := 0.007125, "agree"
			if c.agent == bench.AgentCodex || c.agent == bench.AgentGemini {
				want, check = 0.002925, ""
			}
			if chatCLI(c) {
				// Chat Completions bills cache writes as input too; neither
				// CLI prices its usage (opencode's 0 is no price), so the
				// row's cost is wfb's, derived: not checked.
				want, check = agent.Prices[c.model].Cost(1700, 30, 4000, 0), ""
			}
			if row.MeteredCostUSD == nil || *row.MeteredCostUSD != want || row.CostCheck != check {
				t.Errorf("metered cost %s check %q, want %v %q (the agent's cost %s)", showCost(row.MeteredCostUSD), row.CostCheck, want, check, showCost(row.CostUSD))
			}
			if row.CostUSD != nil {
				t.Logf("%s %s: the agent's cost $%v (%s), the wire's $%v", c.name, c.model, *row.CostUSD, row.CostSource, want)
			}
		})
	}
}

// TestTheWireRefusesWhatARealCLIZeroFills stops the rewriting a real CLI
// does (a missing cache field printed as 0, -5 as 0, true as 1) from
// becoming a measurement: the row is a session-error naming the field, the
// wire's value and what the agent printed, with no token column set.
func TestTheWireRefusesWhatARealCLIZeroFills(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		for _, v := range []struct {
			name  string
			value any
			wire  string
		}{{"missing", nil, "wire absent"}, {"negative", -5, "wire -5"}, {"bool", true, "wire true"}, {"string", "1200", `wire "1200"`}} {
			if c.agent == bench.AgentGemini && v.name == "missing" {
				// The Gemini API's JSON is proto3's: an absent
				// cachedContentTokenCount is how it writes 0, so the
				// wire's 0 and the CLI's agree.
				continue
			}
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				c := require(t, c)
				u := provider.FullUsage(1200, 30, 0, 500)
				u["cache_read_input_tokens"] = v.value
				r := newRig(t, &provider.Script{Replies: []provider.Reply{{Text: "hello", Usage: u}}})
				row := r.run(t, r.cell(c, metered(t, r)))
				if row.OK || row.ErrorKind != wfb.KindSessionError {
					t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
				}
				if !strings.Contains(row.ErrorDetail, "usage refused by the wire") || !strings.Contains(row.UsageCheck, v.wire+", agent ") {
					t.Errorf("detail %q / check %q does not name the wire's value and the agent's", row.ErrorDetail, row.UsageCheck)
				}
				if row.InputTokens != nil || row.CacheReadInputTokens != nil || row.MeteredInputTokens != nil || row.CostUSD != nil {
					t.Errorf("a refused measurement was recorded: in %v cache %v metered %v cost %v", row.InputTokens, row.CacheReadInputTokens, row.MeteredInputTokens, row.CostUSD)
				}
			})
		}
	}
}

// TestA529ThenASuccessIsBilledOnce stops a retried request from being
// counted twice, or its failure from being lost: both requests are in the
// file, the 529 unbilled, and the usage is the success's.
func TestA529ThenASuccessIsBilledOnce(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		if c.agent == bench.AgentGemini {
			// wfb allows Gemini CLI no retry (a retried broken stream
			// would pass unseen): its 529 ends the session, one request,
			// as TestOnly529sLeaveTheTokensNull shows.
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			ok := provider.Reply{Text: "hello", Usage: provider.FullUsage(900, 12, 0, 0)}
			r := newRig(t, &provider.Script{Replies: []provider.Reply{{Status: 529, RetryAfterMS: c.retryHint}, ok}})
			row := r.run(t, r.cell(c, metered(t, r)))
			requireOK(t, row)
			m := modelRequests(r.requests(t, row.AttemptID))
			if len(m) != 2 || m[0].Billed || m[0].Status == nil || *m[0].Status != 529 || !m[1].Billed || m[1].RetryOf == nil || *m[1].RetryOf != 1 {
				t.Fatalf("model requests %+v, want a 529 then its billed retry", m)
			}
			if want := wantMetered(c, served(t, ok)); !sameCounts(want, meteredCols(row)) || row.UsageCheck != "agree" {
				t.Errorf("metered %s check %q, want %s agree", show(meteredCols(row)), row.UsageCheck, show(want))
			}
		})
	}
}

// TestOnly529sLeaveTheTokensNull stops an outage from making an arm look
// cheaper: the CLI's zeros for an attempt whose every request failed are
// not recorded as usage.
func TestOnly529sLeaveTheTokensNull(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			r := newRig(t, &provider.Script{Default: &provider.Reply{Status: 529, RetryAfterMS: c.retryHint}})
			row := r.run(t, r.cell(c, metered(t, r), func(cell *runner.Cell) {
				if c.slow529 {
					// Its seven tries take 85 s whatever the provider says:
					// wfb's timeout ends it, and the meter names the 529s.
					cell.Timeout = 20 * time.Second
				}
			}))
			switch {
			case c.slow529:
				if row.OK || row.ErrorKind != wfb.KindTimeout || !strings.Contains(row.ErrorDetail, "529") {
					t.Fatalf("ok %v kind %q: %s; want a timeout whose detail names the provider's 529s", row.OK, row.ErrorKind, row.ErrorDetail)
				}
			case row.OK || row.ErrorKind != wfb.KindProviderError:
				t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
			}
			if row.InputTokens != nil || row.OutputTokens != nil || row.CostUSD != nil || row.MeteredInputTokens != nil || row.UsageSource != "" {
				t.Errorf("tokens %v/%v cost %v metered %v source %q: an outage recorded as usage", row.InputTokens, row.OutputTokens, row.CostUSD, row.MeteredInputTokens, row.UsageSource)
			}
			m := modelRequests(r.requests(t, row.AttemptID))
			switch {
			case c.agent == bench.AgentGemini && (len(m) != 1 || m[0].Billed):
				t.Errorf("%d model requests recorded (%+v), want the one unbilled try wfb allows Gemini CLI", len(m), m)
			case c.agent != bench.AgentGemini && len(m) < 2:
				t.Errorf("%d model requests recorded, want the first try and its retries", len(m))
			}
		})
	}
}

// TestConcurrentRealSessionsNeverMixAttribution stops two sessions sharing
// the proxy from being credited with each other's requests.
func TestConcurrentRealSessionsNeverMixAttribution(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			a := newRig(t, &provider.Script{Default: &provider.Reply{Text: "a", Usage: provider.FullUsage(1111, 11, 0, 0)}})
			b := newRig(t, &provider.Script{Default: &provider.Reply{Text: "b", Usage: provider.FullUsage(2222, 22, 0, 0)}})
			meter := metered(t, a)
			var rows [2]store.Result
			var wg sync.WaitGroup
			for i, r := range []*rig{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					row, err := runner.RunCell(context.Background(), r.db, r.cell(c, meter))
					if err != nil {
						t.Error(err)
					}
					rows[i] = row
				}()
			}
			wg.Wait()
			for i, want := range []int64{1111, 2222} {
				requireOK(t, rows[i])
				if rows[i].MeteredInputTokens == nil || *rows[i].MeteredInputTokens != want || rows[i].UsageCheck != "agree" {
					t.Errorf("session %d: metered input %v check %q, want %d agree", i, rows[i].MeteredInputTokens, rows[i].UsageCheck, want)
				}
			}
		})
	}
}

// TestAnUnreachableUpstreamIsAProviderErrorWithAReason stops a dead
// provider behind the meter from hanging a real CLI or passing as the
// agent's fault.
func TestAnUnreachableUpstreamIsAProviderErrorWithAReason(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			r := newRig(t, nil)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := "http://" + ln.Addr().String()
			ln.Close()
			row := r.run(t, r.cell(c, metered(t, r), func(cell *runner.Cell) {
				cell.BaseURL = dead
				if c.attempts > 0 {
					// The meter's 502 carries no retry hint: their retries
					// (a minute and more) outlast any sensible timeout.
					cell.Timeout = 20 * time.Second
				}
			}))
			want := wfb.KindProviderError
			if c.attempts > 0 {
				want = wfb.KindTimeout
			}
			if row.OK || row.ErrorKind != want || !strings.Contains(row.ErrorDetail, meter.ErrUpstreamUnreachable) {
				t.Fatalf("ok %v kind %q: %s; want %s naming %s", row.OK, row.ErrorKind, row.ErrorDetail, want, meter.ErrUpstreamUnreachable)
			}
		})
	}
}

// TestANonStreamingFallbackIsMarkedAndBilledOnce stops Claude Code's
// fallback — a stream that breaks, re-sent without streaming — from being
// counted twice or lost: the broken stream is unbilled, the re-send is
// marked as its fallback and billed, and the row's usage is the wire's.
// (Codex streams only: the Responses protocol has no such fallback.)
// Observed with 2.1.332: the CLI itself counts the broken stream's input
// too, and the check says so.
func TestANonStreamingFallbackIsMarkedAndBilledOnce(t *testing.T) {
	t.Parallel()
	c := require(t, clis[0])
	ok := provider.Reply{Text: "hello", Usage: provider.FullUsage(900, 12, 0, 0)}
	broken := provider.Reply{Text: "broken", CutAfterEvents: 2, Usage: provider.FullUsage(900, 12, 0, 0)}
	r := newRig(t, &provider.Script{Replies: []provider.Reply{broken, ok}})
	// Without retries left, Claude Code falls back instead of re-streaming.
	row := r.run(t, r.cell(c, metered(t, r), func(cell *runner.Cell) { cell.ExtraEnv["CLAUDE_CODE_MAX_RETRIES"] = "0" }))
	requireOK(t, row)
	m := modelRequests(r.requests(t, row.AttemptID))
	if len(m) != 2 || !m[0].Streamed || m[0].Billed || m[0].ProxyError != meter.ErrUpstreamCut ||
		m[1].Streamed || !m[1].Billed || m[1].FallbackOf == nil || *m[1].FallbackOf != 1 {
		t.Fatalf("model requests %+v, want a broken stream then its billed non-streaming fallback", m)
	}
	if want := wantMetered(c, served(t, ok)); !sameCounts(want, meteredCols(row)) || row.UsageSource != wfb.UsageMetered {
		t.Errorf("metered %s source %q, want %s metered", show(meteredCols(row)), row.UsageSource, show(want))
	}
	if row.UsageCheck != "agree" && !strings.Contains(row.UsageCheck, "wire 900") {
		t.Errorf("check %q does not name the wire's figure", row.UsageCheck)
	}
	if !strings.Contains(row.ErrorDetail, meter.ErrUpstreamCut) {
		t.Errorf("detail %q does not say the stream broke", row.ErrorDetail)
	}
}

func showCost(p *float64) string {
	if p == nil {
		return "NULL"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
