// Package termtext shows text that someone else controls (an agent's
// output, a task name) on a terminal without letting it act there: no
// escape sequence, carriage return, C1 control or bidirectional override
// in it reaches the terminal as itself. wfb's report renderers and its
// log lines share it.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NeedsEscape says r would act on a terminal rather than show on it.
func NeedsEscape(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.Is(unicode.Bidi_Control, r)
}

// Show returns s with every rune that would act on a terminal shown
// instead (a C0 control or DEL as its control picture, ESC as ␛; a C1
// control or bidirectional override as a \u escape; a byte that is not
// UTF-8 as a \x escape), except the runes in keep; where keep holds '\n',
// CR LF is kept as a line break too. Unlike a box table it leaves a kept
// tab a tab: it is for text whose columns are not aligned by width
// (markdown, csv, a log line). Show(Show(s, k), k) == Show(s, k).
func Show(s, keep string) string {
	if !HasControls(s, keep) {
		return s
	}
	show := func(r rune) (string, bool) {
		switch {
		case strings.ContainsRune(keep, r) || !NeedsEscape(r):
			return "", false
		case r < 0x20:
			return string(0x2400 + r), true
		case r == 0x7f:
			return "\u2421", true
		}
		return U(r), true
	}
	if !strings.ContainsRune(keep, '\n') {
		return Map(s, show)
	}
	lines := strings.Split(s, "\r\n")
	for i, l := range lines {
		lines[i] = Map(l, show)
	}
	return strings.Join(lines, "\r\n")
}

// Map returns s with each rune for which f says true replaced by the text
// f returns, and each byte that is not UTF-8 by its \x escape (\xff).
func Map(s string, f func(r rune) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		} else if t, ok := f(r); ok {
			b.WriteString(t)
		} else {
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// U is r as a \u escape with four hex digits (\u202e); r must be below
// U+10000.
func U(r rune) string { return `\u` + strconv.FormatUint(uint64(r)|0x10000, 16)[1:] }

// HasControls says s holds a rune Show would change: one that needs an
// escape and is not in keep, or a byte that is not UTF-8.
func HasControls(s, keep string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if NeedsEscape(r) && !strings.ContainsRune(keep, r) {
			return true
		}
	}
	return false
}
