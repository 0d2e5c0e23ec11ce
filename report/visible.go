package report

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wfbench/wfb/internal/termtext"
)

// tabStop is how far apart a box's tab stops are: a tab in a cell becomes
// spaces up to the next one, counted from the start of its line.
const tabStop = 8

// visible returns s as a box table shows it: nothing in it can move the
// cursor, recolour or retitle the terminal, since agent output (stderr,
// error details) reaches cells and footnotes as it is. A C0 control or DEL
// shows as its Unicode control picture (ESC as ␛, a lone CR as ␍), a C1
// control or a bidirectional override as \u escape (\u009b), a byte that
// is not UTF-8 as \x escape; a tab becomes spaces to the next tab stop,
// CR LF a line break. visible(visible(s)) == visible(s).
func visible(s string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if r != '\n' && termtext.NeedsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
			col += 4
		case r == '\n' || (r == '\r' && strings.HasPrefix(s[i+1:], "\n")):
			if r == '\r' {
				size++
			}
			b.WriteByte('\n')
			col = 0
		case r == '\t':
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r < 0x20:
			b.WriteRune(0x2400 + r)
			col++
		case r == 0x7f:
			b.WriteRune('\u2421')
			col++
		case termtext.NeedsEscape(r):
			b.WriteString(`\u` + strconv.FormatUint(uint64(r)|0x10000, 16)[1:])
			col += 6
		default:
			b.WriteRune(r)
			col += runeWidth(r)
		}
		i += size
	}
	return b.String()
}

// visibleTable returns t with every text a box shows passed through
// visible; t is not changed.
func visibleTable(t *Table) *Table {
	v := *t
	v.Title = visible(t.Title)
	v.Columns = make([]string, len(t.Columns))
	for c, name := range t.Columns {
		v.Columns[c] = visible(name)
	}
	v.Rows = make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		v.Rows[i] = slices.Clone(row)
		for c, cell := range row {
			switch x := cell.(type) {
			case string:
				v.Rows[i][c] = visible(x)
			case Items:
				v.Rows[i][c] = visible(x.Text)
			}
		}
	}
	v.Footnotes = make([]string, len(t.Footnotes))
	for i, n := range t.Footnotes {
		v.Footnotes[i] = visible(n)
	}
	return &v
}

// tsvEscape returns s as a TSV cell holds it: backslash, tab, newline and
// carriage return as \\ \t \n \r, every other C0 control and DEL as a \x
// escape (ESC as \x1b), a C1 control or bidirectional override as a \u
// escape, a byte that is not UTF-8 as a \x escape. A program reverses it
// exactly; a terminal shows it instead of obeying it.
func tsvEscape(s string) string {
	if !termtext.HasControls(s, "") && !strings.Contains(s, `\`) {
		return s
	}
	return termtext.Map(s, func(r rune) (string, bool) {
		switch {
		case r == '\\':
			return `\\`, true
		case r == '\t':
			return `\t`, true
		case r == '\n':
			return `\n`, true
		case r == '\r':
			return `\r`, true
		case r < 0x20 || r == 0x7f:
			return `\x` + strconv.FormatUint(uint64(r)|0x100, 16)[1:], true
		case termtext.NeedsEscape(r):
			return termtext.U(r), true
		}
		return "", false
	})
}

// jsonShowControls rewrites, in encoded JSON, the runes encoding/json
// leaves raw that would act on a terminal — DEL, the C1 controls (U+009B
// is CSI to many terminals) and the bidirectional overrides — as \u
// escapes, which decode to the same string. (encoding/json has already
// replaced every byte that is not UTF-8.)
func jsonShowControls(b []byte) []byte {
	if !termtext.HasControls(string(b), "") {
		return b
	}
	return []byte(termtext.Map(string(b), func(r rune) (string, bool) {
		return termtext.U(r), termtext.NeedsEscape(r)
	}))
}

// csvCell returns a CSV text cell made safe to open: its controls shown
// (see termtext.Show; tab and line breaks kept, which CSV quotes), and a
// leading ', when it starts with = + - @ or a tab, so that a spreadsheet
// takes it as text rather than a formula (an agent's error detail
// "=HYPERLINK(…)" would otherwise run when the export is opened). Text
// that reads as a number keeps its sign.
func csvCell(s string) string {
	s = termtext.Show(s, "\t\n")
	if s == "" || strings.IndexByte("=+-@\t", s[0]) < 0 {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}
