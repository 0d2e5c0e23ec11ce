package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
)

// trendOptions are the flags and arguments of `wfb trend`.
type trendOptions struct {
	DB       string
	Format   string
	By       string
	Metric   string
	Baseline string
	Alpha    float64
	Usage    string
	Filter   string
	Detect   string
}

func newTrendCmd(s *Streams) *cobra.Command {
	opts := &trendOptions{}
	cmd := &cobra.Command{
		Use:   "trend [FILTER]",
		Short: "Follow each arm's metrics over days, labels or runs, flagging real changes",
		Long: `Follow each arm's metrics across the results file, bucket by bucket: --by day
(the UTC date a run started), label or run, in the order the buckets started.

For each arm, metric and bucket: the centre (median per cell, or pass rate)
with its confidence interval at 1 − alpha, and the change from the previous
bucket, tested exactly as wfb diff tests A against B (same cells, pairing
and tests). "changed" flags a significant step; "~" is not significant,
"n/c" not comparable. --baseline X also compares every bucket with bucket X.

FILTER (a run id, label or key=value filter, as for wfb report) narrows the
attempts; without it, every run is in. --metric keeps some metrics:
pass_rate (the strict rate), clean_pass_rate, or results columns such as
cost_usd, duration_ms (comma-separated).

Each step also says what change it could detect ("detectable", 80% power,
as wfb diff computes it), and --detect 10%,5pp how many cells per arm (and
the bench's runs:) would find that change between two buckets.

--by day needs runs started on two UTC dates or more; one day is one bucket
and nothing to compare. To try trend before a second day, bucket by label
(wfb demo records its runs with the label demo; wfb run takes --label):
  wfb run bench.yaml --label try-1 && wfb run bench.yaml --label try-2
  wfb trend --by label
or by run (wfb demo twice, then wfb trend --by run).`,
		Example: `  wfb trend --by day --metric pass_rate,cost_usd
  wfb trend arm=candidate --by label --baseline nightly-1 --format markdown
  wfb trend --by run --metric cost_usd --detect 10%`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return badInput("trend takes at most one FILTER, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Filter = args[0]
			}
			return trendRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	dbFlag(cmd, &opts.DB)
	allowTamperedFlag(cmd, s)
	formatFlag(cmd, &opts.Format)
	f.StringVar(&opts.By, "by", "day", "buckets: day, label or run")
	f.StringVar(&opts.Metric, "metric", "", "metrics to show, comma-separated (default all)")
	f.StringVar(&opts.Baseline, "baseline", "", "also compare every bucket with this one")
	f.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level, in (0, 1)")
	usageFlag(cmd, &opts.Usage)
	detectFlag(cmd, &opts.Detect)
	return cmd
}

func trendRun(ctx context.Context, s *Streams, opts *trendOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return badInput("--alpha %v: want a number between 0 and 1, e.g. 0.05", opts.Alpha)
	}
	keys, err := report.ParseTrendKeys(opts.Metric)
	if err != nil {
		return err
	}
	det, err := parseDetect(opts.Detect)
	if err != nil {
		return err
	}
	r, err := openUsageReader(ctx, s, opts.DB, opts.Usage)
	if err != nil {
		return err
	}
	defer r.Close()
	sel := report.Selection{Spec: "all"}
	if opts.Filter != "" {
		if sel, err = r.resolve(ctx, opts.Filter); err != nil {
			return err
		}
	}
	// The buckets are those of the runs the selection touches.
	present, err := report.RunsWithRows(ctx, r.db, sel)
	if err != nil {
		return err
	}
	tr, err := report.TrendOf(ctx, r.db, r.cols, r.runs, sel, present,
		report.TrendOptions{Alpha: opts.Alpha, Metrics: r.cols.Metrics(), Keys: keys, By: opts.By, Detect: det}, opts.Baseline)
	if err != nil {
		return err
	}
	return s.renderAll(tr.Tables(format), format)
}
