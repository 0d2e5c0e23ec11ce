package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// RenderFit is Render for a screen width columns wide. A FormatTable
// table that is wider leaves out its Shed columns, first to go first, until
// the rest fit (a footnote names them and says how to see them), and its
// widest text columns wrap, word by word, until the box fits; its Whole
// columns (ids, times) are never wrapped. When even that does not
// fit, its rows stay one line each and every column stays. Its title and
// footnotes wrap under a hanging indent. width ≤ 0, and every other
// format, leaves lines whole and every column in: programs split TSV and
// CSV by line, and markdown is wrapped by whatever renders it.
func RenderFit(w io.Writer, t *Table, f Format, width int) error {
	if f != FormatTable || width <= 0 {
		return Render(w, t, f)
	}
	if err := checkCells(t); err != nil {
		return err
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

// renderBoxFit draws t as a box table no wider than width where it can
// (see RenderFit). Numbers are never wrapped.
func renderBoxFit(w io.Writer, t *Table, width int) error {
	whole := columnSet(t, t.Whole)
	t = visibleTable(t) // a copy: fitting it leaves the caller's table whole
	fitted, shed := shedToFit(t, whole, width)
	notes := t.Footnotes
	if len(shed) > 0 {
		notes = append(slices.Clone(notes), shedNote(shed, width, boxWidth(naturalWidths(t))))
	}
	fitted.Footnotes = nil
	var b strings.Builder
	if fitted.Title != "" {
		writeHanging(&b, "", fitted.Title, width)
		fitted.Title = ""
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := drawBox(w, fitted); err != nil {
		return err
	}
	b.Reset()
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	for i, n := range notes {
		writeHanging(&b, "["+strconv.Itoa(i+1)+"] ", n, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// columnSet marks the columns of t named in names.
func columnSet(t *Table, names []string) []bool {
	set := make([]bool, len(t.Columns))
	for c, name := range t.Columns {
		set[c] = slices.Contains(names, name)
	}
	return set
}

// shedToFit returns t, wrapped to fit width, and the names of the Shed
// columns it left out to get there (in t's visible spelling). When no
// shedding makes it fit, t is returned whole, every column in.
func shedToFit(t *Table, whole []bool, width int) (*Table, []string) {
	cur, keep := t, whole
	var shed []string
	for {
		if widths := fitWidths(cur, keep, width); widths != nil {
			return wrapTo(cur, widths), shed
		}
		c := nextShed(cur, t.Shed)
		if c < 0 {
			return t, nil
		}
		shed = append(shed, cur.Columns[c])
		cur, keep = dropColumn(cur, c), slices.Delete(slices.Clone(keep), c, c+1)
	}
}

// nextShed is the column of t to leave out next: the first of names that
// t still has; -1 when there is none. names are spelled as the caller
// spelled the columns, before visible.
func nextShed(t *Table, names []string) int {
	for _, name := range names {
		for c, col := range t.Columns {
			if col == visible(name) {
				return c
			}
		}
	}
	return -1
}

// dropColumn returns a copy of t without column c.
func dropColumn(t *Table, c int) *Table {
	d := *t
	d.Columns = slices.Delete(slices.Clone(t.Columns), c, c+1)
	d.Rows = make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		d.Rows[i] = slices.Delete(slices.Clone(row), c, c+1)
	}
	return &d
}

// shedNote says which columns a box left out, and how to see them.
func shedNote(shed []string, width, full int) string {
	return fmt.Sprintf("left out to fit %d columns: %s. Every column shows with --format tsv (or csv, json), or on a screen %d columns wide (COLUMNS=%d).",
		width, strings.Join(shed, ", "), full, full)
}

// naturalWidths is each column's width unwrapped.
func naturalWidths(t *Table) []int {
	nat := make([]int, len(t.Columns))
	for c, name := range t.Columns {
		nat[c] = textWidth(name)
		for _, row := range t.Rows {
			nat[c] = max(nat[c], textWidth(text(row[c])))
		}
	}
	return nat
}

// boxWidth is the width of a box whose columns are widths wide: a box of
// n columns takes 3n+1 characters beside its cells (a border and a space
// each side).
func boxWidth(widths []int) int {
	total := 3*len(widths) + 1
	for _, w := range widths {
		total += w
	}
	return total
}

// floorWidths is the narrowest each column of t may get: a whole column
// its natural width, a column of numbers its widest number, a text column
// minColumn (or its natural width, when narrower); none narrower than the
// widest piece of its name (a word, or a part of a hyphenated one), which
// wraps there.
func floorWidths(t *Table, whole []bool) []int {
	nat := naturalWidths(t)
	num := numericColumns(t)
	floor := make([]int, len(t.Columns))
	for c := range t.Columns {
		cells := 0
		for _, row := range t.Rows {
			cells = max(cells, textWidth(text(row[c])))
		}
		switch {
		case whole[c]:
			floor[c] = nat[c]
		case num[c]:
			floor[c] = max(cells, namePiece(t.Columns[c]))
		default:
			floor[c] = min(nat[c], max(min(cells, minColumn), namePiece(t.Columns[c])))
		}
	}
	return floor
}

// namePiece is the width of the widest piece a column name wraps into:
// its words, a hyphenated word broken after its hyphens.
func namePiece(name string) int {
	widest := 0
	for _, word := range strings.Fields(name) {
		for _, piece := range strings.SplitAfter(word, "-") {
			widest = max(widest, displayWidth(piece))
		}
	}
	return widest
}

// fitWidths returns the width of each column of t for its box to fit in
// width, or nil when it cannot: text wider than a cap is wrapped to it,
// the cap being the widest that fits, and no column goes below its floor.
func fitWidths(t *Table, whole []bool, width int) []int {
	nat := naturalWidths(t)
	if boxWidth(nat) <= width {
		return nat
	}
	floor := floorWidths(t, whole)
	if boxWidth(floor) > width {
		return nil
	}
	capped := make([]int, len(nat))
	for limit := slices.Max(nat); ; limit-- {
		for c := range nat {
			capped[c] = max(floor[c], min(nat[c], limit))
		}
		if boxWidth(capped) <= width {
			return capped
		}
	}
}

// wrapTo returns a copy of t with each column's name and text wrapped to
// widths; numbers stay as they are (their floor is their width).
func wrapTo(t *Table, widths []int) *Table {
	w := *t
	w.Columns = slices.Clone(t.Columns)
	w.Rows = make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		w.Rows[i] = slices.Clone(row)
	}
	for c := range w.Columns {
		w.Columns[c] = wrapText(w.Columns[c], widths[c])
		for _, row := range w.Rows {
			if s, ok := row[c].(string); ok {
				row[c] = wrapText(s, widths[c])
			}
		}
	}
	return &w
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
			head := cutHyphen(word, width)
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

// cutHyphen returns the longest prefix of s at most width wide that ends
// in a hyphen, so that "workflow-not-used" wraps as "workflow-" and
// "not-used"; else cutWidth's.
func cutHyphen(s string, width int) string {
	head := cutWidth(s, width)
	if i := strings.LastIndexByte(head, '-'); i > 0 && i < len(head)-1 {
		return head[:i+1]
	}
	return head
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
