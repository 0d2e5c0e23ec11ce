package main

import (
	"strings"
	"testing"
)

// TestDiffFailOnGatesOnlySignificantCrossings stops a CI gate that never
// fails (wfb diff always exited 0), one that fails on noise, and one that
// passes what it cannot show: the fixture's candidate cost fell 30%
// (significant), nothing else moved significantly. A rule ends pass (the
// interval lies within its limit), fail (significant, beyond it; exit 1)
// or inconclusive (neither; exit 3, 0 with --accept-inconclusive) — before,
// every rule that was not crossed passed, however wide its interval.
func TestDiffFailOnGatesOnlySignificantCrossings(t *testing.T) {
	db := reportFixture(t)
	tests := []struct {
		rules    string
		code     int
		verdict  string
		inStderr string
	}{
		{"cost_usd<-10%", 1, "❌ wfb diff: FAIL", "arm candidate: cost_usd -30.0% (p="},
		{"any", 1, "❌ wfb diff: FAIL", "is significant among 16 tests (Holm)"},
		// Within the limit, shown by the interval: a pass.
		{"cost_usd>+50%", 0, "✅ wfb diff: pass", "every change judged lies within its limit"},
		// No significant change, but the interval reaches past the limit:
		// neither shown, so inconclusive (exit 3), with the cells that
		// would decide it.
		{"cost_usd>+10%", 3, "⚠️ wfb diff: INCONCLUSIVE", "cost_usd +0.0% ~ (p=1, 95% CI -16.7% – +16.7%) reaches past 10%; about 37 cells per side"},
		{"pass_rate<-5pp, duration_ms>+5%", 3, "⚠️ wfb diff: INCONCLUSIVE", "would decide it at 80% power"},
		// Significant, but its interval reaches past -40%: not shown beyond.
		{"cost_usd<-40%", 3, "⚠️ wfb diff: INCONCLUSIVE", "reaches past -40%"},
		{"cost_usd<-40% --accept-inconclusive", 0, "⚠️ wfb diff: INCONCLUSIVE", "reaches past -40%"},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			rules, accept := strings.CutSuffix(tt.rules, " --accept-inconclusive")
			args := []string{"diff", "base", "cand", "--fail-on", rules, "--format", "markdown", "--db", db}
			if accept {
				args = append(args, "--accept-inconclusive")
			}
			out, errOut, code := runWFB(t, false, args...)
			if code != tt.code {
				t.Errorf("exit %d; want %d (stderr %q)", code, tt.code, errOut)
			}
			if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, tt.verdict) {
				t.Errorf("first line %q; want it to start %q", first, tt.verdict)
			}
			if !strings.Contains(errOut, tt.inStderr) || !strings.HasPrefix(errOut, tt.verdict) {
				t.Errorf("stderr %q; want the verdict, with %q", errOut, tt.inStderr)
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
