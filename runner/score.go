package runner

import (
	"encoding/json"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// storedScore is the row the store keeps for one scoring of an attempt's
// review: the counts and ratios of sc, its matches as JSON, and the digest
// of the labels (and verdict) it was scored against (see
// review.LabelsDigest). ScoreID and ScoredAt are left for the caller or
// InsertScoreTx to fill in. The sweep, scoring as a cell ends, and Rescore
// both write it, so the two never disagree on a row's shape.
func storedScore(attemptID string, sc review.Score, labelsDigest string) store.Score {
	matches := sc.Matches
	if matches == nil {
		// A scoring without matches recorded none: an empty list, not null,
		// which store.Score.Matches keeps apart ("" is "none recorded").
		matches = []review.Match{}
	}
	js, err := json.Marshal(matches)
	if err != nil {
		// A slice of string pairs always marshals.
		panic(err)
	}
	return store.Score{
		AttemptID: attemptID, LabelsDigest: labelsDigest,
		TP: sc.TP, FP: sc.FP, FN: sc.FN,
		Precision: sc.Precision, Recall: sc.Recall, WeightedF1: sc.WeightedF1,
		VerdictCorrect: sc.VerdictCorrect, Matches: string(js),
	}
}
