package report

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/wfbench/wfb/internal/termtext"
)

// doctorRows are what `wfb doctor` found on a machine with all three
// backends, reasons as long as the real ones.
var doctorRows = []DoctorRow{
	{"bwrap", true, "bubblewrap 0.8.0 as uid 65534 in new user/PID/IPC/UTS namespaces: workspace bound read-only, artifact dir writable (temp+rename probed), PID namespace proven, no capabilities; shares the host network"},
	{"landlock", false, "Landlock unavailable: the kernel reports ABI 0 (CONFIG_SECURITY_LANDLOCK off, or landlock not in lsm=); enable it, or use bwrap"},
	{"host-unsafe", true, "no kernel isolation: the session runs on the host as uid 65534, held off the workspace by mode bits only; no PID namespace"},
}

// widest returns the display width of out's widest line.
func widest(out string) int {
	w := 0
	for _, line := range strings.Split(out, "\n") {
		w = max(w, twwidth.Width(line))
	}
	return w
}

// TestTablesFitTheWidth stops a box table that runs off the screen: `wfb
// doctor`'s reasons made it 283 columns wide. Fitted to 80 columns, the
// reasons wrap word by word inside their cell and the footnotes under a
// hanging indent, every line at most 80 wide (pinned by a golden), and no
// word is lost on the way.
func TestTablesFitTheWidth(t *testing.T) {
	tbl := DoctorTable(doctorRows)
	tbl.Footnotes = []string{"a footnote long enough to need wrapping: " + strings.Repeat("every word stays whole, ", 6) + "to the end."}
	var buf bytes.Buffer
	if err := RenderFit(&buf, tbl, FormatTable, 80); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkGolden(t, "fit_doctor_80.golden", buf.Bytes())
	if w := widest(out); w > 80 {
		t.Errorf("widest line %d columns, want ≤ 80:\n%s", w, out)
	}
	words := func(s string) string {
		return strings.Join(strings.Fields(strings.NewReplacer("│", " ", "[1]", " ").Replace(s)), " ")
	}
	for _, r := range doctorRows {
		// Each reason reads whole, in order, across its wrapped lines.
		var cell []string
		for _, line := range strings.Split(out, "\n") {
			parts := strings.Split(line, "│")
			if len(parts) == 5 {
				cell = append(cell, strings.TrimSpace(parts[3]))
			}
		}
		if !strings.Contains(strings.Join(cell, " "), r.Reason) {
			t.Errorf("reason of %s lost in wrapping:\n%s", r.Backend, out)
		}
	}
	if !strings.Contains(words(out), words(tbl.Footnotes[0])) {
		t.Errorf("footnote lost in wrapping:\n%s", out)
	}
	// Unfitted (width 0) and in every other format, lines stay whole.
	for _, f := range []Format{FormatTSV, FormatMarkdown, FormatCSV} {
		buf.Reset()
		if err := RenderFit(&buf, tbl, f, 80); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), doctorRows[0].Reason) {
			t.Errorf("%s: a reason was wrapped; only box tables are", f)
		}
	}
}

// TestAWordWiderThanTheColumnIsBroken stops a wrap that loops or drops
// text on a word (a path, a URL) wider than the column.
func TestAWordWiderThanTheColumnIsBroken(t *testing.T) {
	long := "/very/long/path/" + strings.Repeat("x", 40) + "/end"
	got := wrapText("see "+long+" now", minColumn)
	if strings.ReplaceAll(strings.ReplaceAll(got, "\n", ""), " ", "") != strings.ReplaceAll("see"+long+"now", " ", "") {
		t.Errorf("wrapping lost text: %q", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if twwidth.Width(line) > minColumn {
			t.Errorf("line %q wider than %d", line, minColumn)
		}
	}
}

// nonBlank returns s's runes without spaces, tabs and line breaks: what
// wrapping must keep, in order.
func nonBlank(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' {
			out = append(out, r)
		}
	}
	return out
}

