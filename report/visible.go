package report

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
		if r != '\n' && needsEscape(r) {
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
		case needsEscape(r):
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

// needsEscape says r would act on a terminal rather than show on it.
func needsEscape(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.Is(unicode.Bidi_Control, r)
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
			if s, ok := cell.(string); ok {
				v.Rows[i][c] = visible(s)
			}
		}
	}
	v.Footnotes = make([]string, len(t.Footnotes))
	for i, n := range t.Footnotes {
		v.Footnotes[i] = visible(n)
	}
	return &v
}
