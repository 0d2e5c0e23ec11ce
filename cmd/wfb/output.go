package main

import (
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

// nullable is a table cell for a measurement that may be missing: NULL
// rather than a zero.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// rowTable shows one result row as field/value pairs, NULL kept apart from
// zero.
func rowTable(r store.Result) *report.Table {
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	ok := int64(0)
	if r.OK {
		ok = 1
	}
	fields := []struct {
		name  string
		value any
	}{
		{"run_id", r.RunID}, {"attempt_id", r.AttemptID}, {"task", r.Task}, {"arm", r.Arm},
		{"agent", r.Agent}, {"model", str(r.Model)}, {"sandbox", r.Sandbox},
		{"ok", ok}, {"error_kind", str(r.ErrorKind)}, {"error_detail", str(r.ErrorDetail)},
		{"process_state", r.ProcessState}, {"exit_code", nullable(r.ExitCode)}, {"duration_ms", nullable(r.DurationMS)},
		{"input_tokens", nullable(r.InputTokens)}, {"output_tokens", nullable(r.OutputTokens)},
		{"cache_read_input_tokens", nullable(r.CacheReadInputTokens)},
		{"cache_creation_input_tokens", nullable(r.CacheCreationInputTokens)},
		{"cost_usd", nullable(r.CostUSD)}, {"cost_source", str(r.CostSource)}, {"num_turns", nullable(r.NumTurns)},
		{"session_id", str(r.SessionID)}, {"verdict", str(r.Verdict)}, {"findings_count", nullable(r.FindingsCount)},
	}
	t := &report.Table{Columns: []string{"field", "value"}}
	for _, f := range fields {
		t.Rows = append(t.Rows, []any{f.name, f.value})
	}
	return t
}

// printRow prints one result row in the requested format: field/value
// lines for people, one record (columns = fields) for csv and json.
func printRow(s *Streams, r store.Result, format string) error {
	f, err := outputFormat(s, format)
	if err != nil {
		return err
	}
	t := rowTable(r)
	if f == report.FormatJSON || f == report.FormatCSV {
		wide := &report.Table{Rows: [][]any{{}}}
		for _, kv := range t.Rows {
			wide.Columns = append(wide.Columns, kv[0].(string))
			wide.Rows[0] = append(wide.Rows[0], kv[1])
		}
		t = wide
	}
	return report.Render(s.Out, t, f)
}
