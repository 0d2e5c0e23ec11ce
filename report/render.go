package report

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/wfbench/wfb/internal/termtext"
)

// Table is a rendered-agnostic result: a title, named columns, rows of typed
// cells and footnotes (warnings, caveats) that belong with the numbers.
//
// A cell is nil (NULL: not measured), int64, int, float64, string, bool,
// []byte or Items (a list of records: structured in JSON, text elsewhere).
// NULL is never shown as 0 or as an empty string where the format can tell
// them apart.
type Table struct {
	Title     string
	Columns   []string
	Rows      [][]any
	Footnotes []string
	// Notes says the footnotes belong to the data, as the caveats of an
	// analysis (report, diff, trend) do: then programs get them too, JSON
	// as an object {"title", "rows", "notes"} rather than a bare array and
	// CSV as "# " comment lines after the rows. Tables of raw data (sql,
	// export, runs) leave it false and stay one bare array or one CSV
	// table.
	Notes bool
	// Whole names the columns a box table never wraps: the ids people
	// copy (a run id, an attempt id), times. An id is never in Shed.
	Whole []string
	// Shed names the columns a box table too wide for the screen leaves
	// out, the first to go first; a footnote says which went and how to
	// see them. Every other format keeps every column.
	Shed []string
}

// Format is an output format for Render.
type Format string

// Formats Render knows.
const (
	// FormatTable draws a box table for a terminal; NULL shows as NULL.
	// Control characters show rather than act: ESC as ␛ and the other C0
	// controls as their control pictures, C1 controls and bidirectional
	// overrides as \u escapes, a tab as spaces (see visible).
	FormatTable Format = "table"
	// FormatTSV writes a header line and one line per row, tab-separated;
	// tab, newline, carriage return and backslash in a cell are escaped as
	// \t \n \r \\, any other control as \x1b or \u009b, a bidirectional
	// override as \u202e, a byte that is not UTF-8 as \xff (see tsvEscape);
	// NULL shows as NULL. Footnotes follow the rows as "# " comment lines,
	// so a pipe keeps them, and the title is a "# " comment line before
	// the header. Programs skip comment lines (pandas comment='#', awk
	// '!/^#/', grep -v '^#').
	FormatTSV Format = "tsv"
	// FormatMarkdown writes a GitHub table (pipes and backslashes escaped,
	// < and > as entities, newlines as <br>, other controls shown as in a
	// box table), the title in bold above and the footnotes as a list
	// below; NULL shows as NULL.
	FormatMarkdown Format = "markdown"
	// FormatCSV writes RFC 4180 CSV with a header line. NULL is an EMPTY
	// field, and so is an empty string: CSV cannot tell them apart, use json
	// where that matters. A number that is not finite (an unbounded
	// interval) is empty too. Controls other than tab and line breaks show
	// as in a box table (ESC as ␛). The title is not written; the footnotes of a
	// table with Notes follow the rows as "# " comment lines (read them
	// with a comment character: pandas comment='#', Go's csv.Reader
	// Comment = '#').
	FormatCSV Format = "csv"
	// FormatJSON writes an array of objects keyed by column, in column
	// order; NULL is null, numbers are JSON numbers (a number that is not
	// finite, such as an unbounded interval's end, is null: JSON cannot
	// hold it, and a string in a numeric field breaks programs), bytes are
	// base64 strings. Every control and bidirectional override in a string
	// is a \u escape, so JSON printed to a terminal cannot drive it. A
	// table with Notes is written as an object {"title": …, "rows": [the
	// array], "notes": [the footnotes]}.
	FormatJSON Format = "json"
)

// Formats lists every format, in the order help text shows them.
var Formats = []Format{FormatTable, FormatTSV, FormatMarkdown, FormatCSV, FormatJSON}

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q: valid formats are %s", s, strings.Join(names, ", "))
}

