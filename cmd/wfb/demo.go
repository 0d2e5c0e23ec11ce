package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/examples/demo"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

type demoOptions struct {
	DB     string
	Format string
}

func newDemoCmd(s *Streams) *cobra.Command {
	opts := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the embedded offline bench into the results file and show what it shows",
		Long: `Run wfb's embedded bench fully offline — every cell talks to its own scripted
mock provider and runs the stand-in agent in the host-unsafe sandbox — record
every attempt (failures included) in the results file, and show on one screen
what the bench is for, its outcome per task × arm (cells, ok, failed by kind,
retried), and the commands that show the rest: the full report and wfb view.
With --format, print the full wfb report of the run in that format instead.

The bench has three tasks (a bug fix checked by a verify command, a review
scored against labels, a summary), four arms and three repetitions. Its
scripts include an upstream 529 (a failed row, retried as a new linked
attempt), a provider that omits a cache usage field (refused, not
zero-filled), a review that tries to tamper with the workspace it
reviews (the write fails; the workspace is unchanged), and an arm given an
MCP server and a skill whose use is counted per session — where it never
calls the tool its workflow expects, the row says workflow-not-used.

Exit status 0 when every cell behaved as the demo expects.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return demoRun(cmd.Context(), s, opts) },
	}
	dbFlag(cmd, &opts.DB)
	formatFlag(cmd, &opts.Format)
	return cmd
}

func demoRun(ctx context.Context, s *Streams, opts *demoOptions) error {
	// The report comes after the sweep: a bad --format must fail before it.
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	// Without --format the demo fits one screen; with it, the full report.
	full := opts.Format != "auto" && opts.Format != ""
	// A directory any uid can traverse: as root, sessions run unprivileged.
	tmp, err := os.MkdirTemp("", "wfb-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	benchFile, err := demo.Unpack(tmp)
	if err != nil {
		return err
	}
	b, err := bench.Load(benchFile, checkScript)
	if err != nil {
		return fmt.Errorf("the embedded demo bench is invalid: %w", err)
	}
	o := runner.SweepOptions{Bench: b, Label: "demo", TempDir: tmp}
	var sum runner.Summary
	var path string
	if full {
		sum, path, err = sweepAndReport(ctx, s, opts.DB, opts.Format, "task,arm", "", o)
	} else {
		sum, path, err = sweepServed(ctx, s, opts.DB, o)
		if err == nil {
			err = demoScreen(context.WithoutCancel(ctx), s, b, path, sum.RunID, format)
		}
		if err == nil {
			err = sweepOutcome(s, sum, path, "")
		}
	}
	if err != nil {
		return err
	}
	rows, err := recordedRows(context.WithoutCancel(ctx), path, sum.RunID)
	if err != nil {
		return err
	}
	if bad := demo.Surprises(rows, b.Runs); len(bad) > 0 {
		for _, msg := range bad {
			fmt.Fprintln(s.ErrOut, "wfb demo: unexpected: "+msg)
		}
		return errNotOK
	}
	exe, _ := os.Executable()
	wfb := hintCommand(exe, exec.LookPath)
	db := ""
	if opts.DB != "" {
		db = " --db " + opts.DB
	}
	if full {
		// The report was just printed: point at what it does not show.
		fmt.Fprintf(s.ErrOut, "wfb demo: every cell behaved as expected. Browse every attempt, its transcript and tool calls:\n  %s view%s\n", wfb, db)
		return nil
	}
	fmt.Fprintf(s.Out, "\nEvery cell behaved as expected. Next, the full report and a browser view:\n  %s report%s --by task,arm %s\n  %s view%s\n",
		wfb, db, sum.RunID, wfb, db)
	return nil
}

// demoScreen prints what the demo shows on one screen: what its bench is,
// what to look for, and the run's outcome per task × arm in format.
func demoScreen(ctx context.Context, s *Streams, b *bench.Bench, path, runID string, format report.Format) error {
	r, err := openUsageReader(ctx, s, path, report.UsageMetered)
	if err != nil {
		return err
	}
	defer r.Close()
	sel, err := selectReport(ctx, s, r, []string{runID})
	if err != nil {
		return err
	}
	tab := report.NewTabulator(report.TabulateOptions{ByTask: true, Metrics: r.cols.Metrics()})
	if err := r.rows(ctx, sel, tab.Add); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "wfb demo: %d tasks × %d arms × %d repetitions, offline: each cell's agent talks\nto a scripted mock provider. %s\n",
		len(b.Tasks), len(b.Arms), b.Runs, demo.Story)
	return s.render(tab.Result().OutcomeTable("run "+runID+", cells by their final attempt"), format)
}

// hintCommand is how the user can run this wfb again, for a hint that
// works where it is printed: "wfb" when that is what the PATH finds,
// "go run ./cmd/wfb" for a binary `go run` built in its cache (the
// README's first command; nothing is installed), else the binary's path.
func hintCommand(exe string, lookPath func(string) (string, error)) string {
	if exe == "" {
		return "wfb"
	}
	if onPath, err := lookPath("wfb"); err == nil {
		a, errA := os.Stat(onPath)
		b, errB := os.Stat(exe)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "wfb"
		}
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/wfb"
	}
	return exe
}

// recordedRows reads back every attempt of a run.
func recordedRows(ctx context.Context, path, runID string) ([]store.Result, error) {
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Results(ctx, runID)
}
