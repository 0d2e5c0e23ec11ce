package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
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
		Use:   "rescore RUN|LABEL --bench FILE [--db FILE] [--format FORMAT]",
		Short: "Score a run's stored review artifacts again with the bench's current labels",
		Long: `Score every review attempt of RUN (or of every run with LABEL) again,
from the artifact stored with it, against the labels (and verdict) its task
has in the bench file now.

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

Ratios are rounded to three decimals for people (table, tsv, markdown),
whole for programs (csv, json), as in wfb report.

Exit status 2 for a bad bench file, an unknown run, a run another wfb
process is recording (it names the process), or a missing results file.`,
		Example: `  wfb rescore run-20261130T024031Z-1f2e3d4c --bench bench.yaml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("rescore takes exactly one RUN id or LABEL, got %d arguments", len(args))
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
		return err
	}
	path := dbPath(opts.DB, s)
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	runIDs, err := rescoreRuns(ctx, db, opts.RunID)
	if err != nil {
		return err
	}
	// The same fields: report builds from what runner returns, never
	// importing runner.
	var rows []report.RescoreRow
	for _, id := range runIDs {
		rescored, err := runner.Rescore(ctx, db, id, b)
		if err != nil {
			return err
		}
		for _, r := range rescored {
			rows = append(rows, report.RescoreRow(r))
		}
	}
	return s.render(report.RescoreTable("rescore "+opts.RunID+" against "+opts.Bench, rows, format), format)
}

// rescoreRuns resolves RUN as export does: a run id or, failing that, a
// label (every run with it). A filter is refused: rescore adds rows.
func rescoreRuns(ctx context.Context, db *store.DB, spec string) ([]string, error) {
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		return nil, err
	}
	runs, err := report.LoadRuns(ctx, db)
	if err != nil {
		return nil, err
	}
	sel, err := report.ResolveSelection(ctx, db, cols, runs, spec)
	switch {
	case err != nil:
		return nil, err
	case sel.IsFilter():
		return nil, badInput("rescore takes a run id or label, not a filter (%s)", spec)
	}
	return sel.RunIDs, nil
}
