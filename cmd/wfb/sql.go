package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

type sqlOptions struct {
	DB      string
	Format  string
	Query   string
	Timeout time.Duration // 0: no limit
}

// defaultSQLTimeout bounds a query of wfb sql unless --timeout says
// otherwise: every query over a results file of any size wfb writes ends
// well within it, and an endless one (a recursive CTE without a bound)
// is stopped instead of running until it is killed.
const defaultSQLTimeout = 30 * time.Second

func newSQLCmd(s *Streams) *cobra.Command {
	opts := &sqlOptions{}
	cmd := &cobra.Command{
		Use:   "sql [--db FILE] [--format FORMAT] QUERY",
		Short: "Run read-only SQL over the results file",
		Long: `Run one SQL query over the results file and print its rows.

The file is opened read-only by the engine itself: INSERT, UPDATE, DELETE,
DROP, ATTACH and PRAGMA tricks are refused by SQLite, whatever the query
looks like. The stable interface (names and columns; docs/sql.md describes
each) is ` + stableRelationsText() + `.

NULL means "not measured" and is printed as NULL (an empty field in csv,
null in json); 0 is a measured zero. --format auto draws a table on a
terminal and writes TSV when piped. Given several statements separated by
';', SQLite runs each and only the last one's rows are printed.

` + floatsHelp + `

A query runs for at most --timeout (default 30s; 0 for no limit): SQLite
is interrupted there, nothing is printed, and the exit status is 2, naming
the limit.

Exit status 2 for a query SQLite rejects, a query past --timeout, a write (a journal or locking
mode switch included), or a missing, damaged or foreign file. A file in a
read-only place is read with SQLite's immutable open, said on stderr.`,
		Example: `  wfb sql "SELECT arm, ok, cost_usd FROM results_v WHERE label = 'baseline'"
  wfb sql --format markdown "SELECT * FROM arm_summary_v" >> "$GITHUB_STEP_SUMMARY"`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("sql takes exactly one QUERY argument (quote it), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = args[0]
			return sqlRun(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	cmd.Flags().StringVar(&opts.Format, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultSQLTimeout, "stop the query after this long, exit 2 (0: no limit)")
	return cmd
}

func sqlRun(ctx context.Context, s *Streams, opts *sqlOptions) error {
	// Check the format before touching the file, so a typo fails fast.
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	if strings.TrimSpace(opts.Query) == "" {
		return badInput("sql: the query is empty")
	}
	if n, at := statements(opts.Query); n > 1 {
		return badInput("sql: the query holds %d statements (the second starts at byte %d); wfb sql runs one and shows its rows — SQLite would run them all and show only the last's: run each on its own", n, at)
	}
	if opts.Timeout < 0 {
		return badInput("sql: --timeout %s: want a duration of 0 (no limit) or more", opts.Timeout)
	}
	// wfb sql inspects any file wfb can open, one whose schema was changed
	// outside wfb included (saying so): it is how such a file is examined.
	s.allowTampered = true
	db, err := openResults(ctx, s, opts.DB)
	if err != nil {
		return err
	}
	defer db.Close()

	qctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		// modernc's driver interrupts SQLite (sqlite3_interrupt) when the
		// query's context ends.
		qctx, cancel = context.WithTimeout(ctx, opts.Timeout)
	}
	defer cancel()
	cols, rows, err := db.Query(qctx, opts.Query)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(qctx.Err(), context.DeadlineExceeded):
		return badInput("sql: the query ran past --timeout %s and was stopped; nothing was printed (give a longer --timeout, or 0 for no limit)", opts.Timeout)
	case errors.Is(err, store.ErrReadOnly):
		// SQLite's own words say which write it refused.
		detail := strings.TrimPrefix(err.Error(), store.ErrReadOnly.Error()+": ")
		return badInput("the results file is opened read-only; wfb sql cannot write (SQLite: %s)", detail)
	case err != nil:
		return err
	}
	return s.render(&report.Table{Columns: cols, Rows: rows}, format)
}

// stableRelations are the tables and views whose names and columns are the
// stable interface of the results file, as docs/sql.md's "The stable
// interface" lists them (a test holds the two and the schema together).
var stableRelations = struct{ tables, views []string }{
	tables: []string{"runs", "results", "evidence", "model_usage", "tool_uses", "artifacts", "scores", "requests", "exchanges", "transcripts"},
	views:  []string{"results_v", "measured_results_v", "cells_v", "latest_scores_v", "scored_results_v", "run_agents_v", "arm_tool_calls_v", "arm_tools_v", "arm_summary_v", "run_summary_v"},
}

// stableRelationsText spells stableRelations for the help text.
func stableRelationsText() string {
	return "the tables " + strings.Join(stableRelations.tables, ", ") +
		"\nand the views " + strings.Join(stableRelations.views, ", ")
}

// statements counts the SQL statements in q and says where the second
// starts (a byte offset): a semicolon ends a statement unless it stands in
// a string, a quoted name or a comment, and only semicolons, white space
// and comments may follow the last. SQLite itself would run every
// statement and give back only the last one's rows.
func statements(q string) (n int, second int) {
	inStatement := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == ';':
			inStatement = false
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			continue
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return max(n, 1), 0
			}
			i += end + 3
			continue
		}
		if !inStatement {
			inStatement = true
			n++
			if n == 2 {
				second = i
			}
		}
		if close := map[byte]byte{'\'': '\'', '"': '"', '`': '`', '[': ']'}[c]; close != 0 {
			end := strings.IndexByte(q[i+1:], close)
			if end < 0 {
				return n, second
			}
			i += end + 1 // a doubled quote ('') is two strings back to back: the same statement
		}
	}
	return n, second
}
