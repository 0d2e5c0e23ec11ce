package wfb

import (
	"errors"
	"strings"
	"testing"
)

// TestOnlyAWholeNumberIsACount stops a count from being coerced, and the
// reasons a row gives for refusing one from changing: the runner, the
// meter and the stand-in agent each spelled the rule, and now read counts
// through ParseCount alone.
func TestOnlyAWholeNumberIsACount(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // the refusal; "" for a count
		n    int64
	}{
		{"0", "", 0},
		{" 1200 ", "", 1200},
		{"", "is null", 0},
		{"null", "is null", 0},
		{"true", "is a boolean (true)", 0},
		{`"1200"`, `is a string ("1200")`, 0},
		{`{"n":1}`, `is not a number ({"n":1})`, 0},
		{"[1]", "is not a number ([1])", 0},
		{"-5", "is negative (-5)", 0},
		{"-0", "is negative (-0)", 0},
		{"1.5", "is not a whole number (1.5)", 0},
		{"2e3", "is not a whole number (2e3)", 0},
		{"2000.0", "is not a whole number (2000.0)", 0},
		{"007", "is not a whole number (007)", 0},
		{"9223372036854775808", "is out of range (9223372036854775808; wfb takes at most 10^15)", 0},
		{"9223372036854775807", "is out of range (9223372036854775807; wfb takes at most 10^15)", 0},
		{"1000000000000001", "is out of range (1000000000000001; wfb takes at most 10^15)", 0},
		{"1000000000000000", "", 1_000_000_000_000_000},
		{`"` + strings.Repeat("é", 30) + `"`, `is a string ("` + strings.Repeat("é", 19) + `...)`, 0},
	} {
		n, err := ParseCount([]byte(tc.raw))
		switch {
		case tc.want == "" && (err != nil || n != tc.n):
			t.Errorf("ParseCount(%q) = %d, %v; want %d", tc.raw, n, err, tc.n)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("ParseCount(%q) = %d, %v; want the refusal %q", tc.raw, n, err, tc.want)
		}
		if null := tc.raw == "" || tc.raw == "null"; errors.Is(err, ErrNullCount) != null {
			t.Errorf("ParseCount(%q): ErrNullCount %v, want %v", tc.raw, errors.Is(err, ErrNullCount), null)
		}
	}
}

// TestABigCountIsExactBeyondInt64 stops the stand-in agent's sums from
// wrapping: a count beyond int64 is read whole, for the runner to refuse.
func TestABigCountIsExactBeyondInt64(t *testing.T) {
	const huge = "100000000000000000000"
	n, err := ParseBigCount([]byte(huge))
	if err != nil || n.String() != huge {
		t.Fatalf("ParseBigCount(%s) = %v, %v", huge, n, err)
	}
	if _, err := ParseBigCount([]byte("-1")); err == nil {
		t.Error("ParseBigCount(-1) accepted a negative count")
	}
}
