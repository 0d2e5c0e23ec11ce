package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
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
	dbFlag(cmd, &opts.DB)
	cmd.Flags().StringVar(&opts.Bench, "bench", "", "bench file whose task labels to score against (required)")
	formatFlag(cmd, &opts.Format)
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
	b, err := bench.Load(opts.Bench, nil)
	if err != nil {
		return asBadInput(err)
	}
	tasks := map[string]bench.Task{}
	for _, t := range b.Tasks {
		tasks[t.ID] = t
	}

	path := dbPath(opts.DB, s)
	// Refuse a missing file rather than create an empty one: store.Open
	// creates what is absent, and store has no write open of an existing
	// file only, so a read-only open checks first.
	switch ro, err := store.OpenReadOnly(ctx, path); {
	case err == nil:
		ro.Close()
	case errors.Is(err, store.ErrSchemaTooOld):
		// The write open below upgrades it.
	default:
		return resultsFileError(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return resultsFileError(err)
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
	// The latest weighted F1 before this rescore; an attempt never scored
	// is absent, and shows NULL like a scoring that measured none.
	was := map[string]*float64{}
	for _, sc := range earlier {
		was[sc.AttemptID] = sc.WeightedF1
	}

	now := time.Now()
	rows := make([]rescoreRow, 0, len(results))
	scored := 0
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			row := rescoreRow{result: r, was: was[r.AttemptID]}
			t, inBench := tasks[r.Task]
			a, stored := artOf[r.AttemptID]
			switch {
			case !inBench:
				row.note = "not scored: task not in the bench"
			case !t.Review:
				row.note = "not scored: not a review task"
			case !stored:
				row.note = "not scored: no artifact stored"
			case a.Bytes > review.MaxArtifactBytes:
				// The stored copy of so large an artifact was cut short; the
				// parser would refuse the whole one for its size, so say that.
				row.note = fmt.Sprintf("not scored: artifact invalid: is %d bytes, more than the %d allowed", a.Bytes, review.MaxArtifactBytes)
			default:
				rv, err := review.ParseReviewBytes(a.Name, a.Content)
				if err != nil {
					row.note = "not scored: " + err.Error()
					break
				}
				sc := review.ScoreReview(rv, t.Labels, t.Verdict)
				rec := runner.StoredScore(r.AttemptID, sc, review.LabelsDigest(t.Labels, t.Verdict))
				rec.ScoredAt = now
				if err := db.InsertScoreTx(ctx, tx, &rec); err != nil {
					return err
				}
				scored++
				row.score, row.note = &sc, "scored"
			}
			rows = append(rows, row)
		}
		return nil
	})
	if err != nil {
		return err
	}

	table := &report.Table{
		Title: "rescore " + opts.RunID + " against " + opts.Bench,
		Columns: []string{"attempt_id", "task", "arm", "rep", "tp", "fp", "fn",
			"precision", "recall", "weighted_f1", "verdict_correct", "was_weighted_f1", "note"},
	}
	for _, row := range rows {
		table.Rows = append(table.Rows, row.cells())
	}
	table.Footnotes = append(table.Footnotes,
		fmt.Sprintf("%d of %d attempts scored; each scoring added a row to scores (scored_results_v shows the newest).", scored, len(results)),
		"NULL: not measured (precision without findings, recall without labels, verdict_correct without a verdict).")
	return report.Render(s.Out, table, format)
}

// rescoreRow is one attempt's line in rescore's table.
type rescoreRow struct {
	result store.Result
	score  *review.Score // nil: not scored, note says why
	was    *float64      // the latest weighted F1 before this rescore
	note   string
}

// cells renders the row in the order of rescore's columns; what an attempt
// not scored has no measure of is NULL.
func (r rescoreRow) cells() []any {
	var tp, fp, fn, precision, recall, f1, verdict any
	if sc := r.score; sc != nil {
		tp, fp, fn = int64(sc.TP), int64(sc.FP), int64(sc.FN)
		precision, recall, f1 = nullable(sc.Precision), nullable(sc.Recall), nullable(sc.WeightedF1)
		verdict = boolCell(sc.VerdictCorrect)
	}
	return []any{r.result.AttemptID, r.result.Task, r.result.Arm, int64(r.result.Rep),
		tp, fp, fn, precision, recall, f1, verdict, nullable(r.was), r.note}
}

// boolCell is a table cell for a yes/no that may be unmeasured: 1, 0 or
// NULL.
func boolCell(p *bool) any {
	if p == nil {
		return nil
	}
	if *p {
		return int64(1)
	}
	return int64(0)
}
