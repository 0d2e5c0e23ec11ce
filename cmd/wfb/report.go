package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// reportOptions are the flags and arguments of `wfb report`.
type reportOptions struct {
	DB         string
	Format     string
	By         string
	HTML       string
	Selections []string
}

func newReportCmd(s *Streams) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [RUN|LABEL|FILTER...]",
		Short: "Tabulate attempts per arm: outcomes, strict and clean rates, medians",
		Long: `Tabulate the attempts of runs per arm (or per task and arm with --by task,arm).

Without arguments the latest run is reported. An argument is a run id, a label
(every run with it), or one filter key=value[,key=value] over results columns
(day=YYYY-MM-DD matches the UTC date started_at; run=/label= narrow to runs).

Every attempt counts: attempted = ok + failed, one column per error kind.
  strict rate = ok / attempted
  clean rate  = ok / (attempted − errored)
where errored attempts were never fairly measured (` + strings.Join(report.ErrorKindsExcluded(), ", ") + `);
every other kind is a failure of the workflow and stays in both denominators.
Medians and quartiles use measured values only; n says how many. NULL means
not measured. A cost total with * sums only the measured costs.

--html FILE also writes one self-contained HTML page with charts.`,
		Example: `  wfb report
  wfb report --by task,arm --format markdown >> "$GITHUB_STEP_SUMMARY"
  wfb report nightly --html report.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Selections = args
			return reportRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	f.StringVar(&opts.Format, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
	f.StringVar(&opts.By, "by", "arm", "grouping: arm, or task,arm")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to this file")
	return cmd
}

// parseBy reads --by: "arm" or "task,arm" (in either order). It reports
// whether to group by task as well.
func parseBy(by string) (bool, error) {
	parts := strings.Split(strings.ReplaceAll(by, " ", ""), ",")
	switch {
	case len(parts) == 1 && parts[0] == "arm":
		return false, nil
	case len(parts) == 2 && ((parts[0] == "task" && parts[1] == "arm") || (parts[0] == "arm" && parts[1] == "task")):
		return true, nil
	}
	return false, badInput("--by %q: want arm or task,arm", by)
}

// openResults opens the results file read-only, classifying the user's
// mistakes (no such file, not a results file, a schema this wfb cannot
// read) as bad input.
func openResults(ctx context.Context, s *Streams, flag string) (*store.DB, error) {
	db, err := store.OpenReadOnly(ctx, dbPath(flag, s))
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, store.ErrNotResultsFile),
			errors.Is(err, store.ErrSchemaTooNew), errors.Is(err, store.ErrSchemaTooOld):
			return nil, asBadInput(err)
		}
		return nil, err
	}
	return db, nil
}

// selectionError marks a selection the file cannot satisfy as bad input.
func selectionError(err error) error {
	if errors.Is(err, report.ErrSelection) {
		return asBadInput(err)
	}
	return err
}

// resolveReportSelections turns the arguments of `wfb report` into one
// selection: the latest run, the union of named runs, or a single filter.
func resolveReportSelections(ctx context.Context, db *store.DB, cols report.Columns, runs []report.RunInfo, args []string) (report.Selection, error) {
	if len(args) == 0 {
		sel, err := report.LatestRun(runs)
		return sel, selectionError(err)
	}
	var union report.Selection
	for _, a := range args {
		sel, err := report.ResolveSelection(ctx, db, cols, runs, a)
		if err != nil {
			return report.Selection{}, selectionError(err)
		}
		if sel.IsFilter() {
			if len(args) > 1 {
				return report.Selection{}, badInput("a filter (%s) must be the only argument; put every condition in it, comma-separated", a)
			}
			return sel, nil
		}
		for _, id := range sel.RunIDs {
			if !containsString(union.RunIDs, id) {
				union.RunIDs = append(union.RunIDs, id)
			}
		}
	}
	union.Spec = strings.Join(args, " ")
	return union, nil
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// describe names a selection for a title: a run with its label and status,
// several runs, or a filter.
func describe(sel report.Selection, runs []report.RunInfo) string {
	if sel.IsFilter() {
		return "filter " + sel.Spec
	}
	rs := report.RunsOf(runs, sel.RunIDs)
	if len(rs) == 1 {
		r := rs[0]
		d := "run " + r.ID
		if r.Label != "" {
			d += " (" + r.Label + ")"
		}
		return d + ", " + r.Status
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return fmt.Sprintf("%d runs (%s)", len(rs), strings.Join(ids, ", "))
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
	db, err := openResults(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		return err
	}
	runs, err := report.LoadRuns(ctx, db)
	if err != nil {
		return err
	}
	sel, err := resolveReportSelections(ctx, db, cols, runs, opts.Selections)
	if err != nil {
		return err
	}

	metrics := cols.Metrics()
	tab := report.NewTabulator(report.TabulateOptions{ByTask: byTask, Metrics: metrics})
	var byArm *report.Tabulator
	if opts.HTML != "" {
		byArm = report.NewTabulator(report.TabulateOptions{Metrics: metrics, Keep: []report.Metric{report.CostUSD, report.Turns}})
	}
	err = report.LoadRows(ctx, db, cols, sel, func(r *report.Row) {
		tab.Add(r)
		if byArm != nil {
			byArm.Add(r)
		}
	})
	if err != nil {
		return err
	}
	title := "wfb report: " + describe(sel, runs)
	result := tab.Result()
	if len(result.Groups) == 0 {
		return badInput("%s: no attempts recorded", describe(sel, runs))
	}
	if opts.HTML != "" {
		var page strings.Builder
		err := report.WriteHTML(&page, report.HTMLInput{Title: title, Tables: result.Tables(title, report.FormatTable), ByArm: byArm.Result()})
		if err != nil {
			return err
		}
		if err := os.WriteFile(opts.HTML, []byte(page.String()), 0o644); err != nil {
			return fmt.Errorf("write html report: %w", err)
		}
		fmt.Fprintf(s.ErrOut, "wrote %s\n", opts.HTML)
	}
	return report.RenderAll(s.Out, result.Tables(title, format), format)
}
