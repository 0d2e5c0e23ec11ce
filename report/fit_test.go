package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
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
