package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/report/stats"
)

// GateRule is one rule of `wfb diff --fail-on`: a significant change of
// Key past Limit (in Unit) in the direction of Op fails the gate. Any
// fails on every significant change.
type GateRule struct {
	Text  string // as written, for messages
	Any   bool
	Key   string // a DiffLine key: strict_pass_rate, cost_usd, …
	Op    byte   // '<' or '>'
	Limit float64
	Unit  string // "pp" (pass rates: B − A in points) or "%" (relative)
}

// gateKeys are the keys a rule may name; pass_rate is the strict rate.
func gateKeys() map[string]string {
	keys := map[string]string{"pass_rate": "strict_pass_rate", "strict_pass_rate": "strict_pass_rate", "clean_pass_rate": "clean_pass_rate"}
	for m := range NumMetrics {
		keys[m.Column()] = m.Column()
	}
	return keys
}

// ParseGateRules reads --fail-on: rules separated by commas, each "any" or
// METRIC<LIMIT / METRIC>LIMIT with LIMIT a signed number ending in pp (a
// pass rate's change in percentage points) or % (a metric's relative
// change): pass_rate<-5pp, cost_usd>+10%.
func ParseGateRules(s string) ([]GateRule, error) {
	keys := gateKeys()
	var rules []GateRule
	for _, text := range strings.Split(s, ",") {
		text = strings.TrimSpace(text)
		if text == "any" {
			rules = append(rules, GateRule{Text: text, Any: true})
			continue
		}
		r, err := parseGateRule(text, keys)
		if err != nil {
			return nil, fmt.Errorf("--fail-on rule %q: %w", text, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseGateRule(text string, keys map[string]string) (GateRule, error) {
	i := strings.IndexAny(text, "<>")
	if i <= 0 {
		return GateRule{}, fmt.Errorf("want any, or METRIC<LIMIT or METRIC>LIMIT such as pass_rate<-5pp or cost_usd>+10%%")
	}
	r := GateRule{Text: text, Op: text[i]}
	key, ok := keys[strings.TrimSpace(text[:i])]
	if !ok {
		return r, fmt.Errorf("unknown metric %q; the metrics are pass_rate, clean_pass_rate and the results columns (cost_usd, input_tokens, duration_ms, …)", text[:i])
	}
	r.Key = key
	limit := strings.TrimSpace(text[i+1:])
	switch {
	case strings.HasSuffix(limit, "pp"):
		r.Unit = "pp"
	case strings.HasSuffix(limit, "%"):
		r.Unit = "%"
	default:
		return r, fmt.Errorf("limit %q has no unit: end it in pp (percentage points, for pass rates) or %% (relative change)", limit)
	}
	if r.Unit == "pp" && !strings.HasSuffix(key, "_pass_rate") && key != VerdictCorrect.Column() {
		return r, fmt.Errorf("pp is for rates; %s changes relatively: use %%", key)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(limit, r.Unit), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return r, fmt.Errorf("limit %q is not a number", limit)
	}
	r.Limit = v
	return r, nil
}

// GateOutcome is what a gate rule, or a whole gate, concludes.
type GateOutcome int

const (
	// GatePass: the interval of every change a rule judges lies inside
	// its limit (for any: no change is significant).
	GatePass GateOutcome = iota
	// GateInconclusive: the statistics can show neither a pass nor a
	// failure — too few samples for the limit, a metric not computable on
	// a side, sides scored against different labels.
	GateInconclusive
	// GateFail: a change is significant (within the gate's family, Holm)
	// and beyond the rule's limit.
	GateFail
)

func (o GateOutcome) String() string {
	switch o {
	case GateFail:
		return "fail"
	case GateInconclusive:
		return "inconclusive"
	}
	return "pass"
}

// GateDecision is one rule's conclusion on one line of the diff (Line is
// nil when no line has the rule's metric).
type GateDecision struct {
	Rule    GateRule
	Line    *DiffLine
	Outcome GateOutcome
	Why     string
}

// GateResult is a gate's conclusion: the worst of its decisions, and each
// of them.
type GateResult struct {
	Outcome   GateOutcome
	Decisions []GateDecision
	// Family is how many tests the gate judged together; Alpha its
	// family-wise error rate.
	Family int
	Alpha  float64
	rules  []GateRule
}

// The decision rule of a gate, the way equivalence and non-inferiority
// tests decide (docs/statistics.md, "A gate for CI"):
//
//   - fail: the change is significant and its estimate lies beyond the
//     rule's limit. Significance is judged over the gate's family — every
//     test any rule looks at — with Holm's step-down, so that the chance
//     that a gate fails on two identical sides is at most alpha however
//     many rules and metrics it has.
//   - pass: the change's interval at 1 − alpha lies entirely on the
//     allowed side of the limit: the data show the change is within it.
//     (A gate passes when every rule passes: an intersection of tests at
//     alpha each errs at most alpha, so no adjustment is needed there.)
//   - inconclusive: neither — the interval reaches past the limit, the
//     metric was not computable on a side, or the sides were scored
//     against different labels.
//
// `any` fails on any significant change (Holm) and otherwise passes; it
// leaves out wall time, which moves with the machine's load (name
// duration_ms in a rule of its own to gate it), and lines with no value on
// either side.
func (df *Diff) Gate(rules []GateRule) GateResult {
	g := GateResult{rules: rules, Alpha: df.Options.Alpha}
	looks := make([][]int, len(rules))
	inFamily := map[int]bool{}
	for ri, r := range rules {
		for i := range df.Lines {
			l := &df.Lines[i]
			if !r.looksAt(l) {
				continue
			}
			looks[ri] = append(looks[ri], i)
			if l.Comparable() && !l.LabelsDiffer && !math.IsNaN(l.Cmp.P) {
				inFamily[i] = true
			}
		}
	}
	sig := holm(df.Lines, inFamily, df.Options.Alpha)
	g.Family = len(inFamily)
	for ri, r := range rules {
		if len(looks[ri]) == 0 {
			if !r.Any {
				g.add(GateDecision{Rule: r, Outcome: GateInconclusive, Why: "no line of the diff compares " + r.Key})
			}
			continue
		}
		for _, i := range looks[ri] {
			g.add(r.decide(&df.Lines[i], sig[i], g.Family, df.Options.Alpha))
		}
	}
	return g
}

func (g *GateResult) add(d GateDecision) {
	g.Decisions = append(g.Decisions, d)
	g.Outcome = max(g.Outcome, d.Outcome)
}

// looksAt reports whether the rule judges line l.
func (r GateRule) looksAt(l *DiffLine) bool {
	if !r.Any {
		return l.Key == r.Key
	}
	return l.Key != WallTime.Column() && (l.Cmp.A.N > 0 || l.Cmp.B.N > 0)
}

// holm returns which lines of the family are significant at family-wise
// error alpha by Holm's step-down: sorted by p, the i-th smallest (from 0)
// must be at most alpha / (m − i), and the first that is not stops the
// walk.
func holm(lines []DiffLine, family map[int]bool, alpha float64) map[int]bool {
	idx := make([]int, 0, len(family))
	for i := range family {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool {
		if pa, pb := lines[idx[a]].Cmp.P, lines[idx[b]].Cmp.P; pa != pb {
			return pa < pb
		}
		return idx[a] < idx[b]
	})
	sig := map[int]bool{}
	for k, i := range idx {
		if lines[i].Cmp.P > alpha/float64(len(idx)-k) {
			break
		}
		sig[i] = true
	}
	return sig
}

// decide is the rule's conclusion on line l, significant (or not) within
// a family of m tests.
func (r GateRule) decide(l *DiffLine, significant bool, m int, alpha float64) GateDecision {
	d := GateDecision{Rule: r, Line: l, Outcome: GateInconclusive}
	where := groupName(l.Task, l.Arm) + ": " + l.Key
	switch {
	case l.LabelsDiffer:
		d.Why = fmt.Sprintf("%s: the sides were scored against different labels (%s); rescore one side with the other's bench (wfb rescore RUN --bench FILE)", where, l.LabelsNote)
		return d
	case !l.Comparable():
		d.Why = fmt.Sprintf("%s is not computable on both sides (A has %d values, B %d)", where, l.Cmp.A.N, l.Cmp.B.N)
		return d
	}
	est := ruleChange(l, r.Unit)
	lo, hi := ruleInterval(l, r.Unit)
	change := fmt.Sprintf("%s %s (p=%.3g, %d%% CI %s)", where, humanDelta(l), l.Cmp.P, int(math.Round((1-alpha)*100)), text(humanChangeInterval(l)))
	if r.Any {
		if significant {
			d.Outcome, d.Why = GateFail, change+" is significant among "+strconv.Itoa(m)+" tests (Holm)"
		} else {
			d.Outcome, d.Why = GatePass, change+" is not significant"
		}
		return d
	}
	unit := r.Unit
	beyond := (r.Op == '<' && est < r.Limit) || (r.Op == '>' && est > r.Limit)
	within := (r.Op == '<' && lo > r.Limit) || (r.Op == '>' && hi < r.Limit)
	switch {
	case significant && beyond:
		d.Outcome, d.Why = GateFail, change+" crosses "+r.Text
	case within:
		d.Outcome, d.Why = GatePass, change+" lies within "+r.Text
	default:
		d.Why = change + " reaches past " + strconv.FormatFloat(r.Limit, 'f', -1, 64) + unit
		if beyond && l.Cmp.P <= alpha {
			d.Why += fmt.Sprintf(" (p=%.3g is not significant for a family of %d tests, Holm)", l.Cmp.P, m)
		}
		d.Why += "; " + needToDecide(l)
	}
	return d
}

// needToDecide says how many cells would decide an inconclusive line: the
// sample --detect sizes for (the gate's limits, unless --detect asked
// another change).
func needToDecide(l *DiffLine) string {
	switch {
	case l.Sens.Need > 0:
		unit := "cells per side"
		if l.Cmp.Test == stats.TestMcNemarExact {
			unit = "pairs"
		}
		return fmt.Sprintf("about %d %s (a bench with runs: %d) would decide it at 80%% power", l.Sens.Need, unit, l.NeededRuns())
	case l.Sens.Need < 0:
		return "no sample wfb can size would decide it (the change sized for is out of reach)"
	}
	return "--detect sizes the sample that would decide it"
}

// Verdict is the one line a pull request comment starts with: pass, fail
// or inconclusive, and why.
func (g GateResult) Verdict() string {
	var failed, unsure []string
	for _, d := range g.Decisions {
		switch d.Outcome {
		case GateFail:
			failed = append(failed, d.Why)
		case GateInconclusive:
			unsure = append(unsure, d.Rule.Text+": "+d.Why)
		}
	}
	texts := make([]string, len(g.rules))
	for i, r := range g.rules {
		texts[i] = r.Text
	}
	family := fmt.Sprintf("%d tests, family-wise error %v (Holm)", g.Family, g.Alpha)
	switch g.Outcome {
	case GateFail:
		v := fmt.Sprintf("❌ wfb diff: FAIL — %d change(s) cross the gate: %s", len(failed), strings.Join(failed, "; "))
		if len(unsure) > 0 {
			v += fmt.Sprintf(". Also inconclusive: %s", strings.Join(unsure, "; "))
		}
		return v + " [" + family + "]"
	case GateInconclusive:
		return fmt.Sprintf("⚠️ wfb diff: INCONCLUSIVE — %d rule check(s) could not be decided: %s [%s]", len(unsure), strings.Join(unsure, "; "), family)
	}
	return "✅ wfb diff: pass — " + strings.Join(texts, ", ") + " hold: every change judged lies within its limit, none significant beyond it [" + family + "]"
}

// Failed lists the sentences of the decisions that failed.
func (g GateResult) Failed() []string {
	var out []string
	for _, d := range g.Decisions {
		if d.Outcome == GateFail {
			out = append(out, d.Why)
		}
	}
	return out
}

// ruleChange is a line's change in unit: "pp", percentage points (a pass
// rate's B − A, or a proportion's, such as verdict accuracy); "%", the
// change relative to A's centre, for any line.
func ruleChange(l *DiffLine, unit string) float64 {
	switch {
	case unit == "%":
		return 100 * l.Cmp.Delta
	case l.Rate:
		return l.Change()
	}
	return 100 * l.Change()
}

// ruleInterval bounds ruleChange at the diff's level.
func ruleInterval(l *DiffLine, unit string) (lo, hi float64) {
	switch {
	case unit == "%":
		lo, hi = l.DeltaInterval()
	case l.Rate:
		return l.ChangeInterval()
	default:
		lo, hi = l.ChangeInterval()
	}
	return 100 * lo, 100 * hi
}

// naturalUnit is the unit a line's change is shown in: pp for rates and
// proportions, % for every other metric.
func naturalUnit(l *DiffLine) string {
	if l.isRate() {
		return "pp"
	}
	return "%"
}

// DetectForRules is the change a gate's rules need sized (for --detect,
// when it asked none): the tightest non-zero limit of each unit, so that
// an inconclusive rule can say how many cells would decide it.
func DetectForRules(rules []GateRule) Detect {
	var d Detect
	for _, r := range rules {
		v := math.Abs(r.Limit)
		switch {
		case r.Any || v == 0:
		case r.Unit == "pp" && (d.PP == 0 || v < d.PP) && v < 100:
			d.PP = v
		case r.Unit == "%" && (d.Rel == 0 || v/100 < d.Rel):
			d.Rel = v / 100
		}
	}
	return d
}
