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

// printRow prints one result row in the requested format: field/value
// lines for people, one record (columns = fields) for csv and json.
func printRow(s *Streams, r store.Result, format string) error {
	f, err := outputFormat(s, format)
	if err != nil {
		return err
	}
	return report.Render(s.Out, report.ResultTable(r, f), f)
}
