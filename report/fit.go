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
	t = visibleTable(t) // a copy: wrapping it leaves the caller's table whole
	fitted := *t
	fitted.Footnotes = nil
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
	if err := drawBox(w, &fitted); err != nil {
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
		widest = max(widest, displayWidth(line))
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

// wrapLine wraps one line of text greedily, breaking at runs of spaces
// and tabs: a run where the line breaks is dropped, every other run is
// kept as it is. A word wider than width is cut where its runes reach
// width; nothing else of s is dropped.
func wrapLine(s string, width int) []string {
	if displayWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	line, lineW := "", 0
	rest := s
	for rest != "" {
		gap := rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))]
		rest = rest[len(gap):]
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		word := rest[:end]
		rest = rest[end:]
		if word == "" {
			break // trailing blanks: invisible, and nothing follows them
		}
		gapW, wordW := displayWidth(gap), displayWidth(word)
		if (line != "" || lines == nil) && lineW+gapW+wordW <= width {
			line, lineW = line+gap+word, lineW+gapW+wordW
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		for wordW > width {
			head := cutWidth(word, width)
			lines = append(lines, head)
			word = word[len(head):]
			wordW = displayWidth(word)
		}
		line, lineW = word, wordW
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// cutWidth returns the longest prefix of s, cut between runes, at most
// width wide; when s's first rune alone is wider, that rune.
func cutWidth(s string, width int) string {
	w := 0
	for i, r := range s {
		w += runeWidth(r)
		if w > width {
			if i == 0 {
				_, size := utf8.DecodeRuneInString(s)
				return s[:size]
			}
			return s[:i]
		}
	}
	return s
}

// displayWidth is the width of s summed rune by rune. Unlike
// twwidth.Width it does not skip ANSI escape sequences: a box shows them
// as text (see visible), and an escape that reaches the wrapper counts
// wide rather than narrow.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

func runeWidth(r rune) int {
	if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f {
		return 1
	}
	return twwidth.Width(string(r))
}

// writeHanging writes prefix and text wrapped to width, the lines after
// the first indented under the text.
func writeHanging(b *strings.Builder, prefix, text string, width int) {
	indent := displayWidth(prefix)
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
