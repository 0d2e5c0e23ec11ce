package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/view"
)

// viewOptions are the flags of `wfb view`.
type viewOptions struct {
	DB       string
	Addr     string
	Token    string
	Export   string
	Compares []string // --compare A:B, as given
}

func newViewCmd(s *Streams) *cobra.Command {
	opts := &viewOptions{}
	cmd := &cobra.Command{
		Use:   "view [--db F] [--addr 127.0.0.1:0] [--token T] [--export DIR [--compare A:B]...]",
		Short: "Browse the results file in a local, read-only web viewer",
		Long: `Serve a read-only web viewer over the results file: runs, a run's report and
task × arm grid, each attempt down to its transcript, a comparison of two
runs, labels or filters as wfb diff (with a chart per metric: each arm's A
and B with their intervals), and each metric's trend per arm across
days or labels as wfb trend.

The first line of stdout is the viewer's URL; it serves until interrupted.
The file is opened read-only (the engine refuses writes), so a wfb run may
write it meanwhile: a reload shows the cells that landed. It listens on
loopback only, unless --addr names another interface AND --token is given
(then the URL carries ?token=, and a cookie keeps it). Pages use no CDN and
fetch nothing from elsewhere: it works offline.

A review attempt's page lists the findings and labels its latest score kept,
each finding found (TP) or not (FP) and each label found (TP) or missed (FN);
nothing is scored at page time (wfb rescore records a new score).

--export DIR writes the same pages as a static site (index.html, run/,
attempt/, trend/, compare/ — each run with the previous run of its label —
and static/) instead of serving them. --compare A:B (repeatable) also
writes the comparison of A with B, each a run id or a label (every run with
it) as wfb diff takes them, and links it from index.html; a name the file
lacks is bad input, and nothing is written.`,
		Example: `  wfb view
  wfb view --db results/wfb.db --addr 127.0.0.1:8080
  wfb view --export site/
  wfb view --export site/ --compare nightly-1:nightly-7 --compare baseline:candidate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Export == "" {
				if len(opts.Compares) > 0 {
					return badInput("--compare writes a comparison into a static export: give --export DIR too (the live viewer compares any two runs at /compare)")
				}
				if err := view.CheckAddr(opts.Addr, opts.Token); err != nil {
					return asBadInput(err)
				}
			}
			return viewRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	dbFlag(cmd, &opts.DB)
	allowTamperedFlag(cmd, s)
	f.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "host:port to listen on (port 0: any free port); beyond loopback it needs --token")
	f.StringVar(&opts.Token, "token", "", "a secret every request must present (required beyond loopback)")
	f.StringVar(&opts.Export, "export", "", "write the pages as a static site into this directory instead of serving")
	f.StringArrayVar(&opts.Compares, "compare", nil, "with --export, also write the comparison A:B (run ids or labels; repeatable)")
	return cmd
}

// comparePairs reads --compare A:B values: each two names, split at the
// one colon.
func comparePairs(values []string) ([]view.ComparePair, error) {
	var out []view.ComparePair
	for _, v := range values {
		a, b, _ := strings.Cut(v, ":")
		if strings.Count(v, ":") != 1 || strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
			return nil, badInput("--compare %q: want A:B, two run ids or labels (neither holding a colon), e.g. --compare nightly-1:nightly-7", v)
		}
		out = append(out, view.ComparePair{A: strings.TrimSpace(a), B: strings.TrimSpace(b)})
	}
	return out, nil
}

func viewRun(ctx context.Context, s *Streams, opts *viewOptions) error {
	pairs, err := comparePairs(opts.Compares)
	if err != nil {
		return err
	}
	db, err := openResults(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	srv, err := view.New(ctx, db, view.Options{Token: opts.Token})
	if err != nil {
		return err
	}
	if opts.Export != "" {
		st, err := srv.Export(ctx, opts.Export, view.ExportOptions{Compares: pairs})
		if errors.Is(err, report.ErrSelection) {
			return fmt.Errorf("--compare: %w", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "%s\n", filepath.Join(opts.Export, "index.html"))
		fmt.Fprintf(s.ErrOut, "wfb view: exported %d runs, %d attempts, %d trend pages and %d comparisons to %s\n", st.Runs, st.Attempts, st.Trends, st.Compares, opts.Export)
		return nil
	}
	return srv.Serve(ctx, opts.Addr, func(url string) {
		fmt.Fprintln(s.Out, url)
		fmt.Fprintf(s.ErrOut, "wfb view: serving %s read-only at %s; interrupt to stop\n", db.Path(), url)
	})
}
