package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/view"
)

// reportOptions are the flags and arguments of `wfb report`.
type reportOptions struct {
	DB         string
	Format     string
	By         string
	HTML       string
	Usage      string
	Selections []string
}

func newReportCmd(s *Streams) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [RUN|LABEL|FILTER...]",
		Short: "Tabulate cells per arm: outcomes, strict and clean rates, medians",
		Long: `Tabulate the cells of runs per arm (or per task and arm with --by task,arm).

Without arguments the newest bench run (wfb run, wfb demo) is reported, an
ad-hoc wfb session started since passed over (the newest session where the
file holds nothing else); stderr says which run was picked and why. An argument is a run id, a label
(every run with it), or one filter key=value[,key=value] over results columns
(day=YYYY-MM-DD matches the UTC date started_at; run=/label= narrow to runs).

A cell is one run × task × arm × rep. Its outcome is its final attempt's (the
highest attempt number, where its retry chain ended), as in wfb diff, so a
cell that hit a provider error and passed on retry counts once, as ok.
Nothing is dropped: cells = ok + failed, one column per error kind the final
attempts ended with; attempts counts every attempt, and retried the attempts
superseded by a retry (a footnote names the kinds they ended with).
  strict rate = ok / cells
  clean rate  = ok / (cells − errored)
where errored cells ended with an error the workflow was never fairly
measured on:
  ` + strings.Join(wfb.ErroredKinds(), ", ") + `
Every other kind is a failure of the workflow and stays in both denominators.

Medians and quartiles are per cell. A cell's tokens, cost, turns and wall time
are sums over all its attempts, retries included (what one cell cost); its
review quality is its final attempt's. They use measured values only; n says
how many cells, and a footnote counts the cells whose sum misses an unmeasured
attempt (a lower bound). NULL means not measured. The cost total sums every
attempt's measured cost; with * some attempts' cost was not measured.

` + floatsHelp + `

TSV (the default when piped) writes each table's title as a "# " comment line
above its header and its footnotes as "# " lines below the rows: read it with
comment lines skipped (pandas comment='#', grep -v '^#').

Token metrics are the provider's wire where the session was metered
(usage_source metered), the agent's report elsewhere; --usage reported shows
the agent's own figures. A footnote counts, per arm, the attempts whose usage
the agent reported other than the wire (usage_check).

--html FILE also writes one self-contained page of the viewer (wfb view) for
the same selection: the tables, and charts grouped as the tables are (a set
per task with --by task,arm): cost against quality over the cells where
both were measured, outcomes, distributions; arms keyed by marker; "not
measured" said in words. When the selection spans several days
(else labels) the page adds the wfb trend of pass rate, cost and quality.

On a screen narrower than the table (COLUMNS, else the terminal's width), the
box leaves out its least important columns first and says which in a note;
ids are never wrapped. --format tsv, csv or json always has every column.`,
		Example: `  wfb report
  wfb report --by task,arm --format markdown >> "$GITHUB_STEP_SUMMARY"
  wfb report nightly --html report.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Selections = args
			return reportRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	dbFlag(cmd, &opts.DB)
	allowTamperedFlag(cmd, s)
	formatFlag(cmd, &opts.Format)
	f.StringVar(&opts.By, "by", "arm", "grouping: arm, or task,arm")
	f.StringVar(&opts.HTML, "html", "", "also write the report as one self-contained viewer page, with charts, to this file")
	usageFlag(cmd, &opts.Usage)
	return cmd
}

// usageFlag declares --usage, shared by report and diff.
func usageFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "usage", report.UsageMetered,
		"token figures: metered (the provider's wire where the session was metered, else the agent's) or reported (the agent's own)")
}

// selectReport turns the arguments of `wfb report` into one selection
// (report.Pick) and, for the latest run, says on stderr which and why.
func selectReport(ctx context.Context, s *Streams, r *resultsReader, args []string) (report.Selection, error) {
	sel, err := report.Pick(ctx, r.db, r.cols, r.runs, args)
	if err != nil || len(args) > 0 {
		return sel, err
	}
	note, err := report.LatestNote(ctx, r.db, r.runs, sel.RunIDs[0])
	if err != nil {
		return sel, err
	}
	fmt.Fprintln(s.ErrOut, "wfb report: "+note)
	return sel, nil
}

func reportRun(ctx context.Context, s *Streams, opts *reportOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	byTask, err := parseBy(opts.By)
	if err != nil {
		return err
	}
	r, err := openUsageReader(ctx, s, opts.DB, opts.Usage)
	if err != nil {
		return err
	}
	defer r.Close()
	sel, err := selectReport(ctx, s, r, opts.Selections)
	if err != nil {
		return err
	}

	metrics := r.cols.Metrics()
	topts := report.TabulateOptions{ByTask: byTask, Metrics: metrics}
	present := map[string]bool{}
	if opts.HTML != "" {
		// The charts are drawn from the tables' own tabulation, so they
		// group as the tables do and show the same cells.
		topts.Keep = []report.Metric{report.CostUSD, report.Turns, report.WeightedF1, report.VerdictCorrect}
	}
	tab := report.NewTabulator(topts)
	err = r.rows(ctx, sel, func(row *report.Row) {
		tab.Add(row)
		present[row.RunID] = true
	})
	if err != nil {
		return err
	}
	what := report.Describe(sel, r.runs)
	title := "wfb report: " + what
	result := tab.Result()
	if len(result.Groups) == 0 {
		return badInput("%s: no attempts recorded", what)
	}
	if result.Tools, err = report.LoadToolUse(ctx, r.db, r.cols, sel, byTask); err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeReportHTML(ctx, s, r, sel, present, opts.HTML, view.ReportPage{
			Title: title, Tables: result.Tables(title, report.FormatTable), Charts: result}); err != nil {
			return err
		}
	}
	return s.renderAll(result.Tables(title, format), format)
}

// writeReportHTML writes the report's page (view.WriteReportPage), with
// the trend the page adds (report.PageTrend).
func writeReportHTML(ctx context.Context, s *Streams, r *resultsReader, sel report.Selection, present map[string]bool, path string, page view.ReportPage) error {
	tr, err := report.PageTrend(ctx, r.db, r.cols, r.runs, sel, present)
	if err != nil {
		return err
	}
	page.Trend, page.Tampered = tr, r.db.Tampered()
	if err := view.WriteReportPage(path, page); err != nil {
		return err
	}
	fmt.Fprintf(s.ErrOut, "wrote %s\n", path)
	return nil
}
