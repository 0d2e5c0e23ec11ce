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
	for _, row := range ResultTable(r, FormatTable).Rows {
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

// TestResultTableIsOneRecordForPrograms stops csv and json from getting the
// field/value pairs people read: a program parsing one result must get one
// record whose keys are the fields, in the order people see them.
func TestResultTableIsOneRecordForPrograms(t *testing.T) {
	ok := store.Result{RunID: "r1", AttemptID: "a1", OK: true, ProcessState: wfb.StateExited}
	human := ResultTable(ok, FormatMarkdown)
	if diff := cmp.Diff([]string{"field", "value"}, human.Columns); diff != "" {
		t.Errorf("human columns (-want +got):\n%s", diff)
	}
	for _, f := range []Format{FormatCSV, FormatJSON} {
		wide := ResultTable(ok, f)
		if len(wide.Rows) != 1 || len(wide.Rows[0]) != len(wide.Columns) {
			t.Fatalf("%s: %d rows (want 1) of %d cells for %d columns", f, len(wide.Rows), len(wide.Rows[0]), len(wide.Columns))
		}
		for i, pair := range human.Rows {
			if wide.Columns[i] != pair[0] || !cmp.Equal(wide.Rows[0][i], pair[1]) {
				t.Errorf("%s: column %d is %s=%v, people see %s=%v", f, i, wide.Columns[i], wide.Rows[0][i], pair[0], pair[1])
			}
		}
		if got := wide.Rows[0][7]; wide.Columns[7] != "ok" || got != int64(1) {
			t.Errorf("%s: %s = %v, want ok = 1", f, wide.Columns[7], got)
		}
	}
}
