package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/internal/memlimit"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// dbFlag adds --db, the results file, resolved by dbPath.
func dbFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "db", "", "results file (default $WFB_DB or ./wfb.db)")
}

// openResults opens the results file read-only (exitRules classifies what
// the user can fix about it) and says when it had to be read immutable.
func openResults(ctx context.Context, s *Streams, flag string) (*store.DB, error) {
	db, err := store.OpenReadOnlyWith(ctx, dbPath(flag, s), store.ReadOptions{AllowTampered: s.allowTampered})
	if err != nil {
		return nil, err
	}
	sayImmutable(s, db)
	if t := db.Tampered(); len(t) > 0 {
		s.tamperNote = fmt.Sprintf("%s: its schema was changed outside wfb (%s): its guarantees (append-only rows, CHECKs, one row per cell attempt) no longer hold, and any figure here may be wrong.",
			db.Path(), strings.Join(t, "; "))
		fmt.Fprintln(s.ErrOut, "wfb: warning: "+s.tamperNote)
	}
	return db, nil
}

// allowTamperedFlag declares --allow-tampered on a command that reads a
// results file.
func allowTamperedFlag(cmd *cobra.Command, s *Streams) {
	cmd.Flags().BoolVar(&s.allowTampered, "allow-tampered", false,
		"read a results file whose schema was changed outside wfb (triggers or CHECKs dropped); every output then says its guarantees no longer hold")
}

// sayImmutable tells, in one line on stderr, that a results file was read
// with SQLite's immutable open (see store.DB.Immutable): its numbers are
// right, but a writer changing the file meanwhile would go unseen.
func sayImmutable(s *Streams, db *store.DB) {
	if db.Immutable() {
		fmt.Fprintf(s.ErrOut, "wfb: %s is in a read-only place (no -shm can be made beside it); reading it as immutable, so a writer changing it meanwhile would go unseen\n", db.Path())
	}
}

// resultsReader is a results file opened read-only together with what
// resolving a selection in it takes: the file's columns and its runs.
// Commands that select attempts (report, diff, export) start from one.
type resultsReader struct {
	db   *store.DB
	cols report.Columns
	runs []report.RunInfo
}

// openReader opens the results file named by the --db flag (see dbPath)
// and loads its columns and runs. The caller closes it.
func openReader(ctx context.Context, s *Streams, flag string) (*resultsReader, error) {
	db, err := openResults(ctx, s, flag)
	if err != nil {
		return nil, err
	}
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	runs, err := report.LoadRuns(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &resultsReader{db: db, cols: cols, runs: runs}, nil
}

// openUsageReader is openReader for the commands with --usage: it reads
// the flag first (bad input before the file is touched), then opens the
// file and says which token figures to take. These commands (report,
// diff, trend) hold a value per cell of their selection, so they run
// under a soft memory limit that follows that working set (memlimit).
func openUsageReader(ctx context.Context, s *Streams, dbFlag, usage string) (*resultsReader, error) {
	reported, err := report.ParseUsage(usage)
	if err != nil {
		return nil, asBadInput(err)
	}
	memlimit.Start()
	r, err := openReader(ctx, s, dbFlag)
	if err != nil {
		return nil, err
	}
	r.cols.Reported = reported
	return r, nil
}

// Close closes the results file.
func (r *resultsReader) Close() error { return r.db.Close() }

// resolve turns one argument (a run id, a label or a filter) into a
// selection; one the file cannot satisfy is report.ErrSelection.
func (r *resultsReader) resolve(ctx context.Context, spec string) (report.Selection, error) {
	return report.ResolveSelection(ctx, r.db, r.cols, r.runs, spec)
}

// rows streams the selected attempts to fn.
func (r *resultsReader) rows(ctx context.Context, sel report.Selection, fn func(*report.Row)) error {
	return report.LoadRows(ctx, r.db, r.cols, sel, fn)
}

// parseBy reads --by: "arm", or "task,arm" (rows per task, then arm). Any
// other grouping is refused: "arm,task" would promise rows ordered by arm
// first, which the tables do not do. It reports whether to group by task
// as well.
func parseBy(by string) (bool, error) {
	switch strings.ReplaceAll(by, " ", "") {
	case "arm":
		return false, nil
	case "task,arm":
		return true, nil
	}
	return false, badInput("--by %q: the groupings are arm and task,arm", by)
}