// Render writes t to w in format f.
func Render(w io.Writer, t *Table, f Format) error {
	if err := checkCells(t); err != nil {
		return err
	}
	switch f {
	case FormatTable:
		return renderBox(w, t)
	case FormatTSV:
		return renderTSV(w, t)
	case FormatMarkdown:
		return renderMarkdown(w, t)
	case FormatCSV:
		return renderCSV(w, t)
	case FormatJSON:
		return renderJSON(w, t)
	}
	_, err := ParseFormat(string(f))
	return err
}

// checkCells says which row of t does not fit its columns, or which cell
// is of a type no format can show.
func checkCells(t *Table) error {
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return fmt.Errorf("render %q: row %d has %d cells for %d columns", t.Title, i+1, len(row), len(t.Columns))
		}
		for c, v := range row {
			switch v.(type) {
			case nil, int64, int, float64, string, bool, []byte, Items:
			default:
				return fmt.Errorf("render %q: row %d, column %s: cell of type %T", t.Title, i+1, t.Columns[c], v)
			}
		}
	}
	return nil
}

// text is a cell as people read it.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return formatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return "x'" + hex.EncodeToString(x) + "'"
	case Items:
		return x.Text
	}
	return fmt.Sprint(v) // unreachable: Render checks cell types first
}

// formatFloat prints f's decimal (the shortest of at most 15 significant
// digits, see decimal), never an exponent: 0.42, not 4.2e-01, and 0.3 for
// 0.1 + 0.2.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(decimal(f), 'f', -1, 64)
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, int, float64:
		return true
	}
	return false
}

// numericColumns says which columns hold only numbers (NULLs aside), so
// they can be right-aligned.
func numericColumns(t *Table) []bool {
	num := make([]bool, len(t.Columns))
	for c := range t.Columns {
		seen := false
		num[c] = true
		for _, row := range t.Rows {
			if row[c] == nil {
				continue
			}
			seen = true
			if !isNumber(row[c]) {
				num[c] = false
				break
			}
		}
		num[c] = num[c] && seen
	}
	return num
}

// renderBox draws t as a box table, its text made visible (see visible).
func renderBox(w io.Writer, t *Table) error {
	return drawBox(w, visibleTable(t))
}

// drawBox draws t as a box table, its text as it is.
func drawBox(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	if t.Title != "" {
		fmt.Fprintln(&buf, t.Title)
	}
	align := make(tw.Alignment, len(t.Columns))
	for c, num := range numericColumns(t) {
		align[c] = tw.AlignLeft
		if num {
			align[c] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		// Column names are SQL identifiers: show them as they are, not
		// upper-cased with underscores turned into spaces.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tbl.Header(toAny(t.Columns)...)
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = text(v)
		}
		if err := tbl.Append(cells); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	writeFootnotes(&buf, t.Footnotes, "")
	_, err := w.Write(buf.Bytes())
	return err
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func writeFootnotes(w io.Writer, notes []string, bullet string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintln(w)
	for i, n := range notes {
		if bullet == "" {
			fmt.Fprintf(w, "[%d] %s\n", i+1, n)
		} else {
			fmt.Fprintf(w, "%s%s\n", bullet, n)
		}
	}
}

func renderTSV(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				buf.WriteByte('\t')
			}
			buf.WriteString(tsvEscape(c))
		}
		buf.WriteByte('\n')
	}
	if t.Title != "" {
		// The title, as a table and markdown show it: a comment line, like
		// the footnotes, so a reader skipping '#' lines sees the header.
		fmt.Fprintf(&buf, "# %s\n", termtext.Show(strings.Join(strings.Fields(t.Title), " "), ""))
	}
	line(t.Columns)
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = text(v)
		}
		line(cells)
	}
	writeCommentNotes(&buf, t.Footnotes)
	_, err := w.Write(buf.Bytes())
	return err
}

// writeCommentNotes writes footnotes as "# [n] note" lines, each on one
// line, for the formats that programs split into lines (tsv, csv).
func writeCommentNotes(buf *bytes.Buffer, notes []string) {
	for i, n := range notes {
		fmt.Fprintf(buf, "# [%d] %s\n", i+1, termtext.Show(strings.Join(strings.Fields(n), " "), ""))
	}
}

