package wfb

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CostSource says which witness an attempt's cost comes from.
type CostSource string

const (
	// CostMetered: the wire's usage priced with wfb's price table
	// (results.metered_cost_usd), where the attempt's usage is the wire's.
	CostMetered CostSource = "metered"
	// CostReported: the agent's own figure (results.cost_usd), reported or
	// derived from its own usage, where the wire priced nothing.
	CostReported CostSource = "reported"
)

// Cost is the cost rule, the one definition of an attempt's cost that
// every surface shows (the run's closing line, wfb runs, the views, report,
// diff, trend, the budget, the viewer, export): the wire's figure where the
// attempt's usage is the wire's and the wire priced it, else the agent's,
// else not measured (nil, never 0). usageSource is results.usage_source;
// metered is metered_cost_usd and agent is cost_usd.
//
// Where the agent's own figure differs from the one returned, surfaces show
// it as "agent-reported", never as a second bare total.
func Cost(usageSource string, metered, agent *float64) (*float64, CostSource) {
	switch {
	case usageSource == UsageMetered && metered != nil:
		return metered, CostMetered
	case agent != nil:
		return agent, CostReported
	default:
		return nil, ""
	}
}

// CostSum is a cost total over attempts: the sum of the measured costs,
// how many attempts it covers, how many of those by each source, and how
// many attempts were counted in all. The sum of an empty or all-unmeasured
// selection is not measured (Measured false), never 0.
type CostSum struct {
	USD            float64
	N, Metered, Of int
	AgentUSD       float64 // the agents' own figures, where they reported one
	AgentN         int
}

// Add counts one attempt's cost.
func (s *CostSum) Add(usageSource string, metered, agent *float64) {
	s.Of++
	if agent != nil {
		s.AgentUSD += *agent
		s.AgentN++
	}
	v, src := Cost(usageSource, metered, agent)
	if v == nil {
		return
	}
	s.USD += *v
	s.N++
	if src == CostMetered {
		s.Metered++
	}
}

// Measured reports whether any attempt's cost was measured.
func (s CostSum) Measured() bool { return s.N > 0 }

// Complete reports whether every attempt's cost was measured: otherwise the
// sum is a lower bound.
func (s CostSum) Complete() bool { return s.N == s.Of }

// Dollars spells an amount of US dollars to the micro-dollar, without
// trailing zeros: 0.036, not 0.036000000000000004. Every surface that
// prints a cost in a sentence spells it so.
func Dollars(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// Phrase spells the total for a sentence (a run's closing line, a budget
// message): "$0.2385 over 18 of 33 attempts", "$1.5 over all 12 attempts",
// "not measured (0 of 3 attempts)", and the agents' own figure after it
// where it differs: "; agent-reported $6.792".
func (s CostSum) Phrase() string {
	var b strings.Builder
	switch {
	case !s.Measured():
		fmt.Fprintf(&b, "not measured (0 of %d attempts)", s.Of)
	case s.Complete():
		fmt.Fprintf(&b, "$%s over %d of %d attempts", Dollars(s.USD), s.N, s.Of)
	default:
		fmt.Fprintf(&b, "$%s over %d of %d attempts (a lower bound)", Dollars(s.USD), s.N, s.Of)
	}
	if s.AgentDiffers() {
		fmt.Fprintf(&b, "; agent-reported $%s over %d", Dollars(s.AgentUSD), s.AgentN)
	}
	return b.String()
}

// AgentDiffers reports whether the agents' own figures say something other
// than the total: another sum (to the micro-dollar), or another coverage.
func (s CostSum) AgentDiffers() bool {
	return s.AgentN > 0 && (s.AgentN != s.N || math.Abs(s.AgentUSD-s.USD) >= 0.5e-6)
}
