package termtext

import "testing"

// TestShowLeavesNothingThatActsOnATerminal stops a control, a C1 CSI, a
// bidi override or a stray byte from getting through Show, and Show from
// dropping them or changing what it already showed.
func TestShowLeavesNothingThatActsOnATerminal(t *testing.T) {
	for _, tc := range []struct{ in, keep, want string }{
		{"a\x1b[31mb\x07", "", "a␛[31mb␇"},
		{"over\rOK", "", "over␍OK"},
		{"line\r\nnext\rx\n", "\n", "line\r\nnext␍x\n"},
		{"tab\there", "\t", "tab\there"},
		{"csi \u009b2J rtl \u202eexe del \x7f", "", `csi \u009b2J rtl \u202eexe del ␡`},
		{"bad \xff byte", "", `bad \xff byte`},
		{"plain ünïcödé", "", "plain ünïcödé"},
	} {
		got := Show(tc.in, tc.keep)
		if got != tc.want {
			t.Errorf("Show(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
		}
		if again := Show(got, tc.keep); again != got {
			t.Errorf("Show is not idempotent: %q -> %q", got, again)
		}
	}
}
