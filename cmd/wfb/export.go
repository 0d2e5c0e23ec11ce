package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
)

// exportOptions are the flags and arguments of `wfb export`.
type exportOptions struct {
	DB     string
	Format string
	Run    string
}

func newExportCmd(s *Streams) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN|LABEL [--format csv|jsonl]",
		Short: "Write every results column of a run as CSV or JSON Lines",
		Long: `Write every attempt of a run (or of every run with a label) with every
results column, in the schema's column order, for pandas, DuckDB and friends.

NULL (not measured) is an empty field in CSV and null in JSON Lines; a
measured 0 is 0. Evidence (stdout/stderr tails) is not exported; query the
evidence table with wfb sql for that.

` + floatsHelp,
		Example: `  wfb export nightly --format jsonl > nightly.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("export takes exactly one RUN or LABEL, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			return exportRun(cmd.Context(), s, opts)
		},
	}
	dbFlag(cmd, &opts.DB)
	allowTamperedFlag(cmd, s)
	cmd.Flags().StringVar(&opts.Format, "format", "csv", "output format: csv or jsonl")
	return cmd
}

func exportRun(ctx context.Context, s *Streams, opts *exportOptions) error {
	format, err := report.ParseExportFormat(opts.Format)
	if err != nil {
		return asBadInput(err)
	}
	r, err := openReader(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer r.Close()
	sel, err := r.resolve(ctx, opts.Run)
	if err != nil {
		return err
	}
	if sel.IsFilter() {
		return badInput("export takes a run id or label, not a filter (%s); use wfb sql to filter", opts.Run)
	}
	return report.Export(ctx, r.db, r.cols, sel.RunIDs, format, s.Out)
}
