package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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

// crosses reports whether line l crosses the rule: only a significant,
// comparable change does.
func (r GateRule) crosses(l *DiffLine) bool {
	if !l.Cmp.Significant || !l.Comparable() {
		return false
	}
	if r.Any {
		return true
	}
	if l.Key != r.Key {
		return false
	}
	v := l.Cmp.Delta * 100
	if r.Unit == "pp" {
		v = l.Change()
		if !l.Rate { // a proportion metric: its own B − A, in points
			v *= 100
		}
	}
	if math.IsNaN(v) {
		return false
	}
	if r.Op == '<' {
		return v < r.Limit
	}
	return v > r.Limit
}

// Gate returns one sentence per line that crosses a rule, naming the rule,
// the group and the change; none when the gate passes.
func (df *Diff) Gate(rules []GateRule) []string {
	var failed []string
	for i := range df.Lines {
		l := &df.Lines[i]
		for _, r := range rules {
			if r.crosses(l) {
				failed = append(failed, fmt.Sprintf("%s: %s %s (p=%.3g) crosses %s", groupName(l.Task, l.Arm), l.Key, humanDelta(l), l.Cmp.P, r.Text))
			}
		}
	}
	return failed
}

// Verdict is the one line a pull request comment starts with.
func Verdict(failed []string, rules []GateRule) string {
	if len(failed) == 0 {
		texts := make([]string, len(rules))
		for i, r := range rules {
			texts[i] = r.Text
		}
		return "✅ wfb diff: pass — no significant change crosses " + strings.Join(texts, ", ")
	}
	return fmt.Sprintf("❌ wfb diff: FAIL — %d significant change(s) cross the gate: %s", len(failed), strings.Join(failed, "; "))
}
