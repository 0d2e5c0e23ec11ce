package runner

// Metering through the real path: the mock provider over HTTP, the
// metering proxy on loopback, the stand-in agent as a real subprocess, and
// the row with its requests in a real SQLite file.

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// startMeter starts a metering proxy for one test.
func startMeter(t *testing.T, db *store.DB) Meter {
	t.Helper()
	p, err := StartTestMeter(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// metered runs the rig's stand-in session through meter m against p.
func (r *rig) metered(t *testing.T, m Meter, p *provider.Provider) store.Result {
	t.Helper()
	return r.session(t, p, func(s *SessionSpec) { s.Meter = m })
}

// wireRows are the attempt's requests as the file holds them.
func (r *rig) wireRows(t *testing.T, attemptID string) []store.MeteredRequest {
	t.Helper()
	reqs, err := r.db.Requests(context.Background(), attemptID)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

type usageCols struct {
	In, Out, CacheRead, CacheCreation     *int64
	MIn, MOut, MCacheRead, MCacheCreation *int64
	Source, Check                         string
	CostSet                               bool
}

func colsOf(r store.Result) usageCols {
	return usageCols{r.InputTokens, r.OutputTokens, r.CacheReadInputTokens, r.CacheCreationInputTokens,
		r.MeteredInputTokens, r.MeteredOutputTokens, r.MeteredCacheReadInputTokens, r.MeteredCacheCreationInputTokens,
		r.UsageSource, r.UsageCheck, r.CostUSD != nil}
}

// wantAgreed checks that the row holds the same usage from both witnesses,
// the wire's used, and a cost.
func wantAgreed(t *testing.T, row store.Result, in, out, cacheRead, cacheWrite int64) {
	t.Helper()
	want := usageCols{&in, &out, &cacheRead, &cacheWrite, &in, &out, &cacheRead, &cacheWrite, wfb.UsageMetered, "agree", true}
	if diff := cmp.Diff(want, colsOf(row)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestAMeteredSessionAgreesWithTheWireExactly stops the wire's usage from
// being lost, approximated or filed under another attempt: the wire's sums
// sit beside the agent's, the check says they agree, and every request is
// in the file joined to the row.
func TestAMeteredSessionAgreesWithTheWireExactly(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{
		{Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "true"}}}, Usage: provider.FullUsage(1200, 30, 4000, 500)},
		{Text: "done", Usage: provider.FullUsage(1300, 20, 4100, 0)},
	}})
	row := r.session(t, p, func(s *SessionSpec) { s.Meter = m; s.MaxTurns = 2 })
	requireOK(t, row)
	wantAgreed(t, row, 2500, 50, 8100, 500)
	reqs := r.wireRows(t, row.AttemptID)
	if len(reqs) != 2 || !reqs[0].Billed || !reqs[1].Billed || *reqs[1].InputTokens != 1300 {
		t.Fatalf("requests: %+v", reqs)
	}
	_, rows, err := r.db.Query(context.Background(), `SELECT COUNT(*) FROM requests q JOIN results r ON r.attempt_id = q.attempt_id
		JOIN exchanges x ON x.request_id = q.request_id WHERE r.attempt_id = ?`, row.AttemptID)
	if err != nil || rows[0][0] != int64(2) {
		t.Errorf("requests joined to the row with exchanges: %v %v", rows, err)
	}
}

