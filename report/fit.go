package report

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// RenderFit is Render for a screen width columns wide: a FormatTable
// table's widest text columns wrap, word by word, until the box fits
// (when columns of minColumn can make it fit; otherwise its rows stay one
// line each), and its footnotes wrap under a hanging indent. width ≤ 0, and every other format, leaves lines whole: programs
// split TSV and CSV by line, and markdown is wrapped by whatever renders it.
func RenderFit(w io.Writer, t *Table, f Format, width int) error {
	if f != FormatTable || width <= 0 {
		return Render(w, t, f)
	}
	return renderBoxFit(w, t, width)
}

// RenderAllFit is RenderAll with RenderFit.
func RenderAllFit(w io.Writer, tables []*Table, f Format, width int) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := RenderFit(w, t, f, width); err != nil {
			return err
		}
	}
	return nil
}

// minColumn is the narrowest a wrapped column gets: narrower, words break
// mid-way and a cell reads as a column of syllables.
const minColumn = 12

// renderBoxFit draws t as a box table no wider than width where it can:
// the text of columns wider than a cap is wrapped to it, the cap being the
// widest that fits. Numbers are never wrapped.
func renderBoxFit(w io.Writer, t *Table, width int) error {
	fitted := *t
	fitted.Footnotes = nil
	fitted.Rows = make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		fitted.Rows[i] = slices.Clone(row)
	}
	fitted.Columns = slices.Clone(t.Columns)
	if limit := columnCap(t, width); limit > 0 {
		for c := range fitted.Columns {
			fitted.Columns[c] = wrapText(fitted.Columns[c], limit)
			for _, row := range fitted.Rows {
				if s, ok := row[c].(string); ok {
					row[c] = wrapText(s, limit)
				}
			}
		}
	}
	if err := renderBox(w, &fitted); err != nil {
		return err
	}
	var b strings.Builder
	if len(t.Footnotes) > 0 {
		b.WriteString("\n")
	}
	for i, n := range t.Footnotes {
		writeHanging(&b, "["+strconv.Itoa(i+1)+"] ", n, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// columnCap returns the widest a text column may be for t's box to fit in
// width, or 0 when it fits as it is. A box of n columns takes 3n+1
// characters beside its cells (a border and a space each side).
func columnCap(t *Table, width int) int {
	nat := make([]int, len(t.Columns))
	for c, name := range t.Columns {
		nat[c] = textWidth(name)
		for _, row := range t.Rows {
			nat[c] = max(nat[c], textWidth(text(row[c])))
		}
	}
	room := width - 3*len(nat) - 1
	total := 0
	for _, n := range nat {
		total += n
	}
	if total <= room {
		return 0
	}
	// The cap is the widest at which the capped columns fit: lower it
	// from the widest column until they do. When even columns of
	// minColumn do not fit, wrapping only makes the rows taller: the
	// viewer breaks the lines either way, so they stay whole.
	for limit := slices.Max(nat); limit >= minColumn; limit-- {
		sum := 0
		for _, n := range nat {
			sum += min(n, limit)
		}
		if sum <= room {
			return limit
		}
	}
	return 0
}

// textWidth is the display width of s's widest line.
func textWidth(s string) int {
	widest := 0
	for _, line := range strings.Split(s, "\n") {
		widest = max(widest, twwidth.Width(line))
	}
	return widest
}

// wrapText wraps s at spaces into lines at most width wide; a word wider
// than that is broken.
func wrapText(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, wrapLine(para, width)...)
	}
	return strings.Join(out, "\n")
}

// wrapLine wraps one line of text, greedily.
func wrapLine(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for twwidth.Width(word) > width {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			head := twwidth.Truncate(word, width)
			if head == "" {
				_, size := utf8.DecodeRuneInString(word)
				head = word[:size] // one rune wider than width: it goes alone
			}
			lines = append(lines, head)
			word = word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case twwidth.Width(line)+1+twwidth.Width(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// writeHanging writes prefix and text wrapped to width, the lines after
// the first indented under the text.
func writeHanging(b *strings.Builder, prefix, text string, width int) {
	indent := twwidth.Width(prefix)
	lines := wrapLine(text, max(width-indent, minColumn))
	for i, l := range lines {
		if i == 0 {
			b.WriteString(prefix)
		} else {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(l + "\n")
	}
}
