package wfb

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// A count is a usage figure (tokens, turns, milliseconds) as an agent or a
// provider wrote it in JSON. It is measured only when it is a non-negative
// integer written as one: the real agents rewrite what they were sent (a
// -5 becomes 0, true becomes 1), so wfb refuses anything else rather than
// coerce it. ParseCount and ParseBigCount are the one reading of that rule
// (the runner's, the meter's and the stand-in agent's).

// ErrNullCount is the refusal of a count that is JSON null or empty: not
// reported, where the other refusals say the value is nonsense.
var ErrNullCount = errors.New("is null")

// MaxCount bounds every count, duration and size wfb stores (tokens,
// turns, milliseconds, bytes): 10^15, a thousand times past any session's
// tokens, and far enough below 2^63 that SQLite's SUM over an arm's
// attempts cannot overflow short of 9,223 attempts all at the bound. A
// figure past it is nonsense, not a measurement: ParseCount refuses it as
// out of range, the store refuses to write it, and a merge refuses a
// source holding it.
const MaxCount int64 = 1_000_000_000_000_000

// MaxCountText is MaxCount as a refusal names it.
const MaxCountText = "10^15"

// ParseCount reads raw as a count of at most MaxCount. The error says why
// it is not one, after the field's name: "is negative (-5)", "is a string
// (\"1200\")", "is not a whole number (1.5)", "is out of range (...)", or
// ErrNullCount.
func ParseCount(raw []byte) (int64, error) {
	n, err := ParseBigCount(raw)
	if err != nil {
		return 0, err
	}
	if !n.IsInt64() || n.Int64() > MaxCount {
		return 0, fmt.Errorf("is out of range (%s; wfb takes at most %s)", Clip(n.String(), 40), MaxCountText) // n.String() is raw's text
	}
	return n.Int64(), nil
}

// ParseBigCount reads raw as a count of any size: the stand-in agent sums
// and forwards what the provider served exactly, so that a count beyond
// int64 reaches the runner, which refuses it (ParseCount), instead of
// wrapping around on the way.
func ParseBigCount(raw []byte) (*big.Int, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return nil, ErrNullCount
	case s == "true" || s == "false":
		return nil, fmt.Errorf("is a boolean (%s)", s)
	case strings.HasPrefix(s, `"`):
		return nil, fmt.Errorf("is a string (%s)", Clip(s, 40))
	case strings.HasPrefix(s, "{") || strings.HasPrefix(s, "["):
		return nil, fmt.Errorf("is not a number (%s)", Clip(s, 40))
	case strings.HasPrefix(s, "-"):
		return nil, fmt.Errorf("is negative (%s)", Clip(s, 40))
	case !isWholeNumber(s):
		return nil, fmt.Errorf("is not a whole number (%s)", Clip(s, 40))
	}
	n, _ := new(big.Int).SetString(s, 10) // decimal digits: cannot fail
	return n, nil
}

// isWholeNumber says s is a JSON integer literal without a sign: 0, or
// digits without a leading zero.
func isWholeNumber(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
