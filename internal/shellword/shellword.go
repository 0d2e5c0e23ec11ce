// Package shellword spells an argument for a command line printed as a
// hint, so that pasted into a POSIX shell it is that one argument again.
package shellword

import "strings"

// safe are the characters no POSIX shell treats specially in a word.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@%"

// Quote is arg as a shell reads it back as one word: itself when it holds
// only characters no shell treats specially, else single-quoted, each
// quote in it ended, escaped and begun again.
func Quote(arg string) string {
	if arg != "" && strings.Trim(arg, safe) == "" {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}
