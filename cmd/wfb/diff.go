package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
)

// diffOptions are the flags and arguments of `wfb diff`.
type diffOptions struct {
	DB     string
	Format string
	By     string
	Alpha  float64
	Usage  string
	A, B   string
}

func newDiffCmd(s *Streams) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs, labels or filters with honest statistics",
		Long: `Compare side A with side B, metric by metric, per arm (or per task and arm
with --by task,arm).

A and B are each a run id, a label (every run with it), or a filter
key=value[,key=value] over results columns, e.g. arm=baseline vs
arm=candidate, or day=2026-11-29 vs day=2026-11-30 (run=/label= narrow a
filter to runs; without them it spans the whole file).

For each metric: the centre of A and of B with confidence intervals at
1 − alpha, the relative change (B − A)/A, the p-value and the test:
  pass rates    exact McNemar on cells paired by task+rep (and arm when both
                sides have the arm; and run when both sides are the same
                runs), Fisher's exact test when cells do not pair one to one;
                each cell counts its last attempt
  other metrics Mann–Whitney U over measured values (medians shown)
"~" marks a change that is not significant at --alpha. Footnotes warn when
samples are too few to ever reach significance, when the sides ran different
bench fingerprints or agent versions, when the error-kind mix shifted, and
how many attempts per arm reported usage other than the provider's wire.

Token metrics are the wire's where the session was metered (usage_source
metered), the agent's elsewhere; --usage reported compares the agent's own.

--format markdown is a summary ready to paste into a pull request.`,
		Example: `  wfb diff nightly-2026-11-29 nightly-2026-11-30
  wfb diff arm=baseline arm=candidate --format markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return badInput("diff takes exactly two arguments, A and B (runs, labels or filters), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return diffRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	dbFlag(cmd, &opts.DB)
	formatFlag(cmd, &opts.Format)
	f.StringVar(&opts.By, "by", "arm", "grouping: arm, or task,arm")
	f.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level, in (0, 1)")
	usageFlag(cmd, &opts.Usage)
	return cmd
}

func diffRun(ctx context.Context, s *Streams, opts *diffOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	byTask, err := parseBy(opts.By)
	if err != nil {
		return err
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return badInput("--alpha %v: want a number between 0 and 1, e.g. 0.05", opts.Alpha)
	}
	reported, err := report.ParseUsage(opts.Usage)
	if err != nil {
		return asBadInput(err)
	}
	r, err := openReader(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer r.Close()
	r.cols.Reported = reported
	d := report.NewDiffer(report.DiffOptions{ByTask: byTask, Alpha: opts.Alpha, Metrics: r.cols.Metrics()})
	names := [2]string{"A", "B"}
	for side, spec := range [2]string{opts.A, opts.B} {
		sel, err := r.resolve(ctx, spec)
		if err != nil {
			return err
		}
		n := 0
		err = r.rows(ctx, sel, func(row *report.Row) {
			n++
			d.Add(side, row)
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return badInput("diff: side %s (%s) selects no attempts", names[side], spec)
		}
	}
	return report.RenderAll(s.Out, d.Result(r.runs).Tables(opts.A, opts.B, format), format)
}
