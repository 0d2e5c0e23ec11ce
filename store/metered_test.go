package store

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// TestAMeteredRowAndItsRequestsAreOneTransaction stops a result row from
// being written without the requests the wire showed for it (or the
// reverse), and a request from being filed under another attempt.
func TestAMeteredRowAndItsRequestsAreOneTransaction(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	reqs := meteredRequests()[:2]
	row := okResult("att-1")
	row.InputTokens, row.MeteredInputTokens = ptr(int64(2000)), ptr(int64(2000))
	row.MeteredOutputTokens, row.MeteredCacheReadInputTokens, row.MeteredCacheCreationInputTokens = ptr(int64(0)), ptr(int64(0)), ptr(int64(1000))
	row.UsageSource, row.UsageCheck, row.MeteredCostUSD, row.CostCheck = wfb.UsageMetered, "agree", ptr(0.25), "agree"
	row.UsageVerdict, row.CostVerdict = wfb.VerdictAgree, wfb.VerdictAgree
	row.Requests = reqs
	if err := d.InsertResult(ctx, row); err != nil {
		t.Fatal(err)
	}
	got, err := d.Requests(ctx, "att-1")
	if err != nil || len(got) != 2 {
		t.Fatalf("requests of att-1: %d, %v; want 2", len(got), err)
	}
	v := queryOne(t, d, `SELECT r.metered_input_tokens, r.metered_cache_creation_input_tokens, r.usage_source, r.usage_check,
		r.metered_cost_usd, r.cost_check, r.usage_verdict, r.cost_verdict, COUNT(q.request_id) FROM results_v r JOIN requests q ON q.attempt_id = r.attempt_id`)
	if diff := cmp.Diff([]any{int64(2000), int64(1000), "metered", "agree", 0.25, "agree", "agree", "agree", int64(2)}, v); diff != "" {
		t.Errorf("results_v joined to requests (-want +got):\n%s", diff)
	}
	back, err := d.Results(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	b := back[0]
	if *b.MeteredCacheCreationInputTokens != 1000 || b.UsageSource != wfb.UsageMetered || b.UsageCheck != "agree" || *b.MeteredCostUSD != 0.25 || b.CostCheck != "agree" || b.UsageVerdict != wfb.VerdictAgree || b.CostVerdict != wfb.VerdictAgree {
		t.Errorf("read back %+v", b)
	}

	// A request of another attempt refuses the row: nothing is written.
	other := okResult("att-2")
	bad := meteredRequests()[:1]
	bad[0].RequestID = "req-9"
	other.Requests = bad
	err = d.InsertResult(ctx, other)
	if err == nil || !strings.Contains(err.Error(), `belongs to attempt "att-1"`) {
		t.Fatalf("insert with another attempt's request: %v", err)
	}
	if n := queryOne(t, d, `SELECT (SELECT COUNT(*) FROM results WHERE attempt_id = 'att-2') + (SELECT COUNT(*) FROM requests WHERE request_id = 'req-9')`); n[0] != int64(0) {
		t.Errorf("a refused insert left %v rows", n[0])
	}
}

// TestArmSummaryUsesTheWireAndCountsDisagreements stops a report from
// summing the agent's figures where the wire measured others, from
// counting a failed attempt's invented zeros (its columns are NULL) as a
// measurement, and from hiding how many attempts disagreed.
func TestArmSummaryUsesTheWireAndCountsDisagreements(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	agree := okResult("att-1")
	agree.InputTokens, agree.MeteredInputTokens, agree.UsageSource, agree.UsageCheck = ptr(int64(100)), ptr(int64(100)), wfb.UsageMetered, "agree"
	agree.UsageVerdict = wfb.VerdictAgree
	disagree := okResult("att-2")
	disagree.InputTokens, disagree.MeteredInputTokens, disagree.UsageSource = ptr(int64(90)), ptr(int64(300)), wfb.UsageMetered
	disagree.UsageVerdict, disagree.UsageCheck = wfb.VerdictDisagree, "disagree: input_tokens wire 300, agent 90"
	outage := okResult("att-3") // a 529-only attempt: nothing billed
	outage.OK, outage.ErrorKind = false, wfb.KindProviderError
	reported := okResult("att-4") // not metered
	reported.InputTokens, reported.UsageSource = ptr(int64(50)), wfb.UsageReported
	refused := okResult("att-5")
	refused.OK, refused.ErrorKind, refused.UsageCheck = false, wfb.KindSessionError, "refused: cache_read_input_tokens: ... (wire -5, agent 0)"
	refused.UsageVerdict = wfb.VerdictRefused
	for _, r := range []*Result{agree, disagree, outage, reported, refused} {
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	v := queryOne(t, d, `SELECT attempts, input_tokens_n, input_tokens_sum, usage_metered, usage_disagreements, usage_refusals FROM arm_summary_v`)
	if diff := cmp.Diff([]any{int64(5), int64(3), int64(450), int64(2), int64(1), int64(1)}, v); diff != "" {
		t.Errorf("arm_summary_v (-want +got):\n%s", diff)
	}
}

// TestAMeteredColumnIsCheckedLikeTheOthers stops a negative metered count,
// an unknown usage source or a non-finite metered cost from being stored.
func TestAMeteredColumnIsCheckedLikeTheOthers(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, c := range []struct {
		name string
		edit func(*Result)
		want string
	}{
		{"negative", func(r *Result) { r.MeteredOutputTokens = ptr(int64(-1)) }, "metered_output_tokens -1 is negative"},
		{"source", func(r *Result) { r.UsageSource = "guessed" }, `usage_source "guessed"`},
		{"cost", func(r *Result) { r.MeteredCostUSD = ptr(-0.5) }, "metered_cost_usd -0.5"},
	} {
		r := okResult("att-" + c.name)
		c.edit(r)
		if err := d.InsertResult(ctx, r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if _, err := d.db.ExecContext(ctx, `INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, usage_source)
		VALUES ('run-1', 'raw', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1, 'guessed')`); err == nil {
		t.Error("the schema took usage_source 'guessed'")
	}
}
