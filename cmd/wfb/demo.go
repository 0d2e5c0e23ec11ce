package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/examples"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// demoData is the demo's own part of its bench: the bench file, the mock
// scripts its cells are served from and the workspace only it uses. The
// leading underscore keeps the go tool out of the directory.
//
//go:embed _demodata
var demoData embed.FS

// demoFromExamples are the demo bench's workspaces and skill that are the
// examples' (package examples), by where the bench finds them: one copy,
// byte for byte what the labels point into.
var demoFromExamples = []struct{ at, example string }{
	{"workspaces/auth", "_workspaces/auth"},
	{"workspaces/calc", "_workspaces/calc"},
	{"skills/small-fixes", "tools/skills/small-fixes"},
}

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

// demoExpect is the final outcome each (task, arm) of the demo must have.
var demoExpect = map[[2]string]string{
	{"fix-sum", "baseline"}: "", {"fix-sum", "thorough"}: "", {"fix-sum", "gateway"}: wfb.KindSessionError,
	{"review-auth", "baseline"}: "", {"review-auth", "thorough"}: "", {"review-auth", "gateway"}: wfb.KindSessionError,
	{"summarize", "baseline"}: "", {"summarize", "thorough"}: "", {"summarize", "gateway"}: wfb.KindSessionError,
	{"fix-sum", "code-intel"}: "", {"review-auth", "code-intel"}: "", {"summarize", "code-intel"}: wfb.KindWorkflowNotUsed,
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
	if err := extract(demoData, "_demodata", tmp); err != nil {
		return fmt.Errorf("unpack the demo bench: %w", err)
	}
	for _, e := range demoFromExamples {
		if err := extract(examples.FS, e.example, filepath.Join(tmp, filepath.FromSlash(e.at))); err != nil {
			return fmt.Errorf("unpack the demo bench: %w", err)
		}
	}
	b, err := bench.Load(filepath.Join(tmp, "bench.yaml"), checkScript)
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
	if bad := demoSurprises(rows, b.Runs); len(bad) > 0 {
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

// demoStory says what the demo's bench is built to show, row by row of
// its outcome table; lines at most 80 wide.
const demoStory = `What to look for:
  summarize task    the provider answers 529 first: the cell is retried as a
                    linked attempt (retried) and counts once, by its last
  gateway arm       its provider omits a usage field: the row is refused
                    (session-error), never recorded as zero tokens and cost
  review-auth task  the review tries to tamper with the workspace it reviews:
                    the write fails; its findings are scored against labels
  code-intel arm    given an MCP server and a skill; on summarize it never
                    calls the tool its workflow expects (workflow-not-used)
`

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
		len(b.Tasks), len(b.Arms), b.Runs, demoStory)
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

// demoSurprises compares each cell's last attempt with demoExpect, checks
// that every (task, arm) recorded reps cells, and that the 529s were
// retried as linked attempts.
func demoSurprises(rows []store.Result, reps int) []string {
	last := map[bench.Cell]store.Result{}
	byID := map[string]store.Result{}
	for _, r := range rows {
		byID[r.AttemptID] = r
		k := bench.Cell{Task: r.Task, Arm: r.Arm, Rep: r.Rep}
		if r.Attempt >= last[k].Attempt {
			last[k] = r
		}
	}
	var bad []string
	for k, r := range last {
		want, ok := demoExpect[[2]string{k.Task, k.Arm}]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("a cell %s × %s", k.Task, k.Arm))
		case r.ErrorKind != want:
			bad = append(bad, fmt.Sprintf("%s × %s #%d ended %q (%s), want %q", k.Task, k.Arm, k.Rep, r.ErrorKind, r.ErrorDetail, want))
		case k.Task == "summarize" && want == "":
			prev, linked := byID[r.RetryOf]
			if r.Attempt != 2 || !linked || prev.ErrorKind != wfb.KindProviderError {
				bad = append(bad, fmt.Sprintf("summarize × %s #%d: the 529 was not retried as attempt 2 linked to a provider-error", k.Arm, k.Rep))
			}
		}
	}
	if len(last) != len(demoExpect)*reps {
		bad = append(bad, fmt.Sprintf("%d cells recorded, want %d", len(last), len(demoExpect)*reps))
	}
	return bad
}

// extract writes the tree under root of fsys into dir: directories 0755
// and files 0644, readable by the unprivileged session uid.
func extract(fsys fs.FS, root, dir string) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, 0o755)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
