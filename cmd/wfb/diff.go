package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/report"
)

// diffOptions are the flags and arguments of `wfb diff`.
type diffOptions struct {
	DB     string
	Format string
	By     string
	Alpha  float64
	Usage  string
	FailOn string
	Detect string
	// AcceptInconclusive exits 0 when the gate cannot decide.
	AcceptInconclusive bool
	A, B               string
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
Δ is relative for metrics and in percentage points for pass rates (+25.0pp),
always shown with its interval (Δ 95% CI); "~" beside it marks a change that
is not significant at --alpha, "n/c" one that is not comparable (a side has
no values, or review quality was scored against different labels). Footnotes
warn when samples are too few to ever reach significance, when the sides ran
different bench fingerprints or agent versions, when pairing left cells out
of the clean rate, when the error-kind mix changed (with its significance),
and how many attempts per arm reported usage other than the provider's wire.
Footnotes follow the rows in every format: "# " lines in tsv and csv, a
"notes" array in json (whose rows are under "rows").

Token metrics are the wire's where the session was metered (usage_source
metered), the agent's elsewhere; --usage reported compares the agent's own.

--format markdown is a summary ready to paste into a pull request.

--fail-on RULES makes the diff a CI gate whose verdict (on stderr, and first
in markdown) is one of three:
  fail          exit 1: a change is significant — Holm across every test the
                rules look at, so the gate's false-alarm rate stays at
                --alpha — and beyond a rule's limit
  pass          exit 0: every change's interval lies within its limit
  inconclusive  exit 3 (0 with --accept-inconclusive): neither can be shown;
                the verdict names the rule, why, and the cells per side that
                would decide it
Rules, separated by commas:
  any               any significant change of any metric but wall time
  pass_rate<-5pp    the strict pass rate fell by more than 5 percentage points
                    (clean_pass_rate likewise)
  cost_usd>+10%     the median cost per cell rose by more than 10%
                    (any results column: input_tokens, duration_ms, num_turns…)
A rule that does not parse exits 2 naming what is wrong.

How many repetitions are enough: every line says what change its test could
detect at the current n ("detectable": found 4 times in 5, 80% power at
--alpha), judged from the observed spread — for metrics a shift of every
cell's value, relative to A's centre (Mann–Whitney U: the normal
approximation with U's variance under the shift); for rates in pp from A's
rate (Fisher: normal approximation with continuity correction; McNemar:
Connor's, a pair's two outcomes kept as strongly tied as observed). "none" = no
change could be found that often at this n. --detect 10% (metrics) and/or
5pp (rates), e.g. --detect 10%,5pp, adds "n needed": the cells per arm (pairs
when paired) to find that change, and the bench's runs: that gives them.

On a screen narrower than the table, the box leaves out test, n needed,
detectable and the sides' intervals first (a note says which); --format tsv,
csv or json always has every column.`,
		Example: `  wfb diff nightly-2026-11-29 nightly-2026-11-30
  wfb diff arm=baseline arm=candidate --format markdown >> "$GITHUB_STEP_SUMMARY"
  wfb diff main pr --fail-on 'pass_rate<-5pp,cost_usd>+10%' --format markdown
  wfb diff nightly-1 nightly-2 --detect 10%,5pp`,
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
	allowTamperedFlag(cmd, s)
	formatFlag(cmd, &opts.Format)
	f.StringVar(&opts.By, "by", "arm", "grouping: arm, or task,arm")
	f.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level, in (0, 1)")
	usageFlag(cmd, &opts.Usage)
	f.StringVar(&opts.FailOn, "fail-on", "", "gate: exit 1 when a significant change crosses a rule, 3 when a rule cannot be decided: any, pass_rate<-5pp, cost_usd>+10%, … (comma-separated)")
	f.BoolVar(&opts.AcceptInconclusive, "accept-inconclusive", false, "with --fail-on, exit 0 (not 3) when the gate is inconclusive; the verdict still says so")
	detectFlag(cmd, &opts.Detect)
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
	var rules []report.GateRule
	if opts.FailOn != "" {
		if rules, err = report.ParseGateRules(opts.FailOn); err != nil {
			return asBadInput(err)
		}
	}
	det, err := parseDetect(opts.Detect)
	if err != nil {
		return err
	}
	if !det.Asked() {
		// An inconclusive rule says how many cells would decide it.
		det = report.DetectForRules(rules)
	}
	r, err := openUsageReader(ctx, s, opts.DB, opts.Usage)
	if err != nil {
		return err
	}
	defer r.Close()
	df, err := report.DiffSides(ctx, r.db, r.cols, r.runs, opts.A, opts.B,
		report.DiffOptions{ByTask: byTask, Alpha: opts.Alpha, Detect: det})
	if err != nil {
		return err
	}
	return renderGated(s, df, rules, opts, format)
}

// renderGated writes the diff and, when there are rules, the gate's
// verdict — pass, fail or inconclusive, and why — on stderr and first in
// markdown. A failed gate exits 1, an inconclusive one 3 (0 with
// --accept-inconclusive).
func renderGated(s *Streams, df *report.Diff, rules []report.GateRule, opts *diffOptions, format report.Format) error {
	if len(rules) == 0 {
		return s.renderAll(df.Tables(opts.A, opts.B, format), format)
	}
	g := df.Gate(rules)
	verdict := g.Verdict()
	if format == report.FormatMarkdown {
		if _, err := fmt.Fprintf(s.Out, "%s\n\n", verdict); err != nil {
			return err
		}
	}
	if err := s.renderAll(df.Tables(opts.A, opts.B, format), format); err != nil {
		return err
	}
	fmt.Fprintln(s.ErrOut, termtext.Show(verdict, ""))
	switch {
	case g.Outcome == report.GateFail:
		return errNotOK
	case g.Outcome == report.GateInconclusive && !opts.AcceptInconclusive:
		return errInconclusive
	}
	return nil
}

// detectFlag declares --detect, for diff and trend.
func detectFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "detect", "", "say how many cells per arm would detect this change with 80% power: 10% (metrics), 5pp (rates), or 10%,5pp")
}

// parseDetect reads --detect; empty asks nothing.
func parseDetect(s string) (report.Detect, error) {
	if s == "" {
		return report.Detect{}, nil
	}
	d, err := report.ParseDetect(s)
	if err != nil {
		return report.Detect{}, asBadInput(err)
	}
	return d, nil
}
