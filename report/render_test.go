package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sample holds the cells renderers get wrong: NULL next to a measured 0, a
// pipe and a newline in one string, tabs, unicode, bytes, and a float that
// must not turn into an exponent.
func sample() *Table {
	return &Table{
		Title:   "arms | run-1",
		Columns: []string{"arm", "attempted", "cost_usd", "note", "ok", "raw"},
		Rows: [][]any{
			{"baseline", int64(3), 0.42, "a|b\nsecond line", true, []byte{0xde, 0xad}},
			{"zero", int64(0), 0.0, "", false, nil},
			{"unmeasured", int64(2), nil, "tab\there", nil, nil},
			{"ünïcödé 名前", int64(1), 0.0000125, `back\slash "quoted" <b>`, true, nil},
		},
		Footnotes: []string{"cost_usd is NULL where the agent reported no cost", "a | pipe in a note"},
	}
}

// TestRenderGolden stops regressions in every format: NULL must stay
// distinguishable from 0 and from "", and markup characters must not break
// the table.
func TestRenderGolden(t *testing.T) {
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, sample(), f); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "render_"+string(f)+".golden", buf.Bytes())
		})
	}
}

// TestJSONKeepsNullNumbersAndColumnOrder stops NULL turning into 0 or "",
// numbers into strings, and columns being reordered alphabetically (as a Go
// map would).
func TestJSONKeepsNullNumbersAndColumnOrder(t *testing.T) {
	var buf bytes.Buffer
	tbl := &Table{Columns: []string{"z", "a", "n", "a"}, Rows: [][]any{{int64(0), 1.5, nil, "x"}}}
	if err := Render(&buf, tbl, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("invalid JSON %q: %v", buf.String(), err)
	}
	want := []map[string]any{{"z": 0.0, "a": 1.5, "n": nil, "a_2": "x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if i, j := strings.Index(buf.String(), `"z"`), strings.Index(buf.String(), `"a"`); i > j {
		t.Errorf("column order lost: %s", buf.String())
	}
	buf.Reset()
	if err := Render(&buf, &Table{Columns: []string{"a"}}, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("[]\n", buf.String()); diff != "" {
		t.Errorf("empty result (-want +got):\n%s", diff)
	}
}

// TestCSVRoundTrips stops hand-rolled quoting from corrupting cells with
// commas, quotes or newlines.
func TestCSVRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, sample(), FormatCSV); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"baseline", "3", "0.42", "a|b\nsecond line", "true", "x'dead'"}, got[1]); diff != "" {
		t.Errorf("row 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"unmeasured", "2", "", "tab\there", "", ""}, got[3]); diff != "" {
		t.Errorf("row 3, NULLs as empty fields (-want +got):\n%s", diff)
	}
}

// TestParseFormatListsTheValidOnes stops a typo in --format from failing
// without saying what would work.
func TestParseFormatListsTheValidOnes(t *testing.T) {
	for _, f := range Formats {
		got, err := ParseFormat(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	_, err := ParseFormat("yaml")
	if err == nil || !strings.Contains(err.Error(), `"yaml"`) || !strings.Contains(err.Error(), "table, tsv, markdown, csv, json") {
		t.Errorf("ParseFormat(yaml) error = %v", err)
	}
}

// TestRenderRefusesMalformedTables stops a builder bug (a short row, an
// unexpected cell type) from rendering as shifted or garbled columns.
func TestRenderRefusesMalformedTables(t *testing.T) {
	for name, tbl := range map[string]*Table{
		"short row": {Columns: []string{"a", "b"}, Rows: [][]any{{int64(1)}}},
		"odd type":  {Columns: []string{"a"}, Rows: [][]any{{struct{}{}}}},
		"float32":   {Columns: []string{"a"}, Rows: [][]any{{float32(1)}}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, f := range Formats {
				if err := Render(&bytes.Buffer{}, tbl, f); err == nil {
					t.Errorf("%s: rendered a malformed table", f)
				}
			}
		})
	}
}
