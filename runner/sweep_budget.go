package runner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// The run's cost budget (`wfb run --max-cost`, the bench's budget): no new
// cell starts once the cost recorded in the run so far reaches it. The cost
// so far is the sum over the run's rows — those of earlier invocations of a
// resumed run included — of each row's metered cost where the proxy
// measured one, else its reported or derived cost. A row with neither
// counts $0 and is counted as unmeasured, so the end note can say how much
// of the run the sum does not see.

// rowCost is what a row counts toward the budget: its metered cost where
// present, else its cost_usd; ok is false when neither was measured.
func rowCost(r store.Result) (cost float64, ok bool) {
	switch {
	case r.MeteredCostUSD != nil:
		return *r.MeteredCostUSD, true
	case r.CostUSD != nil:
		return *r.CostUSD, true
	}
	return 0, false
}

// charge adds a row's cost to the run's spending and notes when the budget
// is reached. A row of a cell that never started spent nothing and is not
// an unmeasured one. The caller holds s.mu (or no worker runs yet).
func (s *Sweep) charge(r store.Result) {
	if r.ProcessState == wfb.StateNotStarted {
		return
	}
	if c, ok := rowCost(r); ok {
		s.spent += c
	} else {
		s.unmeasured++
	}
	if s.budget > 0 && s.spent >= s.budget {
		s.budgetReached = true
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
	return fmt.Sprintf("the run's budget of $%s was reached ($%s spent)", Dollars(s.budget), Dollars(s.spent))
}

// Dollars formats an amount of US dollars to the micro-dollar, without
// trailing zeros: 0.036, not 0.036000000000000004.
func Dollars(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
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
