package runner

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// Rescored is one attempt of a rescored run.
type Rescored struct {
	Attempt store.Result
	// Score is the scoring Rescore recorded; nil when the attempt was not
	// scored, and Note says why.
	Score *store.Score
	// Was is the attempt's latest weighted F1 before the rescore: nil when
	// it was never scored, or its scoring measured none.
	Was *float64
	// Note is "scored", or "not scored: " and the reason.
	Note string
}

// Rescore scores every attempt of run runID again, from the review artifact
// stored with it, against the labels (and verdict) its task has in b now,
// and returns the attempts in the file's order. Each scoring adds a row to
// the scores table, all in one transaction; nothing is updated or deleted.
// An attempt is not scored when its task is not in b or is not a review
// task, when no artifact was stored (the session never wrote one), or when
// the stored artifact does not parse. A run the file does not have is
// store.ErrNotFound; one another process is recording, store.ErrInUse.
func Rescore(ctx context.Context, db *store.DB, runID string, b *bench.Bench) ([]Rescored, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, fmt.Errorf("rescore run %s: %w", runID, err)
	}
	// A run still being recorded is refused: its scores would be of the
	// attempts made so far, beside the ones its sweep is adding.
	if err := db.HoldRun(runID); err != nil {
		return nil, fmt.Errorf("rescore: %w", err)
	}
	defer db.ReleaseRun(runID)
	results, err := db.Results(ctx, runID)
	if err != nil {
		return nil, err
	}
	artifacts, err := artifactsOf(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	was, err := latestF1(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Rescored, 0, len(results))
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			a, stored := artifacts[r.AttemptID]
			rs := rescoreAttempt(r, b, a, stored)
			rs.Was = was[r.AttemptID]
			if rs.Score != nil {
				rs.Score.ScoredAt = now
				if err := db.InsertScoreTx(ctx, tx, rs.Score); err != nil {
					return err
				}
			}
			out = append(out, rs)
		}
		// The run's copied rows hold each attempt's latest score: made
		// anew with the scores, in their transaction.
		return db.CopyRunRowsTx(ctx, tx, runID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// artifactsOf maps each attempt of a run to its stored artifact.
func artifactsOf(ctx context.Context, db *store.DB, runID string) (map[string]store.Artifact, error) {
	arts, err := db.Artifacts(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := map[string]store.Artifact{}
	for _, a := range arts {
		out[a.AttemptID] = a
	}
	return out, nil
}

// latestF1 maps each scored attempt of a run to the weighted F1 of its
// latest scoring; an attempt never scored is absent, and reads NULL like a
// scoring that measured none.
func latestF1(ctx context.Context, db *store.DB, runID string) (map[string]*float64, error) {
	scores, err := db.Scores(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := map[string]*float64{}
	for _, sc := range scores {
		out[sc.AttemptID] = sc.WeightedF1
	}
	return out, nil
}

// rescoreAttempt scores one attempt from its stored artifact against its
// task in b, or says why it cannot.
func rescoreAttempt(r store.Result, b *bench.Bench, a store.Artifact, stored bool) Rescored {
	rs := Rescored{Attempt: r}
	t, inBench := b.Task(r.Task)
	switch {
	case !inBench:
		rs.Note = "not scored: task not in the bench"
	case !t.Review:
		rs.Note = "not scored: not a review task"
	case !stored:
		rs.Note = "not scored: no artifact stored"
	case a.Bytes > review.MaxArtifactBytes:
		// The stored copy of so large an artifact was cut short; the
		// parser would refuse the whole one for its size, so say that.
		rs.Note = fmt.Sprintf("not scored: artifact invalid: is %d bytes, more than the %d allowed", a.Bytes, review.MaxArtifactBytes)
	default:
		rv, err := review.ParseReviewBytes(a.Name, a.Content)
		if err != nil {
			rs.Note = "not scored: " + err.Error()
			break
		}
		sc := storedScore(r.AttemptID, rv, t.Labels, t.Verdict)
		rs.Score, rs.Note = &sc, "scored"
	}
	return rs
}
