package report

import (
	"encoding/json"
	"math"
	"testing"
)

// TestOneJSONEncoderForEveryCell stops wfb's JSON outputs from spelling a
// cell two ways: Render's json and Export's jsonl each had an encoder, and
// they disagreed — the export wrote a BLOB as its bytes taken for text
// (invalid UTF-8 lost to U+FFFD) where the tables wrote base64, and floats
// with strconv's 'g' (1234567 as 1.234567e+06, 0.00001 as 1e-05) where the
// tables wrote every digit of 1e21. One encoder now writes floats as
// encoding/json does: the shortest decimal that reads back exactly.
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
		{"float not exactly decimal", 10.180000000000001, `10.180000000000001`},
		{"float sum", tenth + 0.2, `0.30000000000000004`}, // not the constant 0.3
		{"float whole", 1234567.0, `1234567`},             // export: 1.234567e+06
		{"float small", 0.00001, `0.00001`},               // export: 1e-05
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
				std, _ := json.Marshal(f)
				if string(got) != string(std) {
					t.Errorf("jsonValue(%v) = %s, encoding/json says %s", f, got, std)
				}
				var back float64
				if err := json.Unmarshal(got, &back); err != nil || back != f {
					t.Errorf("jsonValue(%v) = %s reads back as %v (%v)", f, got, back, err)
				}
			}
		})
	}
}
