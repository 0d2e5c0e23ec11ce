package wfb

import "unicode/utf8"

// Clip cuts s to at most n bytes for a message, marking a cut with "...":
// a refusal quotes the value it refused, and a log line the error it
// shows, without letting a huge one through. The cut never falls inside a
// UTF-8 rune, so clipped text stays the text it was (a rune cut in half
// would show as \xe2\x80 in a terminal-safe message, or as U+FFFD once
// stored), and a rune that does not fit is left out whole.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	// Back up over the continuation bytes of the rune the cut falls in; a
	// rune has at most utf8.UTFMax bytes, so bytes further back are not
	// part of it (in text that is not UTF-8 the cut stays where it was).
	for i := cut; i >= 0 && i > cut-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			cut = i
			break
		}
	}
	return s[:cut] + "..."
}
