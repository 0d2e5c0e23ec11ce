package main

import (
	"strings"
	"testing"
)

// TestDiffFailOnGatesOnlySignificantCrossings stops a CI gate that never
// fails (wfb diff always exited 0) and one that fails on noise: the
// fixture's candidate cost fell 30% (significant), nothing else moved
// significantly.
func TestDiffFailOnGatesOnlySignificantCrossings(t *testing.T) {
	db := reportFixture(t)
	tests := []struct {
		rules    string
		code     int
		verdict  string
		inStderr string
	}{
		{"cost_usd<-10%", 1, "❌ wfb diff: FAIL", "arm candidate: cost_usd -30.0% (p="},
		{"any", 1, "❌ wfb diff: FAIL", "crosses any"},
		{"cost_usd>+10%", 0, "✅ wfb diff: pass — no significant change crosses cost_usd>+10%", ""},
		{"pass_rate<-5pp, duration_ms>+5%", 0, "✅ wfb diff: pass", ""},
		{"cost_usd<-40%", 0, "✅ wfb diff: pass", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			out, errOut, code := runWFB(t, false, "diff", "base", "cand", "--fail-on", tt.rules, "--format", "markdown", "--db", db)
			if code != tt.code {
				t.Errorf("exit %d; want %d (stderr %q)", code, tt.code, errOut)
			}
			if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, tt.verdict) {
				t.Errorf("first line %q; want it to start %q", first, tt.verdict)
			}
			if !strings.Contains(errOut, tt.inStderr) || (tt.inStderr == "") != (errOut == "") {
				t.Errorf("stderr %q; want %q", errOut, tt.inStderr)
			}
		})
	}
}

// TestDiffFailOnRefusesBadRulesWithExit2 stops a typo in a gate from
// passing silently (a rule that never matches) or failing as if measured.
func TestDiffFailOnRefusesBadRulesWithExit2(t *testing.T) {
	db := reportFixture(t)
	for rules, want := range map[string]string{
		"colour<5%":       `unknown metric "colour"`,
		"cost_usd>10":     `limit "10" has no unit`,
		"cost_usd>+10pp":  "pp is for rates; cost_usd changes relatively",
		"pass_rate":       "want any, or METRIC<LIMIT",
		"pass_rate<-xpp":  `limit "-xpp" is not a number`,
		"any,cost_usd=1%": `rule "cost_usd=1%"`,
	} {
		t.Run(rules, func(t *testing.T) {
			_, errOut, code := runWFB(t, false, "diff", "base", "cand", "--fail-on", rules, "--db", db)
			if code != 2 || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
			}
		})
	}
}
