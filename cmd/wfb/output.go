package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// parseOutputFormat accepts "auto" or a report format.
func parseOutputFormat(s string) (string, error) {
	if s == "auto" || s == "" {
		return "auto", nil
	}
	f, err := report.ParseFormat(s)
	if err != nil {
		return "", err
	}
	return string(f), nil
}

// floatsHelp is how every format writes a number with a fraction, for the
// help of the commands that print them (see report's decimal).
const floatsHelp = `A number with a fraction is written, in every format, as the shortest
decimal of at most 15 significant digits: float64 holds 15 decimal digits
exactly, and its 16th and 17th are the noise of arithmetic on decimal
inputs, so a cost summed to 0.30000000000000004 prints 0.3 and wall seconds
summed to 10.180000000000001 print 10.18. A cost keeps better than 1e-9 USD
below $1M, a time in seconds better than a microsecond; for every bit of a
stored real, select printf('%.17g', x) in wfb sql.`

// formatFlag adds --format for a command that prints report tables; "auto"
// is resolved by outputFormat.
func formatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
}

// outputFormat resolves "auto": a table on a terminal, TSV when piped.
func outputFormat(s *Streams, flag string) (report.Format, error) {
	f, err := parseOutputFormat(flag)
	if err != nil {
		return "", asBadInput(err)
	}
	if f == "auto" {
		if s.OutIsTerminal {
			return report.FormatTable, nil
		}
		return report.FormatTSV, nil
	}
	return report.Format(f), nil
}

// defaultWidth is what a box table is fitted to when neither COLUMNS nor
// a terminal says the width: a box table is for people, and a row wider
// than the viewer is soft-wrapped and breaks the box, so a table written
// to a file, a pager or a CI log fits a common pane (a CI log, a PR code
// block, half a screen). Programs get tsv, csv or json, never wrapped.
const defaultWidth = 100

// tableWidth is the width box tables are fitted to: COLUMNS when set to a
// positive number (a user's or CI's choice wins), else Out's terminal's,
// else defaultWidth.
func (s *Streams) tableWidth() int {
	if s.Getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s.Getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if s.OutIsTerminal && s.OutWidth > 0 {
		return s.OutWidth
	}
	return defaultWidth
}

// render writes t to Out in format f, a box table fitted to tableWidth.
func (s *Streams) render(t *report.Table, f report.Format) error {
	return report.RenderFit(s.Out, s.noted(t), f, s.tableWidth())
}

// noted is t with the tampered file's note first among its footnotes (and
// carried to programs too: a JSON object with "notes", CSV "# " lines), or
// t itself for a file wfb's guarantees hold in.
func (s *Streams) noted(t *report.Table) *report.Table {
	if s.tamperNote == "" || t == nil {
		return t
	}
	c := *t
	c.Footnotes = append([]string{s.tamperNote}, t.Footnotes...)
	c.Notes = true
	return &c
}

// renderAll writes tables to Out as render does.
func (s *Streams) renderAll(tables []*report.Table, f report.Format) error {
	noted := make([]*report.Table, len(tables))
	for i, t := range tables {
		noted[i] = s.noted(t)
	}
	return report.RenderAllFit(s.Out, noted, f, s.tableWidth())
}

// printRow prints the session's result row in the requested format:
// field/value lines for people, and for programs (csv, json) the attempt
// as wfb export writes it, read back from db: every export column, in the
// export's order, so the two cannot drift apart.
func printRow(ctx context.Context, s *Streams, db *store.DB, r store.Result, format string) error {
	f, err := outputFormat(s, format)
	if err != nil {
		return err
	}
	if report.Human(f) {
		return s.render(report.ResultTable(r), f)
	}
	// Printed even after Ctrl-C: the row is recorded.
	ctx = context.WithoutCancel(ctx)
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		return err
	}
	t, err := report.AttemptRecord(ctx, db, cols, r.AttemptID)
	if err != nil {
		return err
	}
	return s.render(t, f)
}
