package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
)

// runsOptions are the flags of `wfb runs`.
type runsOptions struct {
	DB     string
	Format string
}

func newRunsCmd(s *Streams) *cobra.Command {
	opts := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs in the results file",
		Long: `List every run in the results file, oldest first: id, label, start time,
status, cells (distinct task/arm/rep), attempts, ok, failed and cost.

The cost is the run's total only when every attempt's cost was measured;
otherwise it is the sum of the measured costs, marked * and explained in a
footnote (NULL in csv/json, with cost_usd_measured_sum beside it).

On a screen narrower than the table (COLUMNS, else the terminal's width), the
box leaves out its least important columns first and says which in a note;
ids are never wrapped. --format tsv, csv or json always has every column.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runsRun(cmd.Context(), s, opts)
		},
	}
	dbFlag(cmd, &opts.DB)
	allowTamperedFlag(cmd, s)
	formatFlag(cmd, &opts.Format)
	return cmd
}

func runsRun(ctx context.Context, s *Streams, opts *runsOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	db, err := openResults(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := report.LoadRunStats(ctx, db)
	if err != nil {
		return err
	}
	return s.render(report.RunsTable(runs, format), format)
}
