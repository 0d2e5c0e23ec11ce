package wfb

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipNeverCutsARuneInHalf stops a clipped message from ending in half
// a rune: the three clips wfb had cut at a byte count, so a refused value
// or an error detail holding "é" or "→" at the cut came out as invalid
// UTF-8.
func TestClipNeverCutsARuneInHalf(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 40, "short"},
		{"exact", 5, "exact"},
		{"abcdef", 3, "abc..."},
		{"héllo", 2, "h..."},  // é is bytes 1-2: left out whole
		{"héllo", 3, "hé..."}, // the cut falls after é
		{"a→b", 2, "a..."},    // → is three bytes
		{"a→b", 3, "a..."},    // still inside →
		{"a→b", 4, "a→..."},   // just after it
		{"😀x", 3, "..."},      // a four-byte rune at the start
		{"abc", 0, "..."},     // nothing fits
		{"\x80\x80\x80\x80\x80\x80", 5, "\x80\x80\x80\x80\x80..."}, // not UTF-8: cut where asked
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	s := strings.Repeat("aé→😀", 10)
	for n := range len(s) + 2 {
		got := Clip(s, n)
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q: not UTF-8", s, n, got)
		}
		if body := strings.TrimSuffix(got, "..."); len(body) > n || !strings.HasPrefix(s, body) {
			t.Errorf("Clip(%q, %d) = %q: longer than %d bytes or not a prefix", s, n, got, n)
		}
		if n >= len(s) && got != s {
			t.Errorf("Clip(%q, %d) = %q: cut what fits", s, n, got)
		}
	}
}
