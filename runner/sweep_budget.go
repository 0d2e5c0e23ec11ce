package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// The run's cost budget (`wfb run --max-cost`, the bench's budget): no new
// cell starts once the cost recorded in the run so far reaches it. The cost
// so far is the run's cost by the one rule (wfb.Cost) over the run's rows —
// those of earlier invocations of a resumed run included — the figure wfb
// runs shows; an attempt whose cost was not measured adds nothing, and the
// sum says how many attempts it covers.

// budget is the run's cost cap and the run's cost so far. The sweep holds
// s.mu around it once workers run.
type budget struct {
	usd     float64     // the cap in dollars; 0: none
	from    string      // where the cap comes from, as BudgetConfig.From says
	cost    wfb.CostSum // the run's cost so far, earlier invocations included (charge)
	atCap   wfb.CostSum // the run's cost when it reached the cap
	reached bool
}

// newBudget is the cap a sweep runs under: --max-cost (maxCost) when given,
// else the bench's (benchUSD), else none.
func newBudget(benchUSD, maxCost float64) budget {
	if maxCost > 0 {
		return budget{usd: maxCost, from: "max-cost"}
	}
	return budget{usd: benchUSD, from: "bench"}
}

// charge adds a row's cost to the run's and notes when the cap is reached.
func (b *budget) charge(r store.Result) {
	b.cost.Add(r.UsageSource, r.MeteredCostUSD, r.CostUSD)
	if b.usd > 0 && b.cost.USD >= b.usd && !b.reached {
		b.reached, b.atCap = true, b.cost
	}
}

// why says why the budget stopped the run, with what was spent by then.
func (b *budget) why() string {
	return fmt.Sprintf("the run's budget of $%s was reached (cost %s)", wfb.Dollars(b.usd), b.atCap.Phrase())
}

// config is the cap as runs.config records it; nil for none.
func (b *budget) config() *BudgetConfig {
	if b.usd <= 0 {
		return nil
	}
	return &BudgetConfig{USD: b.usd, From: b.from}
}

// budgetCut says whether the budget left a pending cell unfinished: one
// that did not start, or a retry it owes. A budget reached by the run's
// last cell cut nothing, and the run is complete.
func (s *Sweep) budgetCut(pending []*cellState) bool {
	s.mu.Lock()
	reached := s.budget.reached
	s.mu.Unlock()
	return reached && slices.ContainsFunc(pending, func(c *cellState) bool { return !c.started || !s.complete(c) })
}

// recordNotRuns gives each pending cell that did not start a not-run row:
// the breaker's (infra-error, run again on --resume once the outage is
// over) or the budget's (cancelled: stopped on purpose, run again on a
// --resume with a higher --max-cost).
func (s *Sweep) recordNotRuns(ctx context.Context, pending []*cellState) {
	kind, detail := wfb.KindCancelled, ""
	if s.breakerWhy != "" {
		kind = wfb.KindInfraError
		detail = NotRunDetail + s.breakerWhy + "; `wfb run --resume " + s.run.ID + "` runs it once the outage is over"
	} else {
		s.mu.Lock()
		detail = NotRunDetail + s.budget.why()
		s.mu.Unlock()
	}
	for _, c := range pending {
		if !c.started {
			s.recordNotRun(ctx, c, kind, detail)
		}
	}
}
