package meter

import (
	"fmt"
	"strings"
)

// Reported is the usage the agent itself reported for the attempt, in
// wfb's semantics (see Usage); nil is a figure it did not report, or one
// that was refused.
type Reported struct {
	Input, Output, CacheRead, CacheCreation *int64
}

// Check outcomes, overall and per field.
const (
	// Agree: the wire and the agent report the same figures.
	Agree = "agree"
	// Disagree: both were measured and differ (or only the wire was): the
	// wire's figures are the measurement.
	Disagree = "disagree"
	// Refused: the wire lacked a figure or carried nonsense: nothing is
	// measured, whatever the agent printed.
	Refused = "refused"
	// NotCompared: the protocol does not report the figure.
	NotCompared = "not-compared"
)

// Check is the cross-check of an attempt's two witnesses of usage.
type Check struct {
	Outcome string // Agree, Disagree or Refused
	Fields  []FieldCheck
}

// FieldCheck is one figure of a Check.
type FieldCheck struct {
	Field   string // a wfb column name, e.g. cache_read_input_tokens
	Outcome string // Agree, Disagree, Refused or NotCompared
	Wire    *int64 // the metered sum; nil when not measured
	WireRaw string // the nonsense the wire carried, when Refused for it
	Agent   *int64 // what the agent reported; nil when it reported none
	Why     string // for Refused and NotCompared
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
	c := Check{Outcome: Agree}
	compared := 0
	for _, p := range pairs {
		fc := checkField(p.name, p.sum, p.agent)
		c.Fields = append(c.Fields, fc)
		switch fc.Outcome {
		case Refused:
			c.Outcome = Refused
		case Disagree:
			if c.Outcome != Refused {
				c.Outcome = Disagree
			}
		}
		if fc.Outcome != NotCompared {
			compared++
		}
	}
	if compared == 0 {
		c.Outcome = Refused
	}
	return c
}

func checkField(name string, s Sum, agent *int64) FieldCheck {
	fc := FieldCheck{Field: name, Wire: s.Value, Agent: agent}
	switch {
	case s.NotReported:
		fc.Outcome, fc.Why = NotCompared, s.Why
	case s.Value == nil:
		fc.Outcome, fc.WireRaw, fc.Why = Refused, s.Raw, s.Why
	case agent == nil || *agent != *s.Value:
		fc.Outcome = Disagree
	default:
		fc.Outcome = Agree
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
		case Disagree:
			parts = append(parts, fmt.Sprintf("%s wire %s, agent %s", f.Field, showCount(f.Wire, ""), showCount(f.Agent, "")))
		case Refused:
			parts = append(parts, fmt.Sprintf("%s: %s (wire %s, agent %s)", f.Field, f.Why, showCount(f.Wire, f.WireRaw), showCount(f.Agent, "")))
		}
	}
	if len(parts) == 0 {
		return c.Outcome
	}
	return c.Outcome + ": " + strings.Join(parts, "; ")
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
