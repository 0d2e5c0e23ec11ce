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

// charge adds a row's cost to the run's and notes when the budget is
// reached. The caller holds s.mu (or no worker runs yet).
func (s *Sweep) charge(r store.Result) {
	s.cost.Add(r.UsageSource, r.MeteredCostUSD, r.CostUSD)
	if s.budget > 0 && s.cost.USD >= s.budget && !s.budgetReached {
		s.budgetReached, s.costAtBudget = true, s.cost
	}
}

// budgetCut says whether the budget left a pending cell unfinished: one
// that did not start, or a retry it owes. A budget reached by the run's
// last cell cut nothing, and the run is complete.
func (s *Sweep) budgetCut(pending []*cellState) bool {
	s.mu.Lock()
	reached := s.budgetReached
	s.mu.Unlock()
	return reached && slices.ContainsFunc(pending, func(c *cellState) bool { return !c.started || !s.complete(c) })
}

// budgetWhy says why the budget stopped the run, with what was spent so
// far; the caller holds s.mu.
func (s *Sweep) budgetWhy() string {
	return fmt.Sprintf("the run's budget of $%s was reached (cost %s)", wfb.Dollars(s.budget), s.costAtBudget.Phrase())
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
		detail = NotRunDetail + s.budgetWhy()
		s.mu.Unlock()
	}
	for _, c := range pending {
		if !c.started {
			s.recordNotRun(ctx, c, kind, detail)
		}
	}
}
