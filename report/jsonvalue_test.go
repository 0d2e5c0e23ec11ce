package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestOneJSONEncoderForEveryCell stops wfb's JSON outputs from spelling a
// cell two ways: Render's json and Export's jsonl each had an encoder, and
// they disagreed — the export wrote a BLOB as its bytes taken for text
// (invalid UTF-8 lost to U+FFFD) where the tables wrote base64, and floats
// with strconv's 'g' (1234567 as 1.234567e+06, 0.00001 as 1e-05) where the
// tables wrote every digit of 1e21. One encoder now writes floats as
// encoding/json spells them, each as its decimal of at most 15
// significant digits (a sum of costs is 10.18, not 10.180000000000001).
func TestOneJSONEncoderForEveryCell(t *testing.T) {
	tenth := 0.1
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, `null`},
		{"NaN", math.NaN(), `null`},
		{"+Inf", math.Inf(1), `null`},
		{"-Inf", math.Inf(-1), `null`},
		{"int64", int64(-9007199254740993), `-9007199254740993`},
		{"int", 42, `42`},
		{"bool", true, `true`},
		{"float not exactly decimal", 10.180000000000001, `10.18`},
		{"float sum", tenth + 0.2, `0.3`}, // not 0.30000000000000004
		{"float third", 2.0 / 3, `0.666666666666667`},
		{"float 17 digits", 0.12345678901234568, `0.123456789012346`},
		{"float whole", 1234567.0, `1234567`}, // export: 1.234567e+06
		{"float small", 0.00001, `0.00001`},   // export: 1e-05
		{"float tiny", 1e-7, `1e-7`},
		{"float huge", 1e21, `1e+21`}, // render: 1000000000000000000000
		{"float smallest", 5e-324, `5e-324`},
		{"float negative zero", math.Copysign(0, -1), `-0`},
		{"bytes", []byte{0xff, 0x00, 'a'}, `"/wBh"`}, // export: "\ufffd\u0000a"
		{"empty bytes", []byte{}, `""`},
		{"invalid UTF-8", "a\xffb", `"a\ufffdb"`},
		{"markup", "<b>&amp;", `"<b>&amp;"`},
		{"control", "\x1b[31mred", `"\u001b[31mred"`},
		{"bidi override", "a\u202eb", `"a\u202eb"`},
		{"tab and newline", "a\tb\n", `"a\tb\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonValue(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("jsonValue(%#v) = %s, want %s", tt.v, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("jsonValue(%#v) = %s is not JSON", tt.v, got)
			}
			if f, ok := tt.v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
				// Spelled as encoding/json spells the decimal, which
				// reads back within 5 parts in 1e15.
				std, _ := json.Marshal(decimal(f))
				if string(got) != string(std) {
					t.Errorf("jsonValue(%v) = %s, encoding/json says %s", f, got, std)
				}
				var back float64
				if err := json.Unmarshal(got, &back); err != nil || math.Abs(back-f) > math.Abs(f)*5e-15 {
					t.Errorf("jsonValue(%v) = %s reads back as %v (%v)", f, got, back, err)
				}
			}
		})
	}
}

// TestEveryFormatPrintsASumOfDecimalsAsTheDecimal stops tsv, csv, json and
// the export from printing a sum of costs or seconds with the noise of
// float arithmetic: 0.1 + 0.2 is 0.3 and 10.18 (a sum landing on
// 10.180000000000001) is 10.18 in every one of them.
func TestEveryFormatPrintsASumOfDecimalsAsTheDecimal(t *testing.T) {
	tenth := 0.1
	tab := &Table{Columns: []string{"cost_usd", "wall_s"}, Rows: [][]any{{tenth + 0.2, 10.180000000000001}}}
	for _, f := range []Format{FormatTSV, FormatCSV, FormatJSON, FormatMarkdown, FormatTable} {
		var b strings.Builder
		if err := Render(&b, tab, f); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "0.3") || !strings.Contains(out, "10.18") ||
			strings.Contains(out, "0.30000000000000004") || strings.Contains(out, "10.180000000000001") {
			t.Errorf("%s:\n%s\nwant 0.3 and 10.18", f, out)
		}
	}
	if got := csvValue(tenth + 0.2); got != "0.3" {
		t.Errorf("export csv: %s, want 0.3", got)
	}
}
