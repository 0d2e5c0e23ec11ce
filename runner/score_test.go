package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// TestStoredScoreRecordsNoMatchesAsAnEmptyList stops the sweep writing
// matches "null" for a scoring with no matched pair while wfb rescore wrote
// "[]" for the same review (the two built the row separately), stops a
// NULL ratio becoming a stored 0, and stops a score that does not keep the
// findings and labels it scored (a reader would have to score again to
// mark them).
func TestStoredScoreRecordsNoMatchesAsAnEmptyList(t *testing.T) {
	one := 1.0
	right := true
	f1 := review.Finding{ID: "f1", Severity: "low", Path: "b.go", Line: 9, EndLine: 9, Category: "style", Evidence: "e1", Recommendation: "r1"}
	f2 := review.Finding{ID: "f2", Severity: "high", Path: "a.go", Line: 3, EndLine: 4, Category: "bug", Evidence: "e2", Recommendation: "r2", Blocking: true}
	l1 := review.Label{ID: "L1", Severity: "high", Path: "a.go", LineStart: 4, LineEnd: 6, Category: "bug"}
	l2 := review.Label{ID: "L2", Severity: "low", Path: "b.go", LineStart: 1, LineEnd: 9, Category: "style"}
	const (
		f1JSON = `{"id":"f1","severity":"low","path":"b.go","line":9,"end_line":9,"category":"style","evidence":"e1","recommendation":"r1","blocking":false}`
		f2JSON = `{"id":"f2","severity":"high","path":"a.go","line":3,"end_line":4,"category":"bug","evidence":"e2","recommendation":"r2","blocking":true}`
		l1JSON = `{"id":"L1","severity":"high","path":"a.go","line_start":4,"line_end":6,"category":"bug"}`
		l2JSON = `{"id":"L2","severity":"low","path":"b.go","line_start":1,"line_end":9,"category":"style"}`
	)
	tests := []struct {
		name   string
		rv     review.Review
		labels []review.Label
		want   store.Score
	}{
		{"no findings, no labels", review.Review{Verdict: review.VerdictApprove, Findings: []review.Finding{}}, nil,
			store.Score{AttemptID: "att-1", VerdictCorrect: &right, Matches: "[]", Findings: "[]", Labels: "[]"}},
		{"two matches", review.Review{Verdict: review.VerdictRequestChanges, Findings: []review.Finding{f1, f2}}, []review.Label{l1, l2},
			store.Score{AttemptID: "att-1", TP: 2, Precision: &one, Recall: &one, WeightedF1: &one, VerdictCorrect: &right,
				Matches:  `[{"label_id":"L1","finding_id":"f2"},{"label_id":"L2","finding_id":"f1"}]`,
				Findings: "[" + f1JSON + "," + f2JSON + "]", Labels: "[" + l1JSON + "," + l2JSON + "]"}},
		{"a finding matches nothing", review.Review{Verdict: review.VerdictRequestChanges, Findings: []review.Finding{f1}}, []review.Label{l1},
			store.Score{AttemptID: "att-1", FP: 1, FN: 1, Precision: new(float64), Recall: new(float64), WeightedF1: new(float64), VerdictCorrect: &right,
				Matches: "[]", Findings: "[" + f1JSON + "]", Labels: "[" + l1JSON + "]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.LabelsDigest = review.LabelsDigest(tc.labels, "")
			if diff := cmp.Diff(tc.want, storedScore("att-1", tc.rv, tc.labels, "")); diff != "" {
				t.Errorf("stored score (-want +got):\n%s", diff)
			}
		})
	}
}

// The store keeps at most store.MaxArtifactBytes of an artifact, and
// rescoring parses that copy: were the store's limit below the review's, a
// cut-short copy could be scored as if it were the whole review. The store
// imports nothing of ours, so the two limits are tied here.
func TestTheStoreKeepsEveryArtifactTheReviewParserAccepts(t *testing.T) {
	if store.MaxArtifactBytes < review.MaxArtifactBytes {
		t.Fatalf("store keeps %d bytes of an artifact, review accepts up to %d", store.MaxArtifactBytes, review.MaxArtifactBytes)
	}
}