// checkWrapped fails t unless wrapText(s, width) keeps every rune of s
// but blanks, in order, and no line is wider than width.
func checkWrapped(t *testing.T, s string, width int) {
	t.Helper()
	got := wrapText(s, width)
	if !slices.Equal(nonBlank(got), nonBlank(s)) {
		t.Errorf("wrapText(%q, %d) = %q: text lost or reordered", s, width, got)
	}
	for _, line := range strings.Split(got, "\n") {
		if displayWidth(line) > width || twwidth.Width(line) > width {
			t.Errorf("wrapText(%q, %d): line %q wider than %d", s, width, line, width)
		}
	}
}

// TestAWordWithAnEscapeWraps stops a panic and lost text: a long word was
// broken with twwidth.Truncate, which appends ESC[0m when the word holds
// an escape, so the rest of the word was sliced past its end ("slice
// bounds out of range [21:18]") or, in a longer word, lost ("mnop").
func TestAWordWithAnEscapeWraps(t *testing.T) {
	checkWrapped(t, "\x1b[31m"+"abcdefghijklm", 12)
	checkWrapped(t, "\x1b[31m"+"abcdefghijklmnopqrstuvwxyz0123456789", 12)
	checkWrapped(t, "error: \x1b[1;31m"+strings.Repeat("中文", 10)+"\x1b[0m done", 12)
}

