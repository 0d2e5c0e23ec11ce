package runner

import (
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
)

// helperAgent makes the rig's session run the helper agent mode as agent.
func helperAgent(t *testing.T, agent, mode string) func(*SessionSpec) {
	home := t.TempDir()
	return func(s *SessionSpec) {
		s.Agent, s.AgentArgs = agent, nil
		delete(s.Env, "WFB_TEST_AGENT")
		s.Env["WFB_RUNNER_HELPER"] = mode
		s.Env["HOME"] = home
	}
}

// rep makes the rig's session another cell's.
func rep(n int) func(*SessionSpec) { return func(s *SessionSpec) { s.Rep = n } }

// TestUsageNoRequestWitnessedIsUnwitnessed stops an agent that prints
// usage without making a request through the meter (it bypassed its base
// URL, or invented the figures) from being recorded as if its usage were
// measured with nothing said: the row keeps the agent's figures as
// reported, ok, with usage_verdict unwitnessed and a check naming them.
// Unmetered, nothing could witness it, so nothing is claimed either way.
func TestUsageNoRequestWitnessedIsUnwitnessed(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	p := startProvider(t, defaultReply(provider.Reply{Text: "unused"}))
	row := r.session(t, p, func(s *SessionSpec) { s.Meter = m }, helperAgent(t, bench.AgentStandIn, "usage-without-request"))
	requireOK(t, row)
	if row.UsageVerdict != wfb.VerdictUnwitnessed || row.UsageSource != wfb.UsageReported || row.InputTokens == nil || *row.InputTokens != 2000 {
		t.Fatalf("verdict %q source %q input %v; want unwitnessed, reported, 2000", row.UsageVerdict, row.UsageSource, row.InputTokens)
	}
	want := "unwitnessed: the agent reported usage (input 2000, output 300, cache read 7000, cache write 1000, cost $0.0123) but no request reached the meter"
	if row.UsageCheck != want {
		t.Errorf("usage_check\n %q\nwant\n %q", row.UsageCheck, want)
	}
	if !r.sqlIsNull(t, row.AttemptID, "metered_input_tokens") || r.sqlIsNull(t, row.AttemptID, "usage_verdict") {
		t.Errorf("the file holds a metered figure or no verdict")
	}

	unmetered := r.session(t, p, helperAgent(t, bench.AgentStandIn, "usage-without-request"), rep(1))
	requireOK(t, unmetered)
	if unmetered.UsageVerdict != "" || unmetered.UsageCheck != "" || unmetered.UsageSource != wfb.UsageReported {
		t.Errorf("unmetered: verdict %q check %q source %q; want no verdict, reported", unmetered.UsageVerdict, unmetered.UsageCheck, unmetered.UsageSource)
	}
}

// TestARequiredWitnessRefusesUnwitnessedUsage: with a witness required,
// usage no request on the wire witnessed fails the row (session-error,
// naming that no request reached the meter) and is not recorded as a
// measurement; the verdict still says unwitnessed.
func TestARequiredWitnessRefusesUnwitnessedUsage(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	p := startProvider(t, defaultReply(provider.Reply{Text: "unused"}))
	row := r.session(t, p, func(s *SessionSpec) { s.Meter, s.RequireWitness = m, true }, helperAgent(t, bench.AgentStandIn, "usage-without-request"))
	if row.OK || row.ErrorKind != wfb.KindSessionError || !strings.Contains(row.ErrorDetail, "no request reached the meter") || !strings.Contains(row.ErrorDetail, "require_witness") {
		t.Fatalf("ok %v kind %q detail %q; want a session-error naming that no request reached the meter", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.UsageVerdict != wfb.VerdictUnwitnessed {
		t.Errorf("verdict %q, want unwitnessed", row.UsageVerdict)
	}
	for _, col := range []string{"input_tokens", "output_tokens", "cost_usd", "usage_source"} {
		if !r.sqlIsNull(t, row.AttemptID, col) {
			t.Errorf("%s holds a value for refused usage", col)
		}
	}

	// A session whose usage the wire witnessed is untouched by the rule.
	ok := r.session(t, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: provider.FullUsage(100, 5, 0, 3)})),
		func(s *SessionSpec) { s.Meter, s.RequireWitness = m, true }, rep(1))
	requireOK(t, ok)
	if ok.UsageVerdict != wfb.VerdictAgree {
		t.Errorf("a witnessed session: verdict %q, want agree", ok.UsageVerdict)
	}
}

// TestMalformedProviderUsageIsOneKindForEveryAgent stops one fault from
// having two kinds: the provider's usage carrying a negative cache count
// was a session-error for the stand-in (Claude Code's shape) and Gemini
// CLI, which pass it on, and a provider-error for Codex, which drops the
// event it cannot parse and reports a disconnected stream. Through the
// meter each is a session-error with the wire's refusal; and fed to each
// parser the same malformed usage is a session-error too (the test of the
// same name in package agent).
func TestMalformedProviderUsageIsOneKindForEveryAgent(t *testing.T) {
	for _, c := range []struct {
		name   string
		adjust func(*SessionSpec)
	}{
		{"stand-in", func(*SessionSpec) {}},
		{"codex", helperAgent(t, bench.AgentCodex, "codex-chokes-on-usage")},
		{"gemini", helperAgent(t, bench.AgentGemini, "gemini-passes-usage-on")},
	} {
		t.Run("metered/"+c.name, func(t *testing.T) {
			r := newRig(t)
			m := startMeter(t, r.db)
			u := provider.FullUsage(1200, 30, 0, 500)
			u["cache_read_input_tokens"] = -5
			row := r.session(t, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: u})), func(s *SessionSpec) { s.Meter = m }, c.adjust)
			if row.OK || row.ErrorKind != wfb.KindSessionError || row.UsageVerdict != wfb.VerdictRefused {
				t.Fatalf("ok %v kind %q verdict %q: %s", row.OK, row.ErrorKind, row.UsageVerdict, row.ErrorDetail)
			}
			if !strings.HasPrefix(row.ErrorDetail, "usage refused by the wire") && !strings.Contains(row.ErrorDetail, "usage refused") {
				t.Errorf("detail %q does not say the usage was refused", row.ErrorDetail)
			}
		})
	}
}
