package report

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/store"
)

// ExportFormat is an output format of `wfb export`.
type ExportFormat string

// Export formats.
const (
	// ExportCSV writes RFC 4180 CSV with a header line; NULL is an empty
	// field.
	ExportCSV ExportFormat = "csv"
	// ExportJSONL writes one JSON object per attempt, keys in column
	// order; NULL is null, and every value is spelled as FormatJSON
	// spells a cell (one encoder: floats as their decimal of at most 15
	// significant digits, bytes base64).
	ExportJSONL ExportFormat = "jsonl"
)

// ParseExportFormat returns the export format named s.
func ParseExportFormat(s string) (ExportFormat, error) {
	switch ExportFormat(s) {
	case ExportCSV, ExportJSONL:
		return ExportFormat(s), nil
	}
	return "", fmt.Errorf("unknown export format %q: valid formats are csv, jsonl", s)
}

// Export writes every results column of the runs' attempts to w, in the
// schema's column order (stable: migrations only append columns), followed
// by the attempt's latest review score where the file has scores, one line
// per attempt, run by run in insertion order. Values are written as stored: integers as
// integers, reals as their decimal of at most 15 significant digits (see
// decimal), NULL as an empty CSV field or JSON null.
func Export(ctx context.Context, src Source, cols Columns, runIDs []string, f ExportFormat, w io.Writer) error {
	if _, err := ParseExportFormat(string(f)); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var cw *csv.Writer
	if f == ExportCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(exportColumns(cols)); err != nil {
			return err
		}
	}
	names := exportColumns(cols)
	keys := make([][]byte, len(names))
	for i, n := range names {
		k, err := jsonValue(n)
		if err != nil {
			return err
		}
		keys[i] = k
	}
	q := "SELECT r.rowid, " + exportSelect(cols) +
		" WHERE r.rowid > ? AND r.run_id = ? ORDER BY r.rowid LIMIT " + strconv.Itoa(chunkRows)
	record := make([]string, len(names))
	for _, runID := range runIDs {
		if err := exportRun(ctx, src, q, runID, cols, cw, bw, keys, record); err != nil {
			return err
		}
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// exportSelect is the select list and FROM clause of what Export writes,
// in exportColumns' order, over results r (and its latest score s).
func exportSelect(cols Columns) string {
	names := exportColumns(cols)
	derived := exportDerived(cols)
	quoted := make([]string, len(names))
	for i, n := range names {
		switch {
		case i < len(cols.Names):
			quoted[i] = `r."` + n + `"`
		case i < len(cols.Names)+len(derived):
			quoted[i] = derived[i-len(cols.Names)].expr
		default:
			quoted[i] = `s."` + n + `"`
		}
	}
	from := " FROM results r"
	if cols.hasScores() {
		from += latestScore
	}
	return strings.Join(quoted, ", ") + from
}

// AttemptRecord is one attempt as Export writes it, as a one-row table for
// programs: the same columns in the same order, each value as Export
// reads it. `wfb session` prints it for csv and json, so a session's
// record and an export of its run cannot drift apart.
func AttemptRecord(ctx context.Context, src Source, cols Columns, attemptID string) (*Table, error) {
	_, rows, err := src.Query(ctx, "SELECT "+exportSelect(cols)+" WHERE r.attempt_id = ?", attemptID)
	if err != nil {
		return nil, fmt.Errorf("read attempt %s: %w", attemptID, err)
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("read attempt %s: %d rows, want 1", attemptID, len(rows))
	}
	return &Table{Columns: exportColumns(cols), Rows: rows}, nil
}

// exportRun writes one run's rows, a chunk at a time.
func exportRun(ctx context.Context, src Source, q, runID string, cols Columns, cw *csv.Writer, bw *bufio.Writer, keys [][]byte, record []string) error {
	last := int64(-1 << 62)
	for {
		_, rows, err := src.Query(ctx, q, last, runID)
		if err != nil {
			return fmt.Errorf("export run %s: %w", runID, err)
		}
		for _, r := range rows {
			last = asInt(r[0])
			vals := r[1:]
			if cw != nil {
				for i, v := range vals {
					record[i] = csvValue(v)
				}
				if err := cw.Write(record); err != nil {
					return err
				}
				continue
			}
			bw.WriteByte('{')
			for i, v := range vals {
				if i > 0 {
					bw.WriteByte(',')
				}
				bw.Write(keys[i])
				bw.WriteByte(':')
				b, err := jsonValue(v)
				if err != nil {
					return fmt.Errorf("export run %s: column %s: %w", runID, keys[i], err)
				}
				bw.Write(b)
			}
			bw.WriteString("}\n")
		}
		if len(rows) < chunkRows {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// exportColumns lists what Export writes: every results column, then,
// when the file has scores, the columns of each attempt's latest score
// (NULL for an attempt never scored).
// exportColumns are the results columns as stored, then the derived ones
// (exportDerived), then the latest score's.
func exportColumns(cols Columns) []string {
	names := slices.Clone(cols.Names)
	for _, d := range exportDerived(cols) {
		names = append(names, d.name)
	}
	return append(names, cols.Scores...)
}

// exportDerived are the columns an export adds to the stored ones: the
// attempt's cost by the one rule every report uses (store.UsageCostSQL,
// measured_results_v's usage_cost_usd) and its source, so a program reading
// an export sums the figure wfb runs and wfb report show, not the agent's
// cost_usd.
//
// A file with tool calls (schema 11) adds tool_uses: the attempt's calls by
// tool as JSON text, {"Read": 3, "mcp__docs__search": 1} in name order,
// NULL where tool_calls is NULL (not measured) and {} where it is 0.
func exportDerived(cols Columns) []struct{ name, expr string } {
	var out []struct{ name, expr string }
	if cols.Has("usage_source") && cols.Has("metered_cost_usd") {
		out = append(out, struct{ name, expr string }{"usage_cost_usd", store.UsageCostSQL("r")},
			struct{ name, expr string }{"usage_cost_source", store.UsageCostSourceSQL("r")})
	}
	if cols.Has("tool_calls") {
		out = append(out, struct{ name, expr string }{"tool_uses", `CASE WHEN r.tool_calls IS NULL THEN NULL ELSE
			(SELECT json_group_object(tool, calls) FROM (SELECT t.tool, t.calls FROM tool_uses t
			WHERE t.attempt_id = r.attempt_id ORDER BY t.tool)) END`})
	}
	return out
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(decimal(x), 'g', -1, 64)
	case string:
		return csvCell(x)
	}
	return asString(v)
}
