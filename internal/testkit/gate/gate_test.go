package gate

import (
	"strings"
	"testing"
)

// TestLineNamesWhatSkippedAndHowToEnableIt stops a skipped gated test from
// going unmentioned by `go test ./...`: the line names the tests, the
// variable that makes them mandatory, and is empty when nothing skipped.
func TestLineNamesWhatSkippedAndHowToEnableIt(t *testing.T) {
	if got := Line("pkg"); got != "" {
		t.Fatalf("nothing skipped yet, line %q", got)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		t.Run(name, func(t *testing.T) { Skipf(t, "WFB_REQUIRE_X", "no x here") })
	}
	t.Run("e", func(t *testing.T) { Skipf(t, "WFB_REQUIRE_Y", "no y here") })
	got := Line("pkg")
	for _, want := range []string{
		"wfb pkg: skipped 5 gated tests",
		"TestLineNamesWhatSkippedAndHowToEnableIt/a, TestLineNamesWhatSkippedAndHowToEnableIt/b, TestLineNamesWhatSkippedAndHowToEnableIt/c and 1 more (WFB_REQUIRE_X=1 makes them mandatory)",
		"TestLineNamesWhatSkippedAndHowToEnableIt/e (WFB_REQUIRE_Y=1 makes them mandatory)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("not one line: %q", got)
	}
}