// markdownEscaper keeps a cell one cell of one row (pipes, line breaks),
// keeps markup out (< and >), and keeps link and image syntax out: an
// agent's ![](https://host/x) would otherwise be fetched by whoever views
// the PR, and [text](url) would show its own words over any URL.
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`,
	"\r\n", "<br>", "\n", "<br>", "\r", "<br>")

// markdownText is s as a markdown table shows it: its controls shown (see
// termtext.Show), then escaped (see markdownEscaper).
func markdownText(s string) string {
	return markdownEscaper.Replace(termtext.Show(s, "\t\r\n"))
}

func renderMarkdown(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	if t.Title != "" {
		fmt.Fprintf(&buf, "**%s**\n\n", markdownText(t.Title))
	}
	row := func(cells []string) {
		buf.WriteString("|")
		for _, c := range cells {
			buf.WriteString(" " + markdownText(c) + " |")
		}
		buf.WriteString("\n")
	}
	row(t.Columns)
	buf.WriteString("|")
	for _, num := range numericColumns(t) {
		if num {
			buf.WriteString(" ---: |")
		} else {
			buf.WriteString(" --- |")
		}
	}
	buf.WriteString("\n")
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = text(v)
		}
		row(cells)
	}
	if len(t.Footnotes) > 0 {
		notes := make([]string, len(t.Footnotes))
		for i, n := range t.Footnotes {
			notes[i] = markdownText(n)
		}
		writeFootnotes(&buf, notes, "- ")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func renderCSV(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = csvCell(c)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			switch x := v.(type) {
			case string:
				cells[i] = csvCell(x)
			case Items:
				cells[i] = csvCell(x.Text)
			case nil:
			default:
				if !nonFinite(v) {
					cells[i] = text(v)
				}
			}
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if t.Notes {
		writeCommentNotes(&buf, t.Footnotes)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// nonFinite reports whether v is a float that is NaN or infinite.
func nonFinite(v any) bool {
	f, ok := v.(float64)
	return ok && (math.IsNaN(f) || math.IsInf(f, 0))
}

func renderJSON(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	if t.Notes {
		title, err := jsonValue(t.Title)
		if err != nil {
			return err
		}
		buf.WriteString("{\"title\": ")
		buf.Write(title)
		buf.WriteString(", \"rows\": ")
	}
	if err := jsonRows(&buf, t); err != nil {
		return err
	}
	if t.Notes {
		buf.WriteString(", \"notes\": [")
		for i, n := range t.Footnotes {
			if i > 0 {
				buf.WriteString(",")
			}
			b, err := jsonValue(n)
			if err != nil {
				return err
			}
			buf.WriteString("\n  ")
			buf.Write(b)
		}
		if len(t.Footnotes) > 0 {
			buf.WriteString("\n")
		}
		buf.WriteString("]}")
	}
	buf.WriteString("\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonRows writes the rows as an array of objects keyed by column.
func jsonRows(buf *bytes.Buffer, t *Table) error {
	keys := jsonKeys(t.Columns)
	buf.WriteString("[")
	for r, row := range t.Rows {
		if r > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  {")
		for c, v := range row {
			if c > 0 {
				buf.WriteString(", ")
			}
			k, err := jsonValue(keys[c])
			if err != nil {
				return err
			}
			buf.Write(k)
			buf.WriteString(": ")
			b, err := jsonValue(v)
			if err != nil {
				return fmt.Errorf("render json: row %d, column %s: %w", r+1, t.Columns[c], err)
			}
			buf.Write(b)
		}
		buf.WriteString("}")
	}
	if len(t.Rows) > 0 {
		buf.WriteString("\n")
	}
	buf.WriteString("]")
	return nil
}

// jsonKeys makes column names unique, since a JSON object cannot hold the
// same key twice (SELECT 1 AS n, 2 AS n): the second n becomes "n_2".
func jsonKeys(cols []string) []string {
	seen := map[string]bool{}
	keys := make([]string, len(cols))
	for i, c := range cols {
		k := c
		for n := 2; seen[k]; n++ {
			k = c + "_" + strconv.Itoa(n)
		}
		seen[k] = true
		keys[i] = k
	}
	return keys
}
