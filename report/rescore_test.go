package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/store"
)

// TestRescoreTableKeepsUnmeasuredApartFromZero stops rescore's table from
// showing an attempt it did not score, or a ratio the scoring could not
// measure, as a zero.
func TestRescoreTableKeepsUnmeasuredApartFromZero(t *testing.T) {
	zero, half, was := 0.0, 0.5, 0.25
	wrong := false
	rows := []RescoreRow{
		{Attempt: store.Result{AttemptID: "att-1", Task: "rev", Arm: "a", Rep: 0},
			Score: &store.Score{TP: 0, FP: 0, FN: 2, Recall: &zero, WeightedF1: &zero, VerdictCorrect: &wrong},
			Was:   &was, Note: "scored"},
		{Attempt: store.Result{AttemptID: "att-2", Task: "rev", Arm: "a", Rep: 1},
			Score: &store.Score{TP: 1, Precision: &half, Recall: &half, WeightedF1: &half}, Note: "scored"},
		{Attempt: store.Result{AttemptID: "att-3", Task: "code", Arm: "a", Rep: 2}, Note: "not scored: not a review task"},
	}
	got := RescoreTable("rescore run-r", rows, FormatCSV)
	want := &Table{
		Title: "rescore run-r",
		Columns: []string{"attempt_id", "task", "arm", "rep", "tp", "fp", "fn",
			"precision", "recall", "weighted_f1", "verdict_correct", "was_weighted_f1", "note"},
		Rows: [][]any{
			{"att-1", "rev", "a", int64(0), int64(0), int64(0), int64(2), nil, 0.0, 0.0, int64(0), 0.25, "scored"},
			{"att-2", "rev", "a", int64(1), int64(1), int64(0), int64(0), 0.5, 0.5, 0.5, nil, nil, "scored"},
			{"att-3", "code", "a", int64(2), nil, nil, nil, nil, nil, nil, nil, nil, "not scored: not a review task"},
		},
		Footnotes: []string{
			"2 of 3 attempts scored; each scoring added a row to scores (scored_results_v shows the newest).",
			"NULL: not measured (precision without findings, recall without labels, verdict_correct without a verdict).",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
