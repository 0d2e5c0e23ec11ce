package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// TestStoredScoreRecordsNoMatchesAsAnEmptyList stops the sweep writing
// matches "null" for a scoring with no matched pair while wfb rescore wrote
// "[]" for the same review (the two built the row separately), and stops a
// NULL ratio becoming a stored 0.
func TestStoredScoreRecordsNoMatchesAsAnEmptyList(t *testing.T) {
	zero, half, one := 0.0, 0.5, 1.0
	right, wrong := true, false
	tests := []struct {
		name string
		sc   review.Score
		want store.Score
	}{
		{"no findings", review.Score{FN: 2, Recall: &zero, WeightedF1: &zero, VerdictCorrect: &wrong},
			store.Score{AttemptID: "att-1", LabelsDigest: "d", FN: 2, Recall: &zero, WeightedF1: &zero,
				VerdictCorrect: &wrong, Matches: "[]"}},
		{"two matches", review.Score{TP: 2, FP: 2, Precision: &half, Recall: &one, WeightedF1: &half, VerdictCorrect: &right,
			Matches: []review.Match{{LabelID: "L1", FindingID: "f2"}, {LabelID: "L2", FindingID: "f1"}}},
			store.Score{AttemptID: "att-1", LabelsDigest: "d", TP: 2, FP: 2, Precision: &half, Recall: &one, WeightedF1: &half,
				VerdictCorrect: &right, Matches: `[{"label_id":"L1","finding_id":"f2"},{"label_id":"L2","finding_id":"f1"}]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, storedScore("att-1", tc.sc, "d")); diff != "" {
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
