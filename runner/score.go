package runner

import (
	"encoding/json"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// storedScore scores rv against a task's labels and verdict (want, "" for
// none) and returns the row the store keeps for it: the counts and ratios,
// the matches, the findings scored and the labels scored against (all
// three as JSON, so a reader marks each finding and label from the row
// alone, never scoring again), and the digest of the labels and verdict
// (see review.LabelsDigest). ScoreID and ScoredAt are left for the caller
// or InsertScoreTx to fill in. The sweep, scoring as a cell ends, and
// Rescore both write it, so the two never disagree on a row's shape.
func storedScore(attemptID string, rv review.Review, labels []review.Label, want string) store.Score {
	sc := review.ScoreReview(rv, labels, want)
	return store.Score{
		AttemptID: attemptID, LabelsDigest: review.LabelsDigest(labels, want),
		TP: sc.TP, FP: sc.FP, FN: sc.FN,
		Precision: sc.Precision, Recall: sc.Recall, WeightedF1: sc.WeightedF1,
		VerdictCorrect: sc.VerdictCorrect,
		Matches:        jsonList(sc.Matches), Findings: jsonList(rv.Findings), Labels: jsonList(labels),
	}
}

// jsonList is a list as JSON; none is an empty list, not null, which
// store.Score keeps apart from "" (none recorded).
func jsonList[T any](xs []T) string {
	if xs == nil {
		xs = []T{}
	}
	js, err := json.Marshal(xs)
	if err != nil {
		// Structs of strings, ints and bools always marshal.
		panic(err)
	}
	return string(js)
}
