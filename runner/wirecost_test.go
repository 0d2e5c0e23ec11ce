package runner

// Cost from the wire through the real path: the mock provider over HTTP,
// the metering proxy, the stand-in agent as a real subprocess (pricing its
// usage with its own fictitious table, which no vendor's is), the row in a
// real SQLite file, and the report read back from it.

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/agent"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// sonnetSession runs a metered stand-in session of model
// claude-sonnet-4-5 whose mock serves 1200 uncached input, 30 output,
// 4000 cache read and 500 cache write tokens over two requests.
func sonnetSession(t *testing.T, r *rig) store.Result {
	t.Helper()
	m := startMeter(t, r.db)
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{
		{Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "true"}}}, Usage: provider.FullUsage(700, 10, 0, 500)},
		{Text: "done", Usage: provider.FullUsage(500, 20, 4000, 0)},
	}})
	row := r.session(t, p, func(s *SessionSpec) { s.Meter = m; s.MaxTurns = 2; s.Model = "claude-sonnet-4-5" })
	requireOK(t, row)
	return row
}

// TestTheWiresCostIsPricedExactlyAndAWrongReportedCostIsFlagged stops the
// wire's usage from going unpriced, being priced inexactly, or a cost the
// agent got wrong from passing unnoticed: the stand-in charges its own
// fictitious prices, the wire is priced at the vendor's list price, and
// the check names both figures.
func TestTheWiresCostIsPricedExactlyAndAWrongReportedCostIsFlagged(t *testing.T) {
	r := newRig(t)
	row := sonnetSession(t, r)
	// 1200×$3 + 4000×$0.30 + 500×$3.75 + 30×$15 per million tokens.
	const wire = 0.007125
	agentCost := agent.StandInPrice.Cost(1200, 30, 4000, 500)
	if row.MeteredCostUSD == nil || *row.MeteredCostUSD != wire {
		t.Fatalf("metered cost %v, want exactly %v", row.MeteredCostUSD, wire)
	}
	if row.CostUSD == nil || *row.CostUSD != agentCost || row.CostSource != "reported" {
		t.Fatalf("the agent's cost %v (%q), want %v reported", row.CostUSD, row.CostSource, agentCost)
	}
	if want := "disagree: wire $0.007125, agent $0.187"; row.CostCheck != want {
		t.Errorf("cost_check %q, want %q", row.CostCheck, want)
	}
	if r.sqlIsNull(t, row.AttemptID, "metered_cost_usd") {
		t.Error("metered_cost_usd is NULL in the file")
	}
}

// TestAnUnpricedModelsWireCostIsNullNotZero stops a model wfb has no price
// for from being costed at 0 or at a guess: metered_cost_usd and
// cost_check are NULL, the detail says why, and the tokens still stand.
func TestAnUnpricedModelsWireCostIsNullNotZero(t *testing.T) {
	r := newRig(t)
	m := startMeter(t, r.db)
	row := r.metered(t, m, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: provider.FullUsage(100, 5, 0, 3)})))
	requireOK(t, row)
	if row.UsageSource != wfb.UsageMetered || row.MeteredInputTokens == nil {
		t.Fatalf("usage source %q metered input %v: the wire did not measure", row.UsageSource, row.MeteredInputTokens)
	}
	for _, col := range []string{"metered_cost_usd", "cost_check"} {
		if !r.sqlIsNull(t, row.AttemptID, col) {
			t.Errorf("%s holds a value for model %q, which has no price", col, row.Model)
		}
	}
	if !strings.Contains(row.ErrorDetail, `metered cost not recorded: request 1 (POST /v1/messages): no price for model "stand-in"`) {
		t.Errorf("detail %q does not say why the wire's cost is missing", row.ErrorDetail)
	}
}

// TestReportsUseTheWiresCost stops a report from showing the agent's cost
// where the wire's was priced, unless asked for the agent's report.
func TestReportsUseTheWiresCost(t *testing.T) {
	r := newRig(t)
	row := sonnetSession(t, r)
	ro, err := store.OpenReadOnly(context.Background(), r.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, c := range []struct {
		reported bool
		want     float64
	}{{false, *row.MeteredCostUSD}, {true, *row.CostUSD}} {
		cols, err := report.LoadColumns(context.Background(), ro)
		if err != nil {
			t.Fatal(err)
		}
		cols.Reported = c.reported
		got := math.NaN()
		err = report.LoadRows(context.Background(), ro, cols, report.Selection{RunIDs: []string{r.runID}}, func(x *report.Row) { got = x.Values[report.CostUSD] })
		if err != nil || got != c.want {
			t.Errorf("reported %v: the report's cost %v (%v), want %v", c.reported, got, err, c.want)
		}
	}
}

// TestTheCostCheckToleratesRoundingOnly stops the cost check from flagging
// float rounding or an agent's printing, or from missing a wrong price:
// agree within 1% of the larger or within a micro-dollar, else both
// figures named.
func TestTheCostCheckToleratesRoundingOnly(t *testing.T) {
	for _, c := range []struct {
		wire, agent float64
		want        string
	}{
		{0.007125, 0.007125000000000001, "agree"},
		{0.1, 0.101, "agree"}, // 1% of the larger (0.00101)
		{1, 1.0102, "disagree: wire $1, agent $1.0102"},
		{0.0000003, 0.0000012, "agree"}, // within a micro-dollar
		{0.0011, 0.001, "disagree: wire $0.0011, agent $0.001"},
		{0, 0.5, "disagree: wire $0, agent $0.5"},
	} {
		verdict, got := costCheck(c.wire, c.agent)
		if got != c.want || !strings.HasPrefix(got, string(verdict)) {
			t.Errorf("costCheck(%v, %v) = %s %q, want %q", c.wire, c.agent, verdict, got, c.want)
		}
	}
}

// TestWhatTheTableCannotPriceIsNotPriced stops a request the provider
// billed above the table's rates from being priced as if it were not: 1-hour
// cache writes (1.6× the 5-minute rate), a prompt past the model's
// long-context threshold. The cost is NULL and says why; the tokens stand.
func TestWhatTheTableCannotPriceIsNotPriced(t *testing.T) {
	hour := provider.FullUsage(100, 5, 0, 300)
	hour["cache_creation"] = map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 300}
	for _, c := range []struct {
		name  string
		usage map[string]any
		why   string
	}{
		{"1-hour cache writes", hour, "usage.cache_creation.ephemeral_1h_input_tokens 300"},
		{"long prompt", provider.FullUsage(150_000, 5, 50_000, 300), "its prompt of 200300 tokens is billed at claude-sonnet-4-5's long-context rate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			m := startMeter(t, r.db)
			row := r.session(t, startProvider(t, defaultReply(provider.Reply{Text: "hi", Usage: c.usage})), func(s *SessionSpec) { s.Meter = m; s.Model = "claude-sonnet-4-5" })
			requireOK(t, row)
			if row.MeteredCostUSD != nil || row.CostCheck != "" || row.MeteredCacheCreationInputTokens == nil || *row.MeteredCacheCreationInputTokens != 300 {
				t.Errorf("metered cost %v check %q cache writes %v: want no cost, 300 tokens", row.MeteredCostUSD, row.CostCheck, row.MeteredCacheCreationInputTokens)
			}
			if !strings.Contains(row.ErrorDetail, c.why) {
				t.Errorf("detail %q does not say %q", row.ErrorDetail, c.why)
			}
		})
	}
}
