package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestResultTableKeepsNullApartFromZero stops `wfb session` from printing a
// missing measurement as 0 (or an empty text as ""): an unmeasured cost and
// a measured zero must read differently in every format.
func TestResultTableKeepsNullApartFromZero(t *testing.T) {
	zero, tokens := 0.0, int64(12)
	r := store.Result{RunID: "r1", AttemptID: "a1", Task: "t", Arm: "base", Agent: "claude", Sandbox: "bwrap",
		OK: false, ErrorKind: "session-error", ProcessState: wfb.StateExited,
		InputTokens: &tokens, CostUSD: &zero}
	fields := map[string]any{}
	for _, row := range ResultTable(r).Rows {
		fields[row[0].(string)] = row[1]
	}
	want := map[string]any{
		"run_id": "r1", "attempt_id": "a1", "task": "t", "arm": "base", "agent": "claude", "model": nil,
		"sandbox": "bwrap", "ok": int64(0), "error_kind": "session-error", "error_detail": nil,
		"process_state": wfb.StateExited, "exit_code": nil, "duration_ms": nil,
		"input_tokens": int64(12), "output_tokens": nil, "cache_read_input_tokens": nil,
		"cache_creation_input_tokens": nil, "cost_usd": 0.0, "cost_source": nil, "num_turns": nil,
		"usage_cost_usd": 0.0, "usage_cost_source": "reported", "metered_cost_usd": nil, "cost_verdict": nil,
		"usage_source": nil, "usage_verdict": nil,
		"session_id": nil, "verdict": nil, "findings_count": nil, "tool_calls": nil, "tool_uses": nil,
	}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
