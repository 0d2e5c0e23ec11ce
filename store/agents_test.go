package store

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// TestAgentColumnsRoundTripWithNullKept stops the real-agent measurements
// (usage semantics, reported figures, reasoning, retries, denials,
// per-model usage) from being lost on the way into the file, or a "not
// reported" from coming back as a measured zero.
func TestAgentColumnsRoundTripWithNullKept(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	codex := okResult("att-codex")
	codex.Agent, codex.AgentVersion, codex.Model = "codex", "0.171.0", "gpt-5-codex"
	codex.InputTokens, codex.CacheReadInputTokens, codex.OutputTokens = ptr(int64(100)), ptr(int64(300)), ptr(int64(20))
	codex.UsageSemantics = wfb.SemanticsOpenAI
	codex.ReportedInputTokens, codex.ReportedCachedInputTokens = ptr(int64(400)), ptr(int64(300))
	codex.ReasoningOutputTokens, codex.APIRetries = ptr(int64(0)), ptr(int64(2))

	claude := okResult("att-claude")
	claude.Agent, claude.AgentVersion, claude.Model = "claude", "2.1.332", "claude-sonnet-4-5"
	claude.InputTokens, claude.OutputTokens = ptr(int64(210)), ptr(int64(27))
	claude.CacheReadInputTokens, claude.CacheCreationInputTokens = ptr(int64(300)), ptr(int64(40))
	claude.UsageSemantics, claude.ReportedInputTokens = wfb.SemanticsAnthropic, ptr(int64(210))
	claude.APIRetries, claude.PermissionDenials = ptr(int64(0)), ptr(int64(1))
	claude.ModelUsage = []ModelUsage{
		{Model: "claude-haiku-4-5", InputTokens: ptr(int64(10)), OutputTokens: ptr(int64(2)), CacheReadInputTokens: ptr(int64(0)), CacheCreationInputTokens: ptr(int64(0))},
		{Model: "claude-sonnet-4-5", InputTokens: ptr(int64(200)), OutputTokens: ptr(int64(25)), CacheReadInputTokens: ptr(int64(300)), CacheCreationInputTokens: ptr(int64(40)), CostUSD: ptr(0.001275)},
	}
	bare := okResult("att-bare") // nothing measured: every new column NULL

	for _, r := range []*Result{codex, claude, bare} {
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatalf("insert %s: %v", r.AttemptID, err)
		}
	}
	got, err := d.Results(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Result{}
	for _, r := range got {
		byID[r.AttemptID] = r
	}
	for _, want := range []*Result{codex, claude, bare} {
		if diff := cmp.Diff(*want, byID[want.AttemptID]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", want.AttemptID, diff)
		}
	}
	for _, col := range []string{"usage_semantics", "reported_input_tokens", "reported_cached_input_tokens", "reasoning_output_tokens", "api_retries", "permission_denials", "cache_creation_input_tokens"} {
		if got := queryOne(t, d, `SELECT `+col+` IS NULL FROM results_v WHERE attempt_id = 'att-bare'`); !cmp.Equal(got, []any{int64(1)}) {
			t.Errorf("%s of an unmeasured row is not NULL", col)
		}
	}
	if got := queryOne(t, d, `SELECT cache_creation_input_tokens IS NULL, permission_denials IS NULL FROM results WHERE attempt_id = 'att-codex'`); !cmp.Equal(got, []any{int64(1), int64(1)}) {
		t.Errorf("codex's unreported cache writes and denials are not NULL: %v", got)
	}
	// The whole prompt is the same sum under either semantics.
	if got := queryOne(t, d, `SELECT input_tokens + cache_read_input_tokens, reported_input_tokens FROM results WHERE attempt_id = 'att-codex'`); !cmp.Equal(got, []any{int64(400), int64(400)}) {
		t.Errorf("codex prompt sum %v, want the reported 400 both ways", got)
	}
}

// TestRunAgentsViewListsEveryVersionARunUsed stops an upgrade in the middle
// of a sweep from going unnoticed.
func TestRunAgentsViewListsEveryVersionARunUsed(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for i, v := range []string{"2.1.332", "2.1.332", "2.1.333"} {
		r := okResult("att-" + string(rune('a'+i)))
		r.Agent, r.AgentVersion = "claude", v
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	_, rows, err := d.Query(ctx, `SELECT agent, agent_version, attempts FROM run_agents_v WHERE run_id = 'run-1' ORDER BY agent_version`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"claude", "2.1.332", int64(2)}, {"claude", "2.1.333", int64(1)}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("run_agents_v (-want +got):\n%s", diff)
	}
}

// TestModelUsageIsAppendOnlyAndRefusesNonsense stops per-model rows from
// being rewritten after the fact, or a negative count or a model listed
// twice from being stored.
func TestModelUsageIsAppendOnlyAndRefusesNonsense(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	r := okResult("att-1")
	r.ModelUsage = []ModelUsage{{Model: "m", InputTokens: ptr(int64(1))}}
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE model_usage SET input_tokens = 2`, `DELETE FROM model_usage`} {
		if _, err := d.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err %v, want append-only refusal", q, err)
		}
	}
	cases := []struct {
		name string
		mu   []ModelUsage
		want string
	}{
		{"twice", []ModelUsage{{Model: "m"}, {Model: "m"}}, `model "m" is listed twice`},
		{"negative", []ModelUsage{{Model: "m", OutputTokens: ptr(int64(-1))}}, "CHECK"},
		{"past the bound", []ModelUsage{{Model: "m", InputTokens: ptr(int64(1<<63 - 1))}}, "past wfb's bound on a count (10^15)"},
		{"no name", []ModelUsage{{}}, "model name is empty"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := okResult("att-bad-" + string(rune('a'+i)))
			r.ModelUsage = c.mu
			err := d.InsertResult(ctx, r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
			// The transaction rolled back: no half-written attempt.
			if got := queryOne(t, d, `SELECT count(*) FROM results WHERE attempt_id = ?`, r.AttemptID); !cmp.Equal(got, []any{int64(0)}) {
				t.Errorf("a refused attempt left %v rows", got)
			}
		})
	}
}
