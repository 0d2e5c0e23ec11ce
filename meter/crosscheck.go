package meter

import (
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
)

// Reported is the usage the agent itself reported for the attempt, in
// wfb's semantics (see Usage); nil is a figure it did not report, or one
// that was refused.
type Reported struct {
	Input, Output, CacheRead, CacheCreation *int64
}

// NotCompared is a field's outcome when the protocol does not report the
// figure; the other outcomes are the vocabulary's verdicts.
const NotCompared wfb.Verdict = "not-compared"

// Check is the cross-check of an attempt's two witnesses of usage.
type Check struct {
	Outcome wfb.Verdict // wfb.VerdictAgree, wfb.VerdictDisagree or wfb.VerdictRefused
	Fields  []FieldCheck
}

// FieldCheck is one figure of a Check.
type FieldCheck struct {
	Field   string      // a wfb column name, e.g. cache_read_input_tokens
	Outcome wfb.Verdict // wfb.VerdictAgree, wfb.VerdictDisagree, wfb.VerdictRefused or NotCompared
	Wire    *int64      // the metered sum; nil when not measured
	WireRaw string      // the nonsense the wire carried, when wfb.VerdictRefused for it
	Agent   *int64      // what the agent reported; nil when it reported none
	Why     string      // for wfb.VerdictRefused and NotCompared
}

// CrossCheck compares what the agent reported with what the wire carried
// for the four usage figures. The wire is the measurement: a figure it
// lacked or carried as nonsense refuses the whole measurement (naming the
// figure, the wire's value and the agent's), whatever the agent printed;
// otherwise any figure that differs is a disagreement, and an agent that
// reported nothing for a figure the wire measured disagrees too.
func CrossCheck(agent Reported, wire Summary) Check {
	pairs := []struct {
		name  string
		sum   Sum
		agent *int64
	}{
		{FieldInput, wire.Input, agent.Input},
		{FieldOutput, wire.Output, agent.Output},
		{FieldCacheRead, wire.CacheRead, agent.CacheRead},
		{FieldCacheCreation, wire.CacheCreation, agent.CacheCreation},
	}
	c := Check{Outcome: wfb.VerdictAgree}
	compared := 0
	for _, p := range pairs {
		fc := checkField(p.name, p.sum, p.agent)
		c.Fields = append(c.Fields, fc)
		switch fc.Outcome {
		case wfb.VerdictRefused:
			c.Outcome = wfb.VerdictRefused
		case wfb.VerdictDisagree:
			if c.Outcome != wfb.VerdictRefused {
				c.Outcome = wfb.VerdictDisagree
			}
		}
		if fc.Outcome != NotCompared {
			compared++
		}
	}
	if compared == 0 {
		c.Outcome = wfb.VerdictRefused
	}
	return c
}

func checkField(name string, s Sum, agent *int64) FieldCheck {
	fc := FieldCheck{Field: name, Wire: s.Value, Agent: agent}
	switch {
	case s.NotReported:
		fc.Outcome, fc.Why = NotCompared, s.Why
	case s.Value == nil:
		fc.Outcome, fc.WireRaw, fc.Why = wfb.VerdictRefused, s.Raw, s.Why
	case agent == nil || *agent != *s.Value:
		fc.Outcome = wfb.VerdictDisagree
	default:
		fc.Outcome = wfb.VerdictAgree
	}
	return fc
}

// String says the outcome and, for each field that is not in agreement,
// both values: "refused: cache_read_input_tokens: request 2 (...): usage.
// cache_read_input_tokens is negative (-5) (wire -5, agent 0)".
func (c Check) String() string {
	var parts []string
	for _, f := range c.Fields {
		switch f.Outcome {
		case wfb.VerdictDisagree:
			parts = append(parts, fmt.Sprintf("%s wire %s, agent %s", f.Field, showCount(f.Wire, ""), showCount(f.Agent, "")))
		case wfb.VerdictRefused:
			parts = append(parts, fmt.Sprintf("%s: %s (wire %s, agent %s)", f.Field, f.Why, showCount(f.Wire, f.WireRaw), showCount(f.Agent, "")))
		}
	}
	if len(parts) == 0 {
		return string(c.Outcome)
	}
	return string(c.Outcome) + ": " + strings.Join(parts, "; ")
}

func showCount(v *int64, raw string) string {
	switch {
	case raw != "":
		return raw
	case v == nil:
		return "absent"
	}
	return fmt.Sprint(*v)
}