// TestWrappingKeepsSpacing stops a wrap that squeezed every run of blanks
// to one space: blanks inside a line stay as they were; only the run
// where a line breaks goes.
func TestWrappingKeepsSpacing(t *testing.T) {
	got := wrapText("  key:    value  and  then some more words", 20)
	want := "  key:    value  and\nthen some more words"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBoxShowsControlCharacters stops agent text (stderr, an error
// detail, a footnote) from recolouring, moving or retitling the user's
// terminal through a box table: control characters show as text, fitted
// or not.
func TestBoxShowsControlCharacters(t *testing.T) {
	hostile := "\x1b[31mred\x1b[0m\x1b]0;pwned\x07 back\rover\r\nnext\ttab \u009b2J \u202eevil \xff"
	tbl := &Table{Title: "t\x1b[2J", Columns: []string{"detail\x1b[1m"}, Rows: [][]any{{hostile}}, Footnotes: []string{"note \x1b[5m" + strings.Repeat("word ", 30)}}
	for _, width := range []int{0, 40} {
		var buf bytes.Buffer
		if err := RenderFit(&buf, tbl, FormatTable, width); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, r := range out {
			if r != '\n' && termtext.NeedsEscape(r) {
				t.Errorf("width %d: control %U reaches the terminal:\n%q", width, r, out)
			}
		}
		for _, want := range []string{"␛[31mred␛[0m", "␛]0;pwned␇", "back␍over", "t␛[2J", `\u009b2J`, `\u202eevil`, `\xff`, "next    tab", "note ␛[5m"} {
			if !strings.Contains(out, want) {
				t.Errorf("width %d: %q missing:\n%s", width, want, out)
			}
		}
		if width > 0 && widest(out) > width {
			t.Errorf("width %d: widest line %d:\n%s", width, widest(out), out)
		}
	}
	if tbl.Rows[0][0] != hostile {
		t.Error("rendering changed the caller's table")
	}
}

// TestWrappingRandomTextFits is a property test over random text of
// escapes, wide (CJK) and combining runes, blanks and line breaks: every
// wrapped line fits, and no rune but blanks is lost or moved, both in
// wrapText and in a whole fitted box.
func TestWrappingRandomTextFits(t *testing.T) {
	alphabet := []string{"a", "b", "xyz", "中", "文字", "e\u0301", " ", "  ", "\t", "\n", "\x1b", "\x1b[31m", "\x1b[0m", "[", "m", "\x07", "\r", "\u009b", "/"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for n := rng.IntN(60); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		width := minColumn + rng.IntN(20)
		checkWrapped(t, s, width)

		// Through a box: a cell beside a number column, fitted.
		tbl := &Table{Columns: []string{"n", "text"}, Rows: [][]any{{int64(i), s}}}
		var buf bytes.Buffer
		boxWidth := width + 7 + 4 // borders take 7, n at most 4: text gets width or more
		if err := RenderFit(&buf, tbl, FormatTable, boxWidth); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if w := widest(out); w > boxWidth {
			t.Fatalf("%q at %d: widest line %d:\n%s", s, boxWidth, w, out)
		}
		if !isSubsequence(nonBlank(visible(s)), nonBlank(out)) {
			t.Fatalf("%q at %d: text lost:\n%s", s, boxWidth, out)
		}
		if t.Failed() {
			return
		}
	}
}

// isSubsequence says every rune of want appears in got, in order.
func isSubsequence(want, got []rune) bool {
	for _, r := range got {
		if len(want) > 0 && want[0] == r {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// TestANarrowBoxLeavesOutColumnsNotIds stops the run id — the value people
// copy most — from wrapping over three lines on a narrow screen: a box too
// wide leaves out its Shed columns, first to go first, says so in a note,
// and keeps its Whole columns whole; other formats keep every column.
func TestANarrowBoxLeavesOutColumnsNotIds(t *testing.T) {
	id := "run-20261202T111245Z-70657e43"
	tbl := &Table{Title: "runs", Columns: []string{"run", "label", "started", "workflow-not-used", "cost n", "budget (USD)"},
		Rows:  [][]any{{id, "nightly", "2026-12-02T11:12:45Z", int64(3), int64(27), "none"}},
		Whole: []string{"run", "started"}, Shed: []string{"budget (USD)", "cost n", "started"}}
	for _, tt := range []struct {
		width int
		shed  []string
	}{
		{120, nil},
		{90, []string{"budget (USD)"}},
		{70, []string{"budget (USD)", "cost n", "started"}},
	} {
		var buf bytes.Buffer
		if err := RenderFit(&buf, tbl, FormatTable, tt.width); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if w := widest(out); w > tt.width {
			t.Errorf("width %d: widest line %d:\n%s", tt.width, w, out)
		}
		if !strings.Contains(out, "│ "+id+" │") {
			t.Errorf("width %d: the run id is not whole on one line:\n%s", tt.width, out)
		}
		header := strings.SplitN(out, "\n", 4)[2]
		for _, c := range tbl.Columns {
			if gone := slices.Contains(tt.shed, c); gone == strings.Contains(header, "│ "+c[:min(len(c), 4)]) {
				t.Errorf("width %d: column %q left out %v, want %v:\n%s", tt.width, c, !gone, gone, out)
			}
		}
		note := strings.Contains(out, "left out to fit")
		if note != (tt.shed != nil) {
			t.Errorf("width %d: note of left-out columns shown %v:\n%s", tt.width, note, out)
		}
		if tt.shed != nil && !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(tt.shed, ", ")+". Every column shows with --format tsv") {
			t.Errorf("width %d: the note does not name %v:\n%s", tt.width, tt.shed, out)
		}
	}
	var buf bytes.Buffer
	if err := RenderFit(&buf, tbl, FormatTSV, 40); err != nil {
		t.Fatal(err)
	}
	// After the title's comment line, the header names every column.
	if !strings.Contains("\n"+buf.String(), "\n"+strings.Join(tbl.Columns, "\t")+"\n") {
		t.Errorf("tsv left out a column:\n%s", buf.String())
	}
}

// TestAHyphenatedNameWrapsAtItsHyphens stops a column of small counts
// from being as wide as its kind's name: "workflow-not-used" wraps after
// a hyphen, never mid-word.
func TestAHyphenatedNameWrapsAtItsHyphens(t *testing.T) {
	if got, want := wrapText("workflow-not-used", 9), "workflow-\nnot-used"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
