package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// rescoreOptions are the flags of `wfb rescore`.
type rescoreOptions struct {
	DB     string
	Bench  string
	Format string
	RunID  string
}

func newRescoreCmd(s *Streams) *cobra.Command {
	opts := &rescoreOptions{}
	cmd := &cobra.Command{
		Use:   "rescore RUN --bench FILE [--db FILE] [--format FORMAT]",
		Short: "Score a run's stored review artifacts again with the bench's current labels",
		Long: `Score every review attempt of RUN again, from the artifact stored with it,
against the labels (and verdict) its task has in the bench file now.

Each scoring adds a row to the scores table; nothing is updated or deleted,
and scored_results_v shows the newest. An attempt is not scored, and the
table says why, when its task is not a review task of the bench, when no
artifact was stored (the session never wrote one), or when the stored
artifact does not parse.

Scoring rules: a finding matches a label on the same path with overlapping
lines; each finding and label counts once, paired by a maximum matching so
the order of findings never matters. precision is NULL without findings,
recall NULL without labels. weighted_f1 weighs labels (and unmatched
findings) by severity: critical 4, high 3, medium 2, low 1.

Exit status 2 for a bad bench file, an unknown run or a missing results file.`,
		Example: `  wfb rescore run-20261130T024031Z-1f2e3d4c --bench bench.yaml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("rescore takes exactly one RUN id, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return rescoreRun(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	cmd.Flags().StringVar(&opts.Bench, "bench", "", "bench file whose task labels to score against (required)")
	cmd.Flags().StringVar(&opts.Format, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
	return cmd
}

func rescoreRun(ctx context.Context, s *Streams, opts *rescoreOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	if opts.Bench == "" {
		return badInput("rescore: --bench FILE is required (the labels come from its tasks)")
	}
	bench, err := runner.LoadBench(opts.Bench, nil)
	if err != nil {
		var be *runner.BenchError
		if errors.As(err, &be) {
			return asBadInput(err)
		}
		return err
	}
	tasks := map[string]runner.Task{}
	for _, t := range bench.Tasks {
		tasks[t.ID] = t
	}

	path := dbPath(opts.DB, s)
	// Refuse a missing file rather than create an empty one.
	if ro, err := store.OpenReadOnly(ctx, path); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotResultsFile) || errors.Is(err, store.ErrSchemaTooNew) {
			return asBadInput(err)
		}
		// An older schema is upgraded by the write open below.
		if !errors.Is(err, store.ErrSchemaTooOld) {
			return err
		}
	} else {
		ro.Close()
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Run(ctx, opts.RunID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return badInput("rescore: run %q is not in %s (wfb runs lists them)", opts.RunID, path)
		}
		return err
	}
	results, err := db.Results(ctx, opts.RunID)
	if err != nil {
		return err
	}
	arts, err := db.Artifacts(ctx, opts.RunID)
	if err != nil {
		return err
	}
	artOf := map[string]store.Artifact{}
	for _, a := range arts {
		artOf[a.AttemptID] = a
	}
	earlier, err := db.Scores(ctx, opts.RunID)
	if err != nil {
		return err
	}
	was := map[string]*float64{} // the latest weighted F1 before this rescore
	for _, sc := range earlier {
		was[sc.AttemptID] = sc.WeightedF1
	}
	hadScore := map[string]bool{}
	for _, sc := range earlier {
		hadScore[sc.AttemptID] = true
	}

	table := &report.Table{
		Title: "rescore " + opts.RunID + " against " + opts.Bench,
		Columns: []string{"attempt_id", "task", "arm", "rep", "tp", "fp", "fn",
			"precision", "recall", "weighted_f1", "verdict_correct", "was_weighted_f1", "note"},
	}
	now := time.Now()
	scored := 0
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			row := []any{r.AttemptID, r.Task, r.Arm, int64(r.Rep), nil, nil, nil, nil, nil, nil, nil, nil, nil}
			if hadScore[r.AttemptID] {
				row[11] = floatCell(was[r.AttemptID])
			}
			t, inBench := tasks[r.Task]
			a, stored := artOf[r.AttemptID]
			switch {
			case !inBench:
				row[12] = "not scored: task not in the bench"
			case !t.Review:
				row[12] = "not scored: not a review task"
			case !stored:
				row[12] = "not scored: no artifact stored"
			case a.Bytes > store.MaxArtifactBytes:
				row[12] = fmt.Sprintf("not scored: artifact invalid: is %d bytes, more than the %d allowed", a.Bytes, review.MaxArtifactBytes)
			}
			if row[12] != nil {
				table.Rows = append(table.Rows, row)
				continue
			}
			rv, err := review.ParseReviewBytes(a.Name, a.Content)
			if err != nil {
				row[12] = "not scored: " + err.Error()
				table.Rows = append(table.Rows, row)
				continue
			}
			sc := review.ScoreReview(rv, t.Labels, t.Verdict)
			rec := scoreRow(r.AttemptID, sc, review.LabelsDigest(t.Labels, t.Verdict), now)
			if err := db.InsertScoreTx(ctx, tx, &rec); err != nil {
				return err
			}
			scored++
			row[4], row[5], row[6] = int64(sc.TP), int64(sc.FP), int64(sc.FN)
			row[7], row[8], row[9] = floatCell(sc.Precision), floatCell(sc.Recall), floatCell(sc.WeightedF1)
			row[10] = boolCell(sc.VerdictCorrect)
			row[12] = "scored"
			table.Rows = append(table.Rows, row)
		}
		return nil
	})
	if err != nil {
		return err
	}
	table.Footnotes = append(table.Footnotes,
		fmt.Sprintf("%d of %d attempts scored; each scoring added a row to scores (scored_results_v shows the newest).", scored, len(results)),
		"NULL: not measured (precision without findings, recall without labels, verdict_correct without a verdict).")
	return report.Render(s.Out, table, format)
}

// scoreRow turns a review score into the row the store keeps. The runner
// writes the same row when it scores an attempt as the cell ends.
func scoreRow(attemptID string, sc review.Score, digest string, at time.Time) store.Score {
	matches := sc.Matches
	if matches == nil {
		matches = []review.Match{}
	}
	js, err := json.Marshal(matches)
	if err != nil {
		// A slice of string pairs always marshals.
		panic(err)
	}
	return store.Score{
		AttemptID: attemptID, ScoredAt: at, LabelsDigest: digest,
		TP: sc.TP, FP: sc.FP, FN: sc.FN,
		Precision: sc.Precision, Recall: sc.Recall, WeightedF1: sc.WeightedF1,
		VerdictCorrect: sc.VerdictCorrect, Matches: string(js),
	}
}

func floatCell(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func boolCell(p *bool) any {
	if p == nil {
		return nil
	}
	if *p {
		return int64(1)
	}
	return int64(0)
}