// TestTheWireRefusesWhatTheAgentWouldPass stops a usage figure the
// provider never sent, or sent as nonsense, from becoming a measurement
// through the agent: the row is a session-error naming the field, the
// wire's value and the agent's, and no token column holds a number.
func TestTheWireRefusesWhatTheAgentWouldPass(t *testing.T) {
	for _, c := range []struct {
		name  string
		value any // cache_read_input_tokens as served; nil: absent
		wire  string
	}{
		{"missing", nil, "wire absent"},
		{"negative", -5, "wire -5"},
		{"bool", true, "wire true"},
		{"string", "1200", `wire "1200"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			m := startMeter(t, r.db)
			u := provider.FullUsage(100, 5, 0, 3)
			u["cache_read_input_tokens"] = c.value
			row := r.metered(t, m, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: u})))
			if row.OK || row.ErrorKind != wfb.KindSessionError {
				t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
			}
			for _, s := range []string{"usage refused by the wire", "cache_read_input_tokens", c.wire + ", agent "} {
				if !strings.Contains(row.ErrorDetail, s) {
					t.Errorf("detail %q does not say %q", row.ErrorDetail, s)
				}
			}
			if !strings.HasPrefix(row.UsageCheck, "refused: cache_read_input_tokens: ") || !strings.Contains(row.UsageCheck, c.wire+", agent ") {
				t.Errorf("usage_check %q does not name the field and both values", row.UsageCheck)
			}
			for _, col := range []string{"input_tokens", "cache_read_input_tokens", "metered_input_tokens", "metered_cache_read_input_tokens", "cost_usd", "usage_source"} {
				if !r.sqlIsNull(t, row.AttemptID, col) {
					t.Errorf("%s holds a value for a refused measurement", col)
				}
			}
		})
	}
}

// TestAFailedAttemptsZerosAreNotMeasured stops an outage from making an
// arm look cheaper: a 529-only attempt's token columns are NULL (nothing
// was billed), its request is in the file with its status and error type,
// and arm_summary_v counts it as not measured.
func TestAFailedAttemptsZerosAreNotMeasured(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	row := r.metered(t, m, startProvider(t, defaultReply(provider.Reply{Status: 529})))
	if row.OK || row.ErrorKind != wfb.KindProviderError {
		t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if diff := cmp.Diff(usageCols{}, colsOf(row)); diff != "" {
		t.Errorf("usage of a 529-only attempt (-want +got):\n%s", diff)
	}
	reqs := r.wireRows(t, row.AttemptID)
	if len(reqs) != 1 || reqs[0].Status == nil || *reqs[0].Status != 529 || reqs[0].Billed || reqs[0].ErrorType != "overloaded_error" {
		t.Fatalf("requests: %+v", reqs)
	}
	_, rows, err := r.db.Query(context.Background(), `SELECT input_tokens_n, cost_usd_n FROM arm_summary_v WHERE run_id = ?`, r.runID)
	if err != nil || fmt.Sprint(rows) != "[[0 0]]" {
		t.Errorf("arm_summary_v: %v %v, want nothing measured", rows, err)
	}
}

// TestA529ThenASuccessIsBilledOnceThroughTheStandIn stops a retried
// request from being counted twice, or its failure from being lost: the
// stand-in re-sends the 529's body, both requests are in the file (the
// retry marked as one), only the success is billed, the agent's usage and
// the wire's agree, and the row counts the retry.
func TestA529ThenASuccessIsBilledOnceThroughTheStandIn(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{{Status: 529}, {Text: "done", Usage: provider.FullUsage(900, 12, 300, 40)}}})
	row := r.session(t, p, func(s *SessionSpec) { s.Meter = m; s.AgentArgs = append(s.AgentArgs, "--max-retries", "1") })
	requireOK(t, row)
	wantAgreed(t, row, 900, 12, 300, 40)
	reqs := r.wireRows(t, row.AttemptID)
	if len(reqs) != 2 || reqs[0].Billed || *reqs[0].Status != 529 || !reqs[1].Billed || reqs[1].RetryOf == nil || *reqs[1].RetryOf != 1 {
		t.Fatalf("requests %+v, want a 529 then its billed retry", reqs)
	}
	if row.APIRetries == nil || *row.APIRetries != 1 {
		t.Errorf("api_retries %v, want 1", row.APIRetries)
	}
}

// TestConcurrentMeteredSessionsNeverMixAttribution stops one session's
// requests from being counted for another sharing the proxy.
func TestConcurrentMeteredSessionsNeverMixAttribution(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	const n = 4
	rows := make([]store.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		p := startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: provider.FullUsage(int64(1000*(i+1)), int64(i+1), 0, 0)}))
		spec := r.spec(t, p)
		spec.Meter, spec.Rep = m, i
		wg.Add(1)
		go func() {
			defer wg.Done()
			row, err := RecordSession(context.Background(), r.db, spec)
			if err != nil {
				t.Error(err)
			}
			rows[i] = row
		}()
	}
	wg.Wait()
	for i, row := range rows {
		requireOK(t, row)
		want := int64(1000 * (i + 1))
		if row.MeteredInputTokens == nil || *row.MeteredInputTokens != want || row.UsageCheck != "agree" {
			t.Errorf("session %d: metered input %v check %q, want %d agree", i, row.MeteredInputTokens, row.UsageCheck, want)
		}
		reqs := r.wireRows(t, row.AttemptID)
		if len(reqs) != 1 || *reqs[0].InputTokens != want {
			t.Errorf("session %d: its requests %+v", i, reqs)
		}
	}
}

// TestAnUnreachableProviderThroughTheMeterIsAProviderError stops a dead
// upstream from hanging the session or passing as the agent's fault: the
// row is a provider-error whose detail says what the meter saw.
func TestAnUnreachableProviderThroughTheMeterIsAProviderError(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	p := startProvider(t, defaultReply(provider.Reply{Text: "never served"}))
	row := r.session(t, p, func(s *SessionSpec) { s.Meter = m; s.Env["ANTHROPIC_BASE_URL"] = dead })
	if row.OK || row.ErrorKind != wfb.KindProviderError || !strings.Contains(row.ErrorDetail, meter.ErrUpstreamUnreachable) {
		t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if reqs := r.wireRows(t, row.AttemptID); len(reqs) != 1 || reqs[0].ProxyError != meter.ErrUpstreamUnreachable {
		t.Errorf("requests: %+v", reqs)
	}
}

// TestADownMeterIsAnInfraErrorNotAHang stops a proxy that is gone from
// hanging the session or passing as the agent's fault: the row is an
// infra-error naming the proxy.
func TestADownMeterIsAnInfraErrorNotAHang(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	m.Close()
	row := r.metered(t, m, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: provider.FullUsage(1, 1, 0, 0)})))
	if row.OK || row.ErrorKind != wfb.KindInfraError || !strings.Contains(row.ErrorDetail, "metering proxy") {
		t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.InputTokens != nil || row.UsageSource != "" {
		t.Errorf("usage %v source %q for a session that reached no provider", row.InputTokens, row.UsageSource)
	}
}

// TestBeginMeterPointsGeminiAtTheAttempt stops a Gemini arm from bypassing
// the meter: the base URL Gemini CLI uses (GOOGLE_GEMINI_BASE_URL when the
// arm sets it, else the cell's) becomes the attempt's upstream, and the
// agent is given the attempt's URL in its place.
func TestBeginMeterPointsGeminiAtTheAttempt(t *testing.T) {
	p := startMeter(t, newRig(t).db)
	for _, env := range []map[string]string{
		{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
		{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8/g"},
	} {
		key := "GOOGLE_GEMINI_BASE_URL"
		if env[key] == "" {
			key = "ANTHROPIC_BASE_URL"
		}
		spec := SessionSpec{SessionKey: SessionKey{Agent: bench.AgentGemini, AgentBin: "gemini"}, Env: env, Meter: p}
		ad, err := agent.For(spec.Agent)
		if err != nil {
			t.Fatal(err)
		}
		a, err := beginMeter(&spec, ad, "att-"+key, nil)
		if err != nil || a == nil {
			t.Fatalf("%s: attempt %v, err %v", key, a, err)
		}
		if spec.Env[key] != a.BaseURL() || env[key] == a.BaseURL() {
			t.Errorf("%s: the agent gets %q, want the attempt's %q (the arm's env untouched)", key, spec.Env[key], a.BaseURL())
		}
		// The adapter takes its base URL from what the meter rewrote.
		home := t.TempDir()
		spec.Env["HOME"] = home
		cmd, err := ad.Command(agentSession(spec), "p")
		if err != nil {
			t.Fatal(err)
		}
		got := cmd.Env["GOOGLE_GEMINI_BASE_URL"]
		if got == "" {
			got = spec.Env["GOOGLE_GEMINI_BASE_URL"]
		}
		if got != a.BaseURL() {
			t.Errorf("%s: gemini would call %q, not the attempt's %q", key, got, a.BaseURL())
		}
		a.End(context.Background(), ReportedUsage{})
	}
}

// TestATimedOutSessionNamesTheStatusesTheWireSaw stops a session that wfb's
// timeout ended while its agent was retrying a failing provider (Qwen Code
// retries a 529 for 85 s) from saying only "timeout": the detail names the
// statuses every model request got. A session whose provider answered one
// request, or that failed otherwise, is left as it was.
func TestATimedOutSessionNamesTheStatusesTheWireSaw(t *testing.T) {
	req := func(status int64, model bool) store.MeteredRequest {
		q := store.MeteredRequest{Status: &status}
		if model {
			q.Protocol = "openai-chat-completions"
		}
		return q
	}
	failing := Wire{Models: 3, Requests: []store.MeteredRequest{req(529, true), req(200, false), req(529, true), req(503, true)}}
	for _, c := range []struct {
		name string
		kind string
		wire Wire
		want string
	}{
		{"timeout, all failed", wfb.KindTimeout, failing, "no result; the meter saw the provider answer all 3 model requests with an error status (503 ×1, 529 ×2): the agent was retrying them when the timeout ended it"},
		{"timeout, one answered", wfb.KindTimeout, Wire{Models: 2, Billed: 1, Requests: []store.MeteredRequest{req(529, true), req(200, true)}}, "no result"},
		{"provider-error", wfb.KindProviderError, failing, "no result"},
	} {
		t.Run(c.name, func(t *testing.T) {
			row := store.Result{ErrorKind: c.kind, ErrorDetail: "no result"}
			noteStatusesAtTimeout(&row, c.wire)
			if row.ErrorDetail != c.want || row.ErrorKind != c.kind {
				t.Errorf("kind %q detail %q, want %q %q", row.ErrorKind, row.ErrorDetail, c.kind, c.want)
			}
		})
	}
}
