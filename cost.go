package wfb

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
