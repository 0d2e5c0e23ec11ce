package runner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestTheBudgetIsReachedOnceByTheRunsCost stops the cap from coming from
// the wrong place (--max-cost wins over the bench's), from being reached
// by what was not measured, or from moving on after it was reached: the
// reason names the cost when the cap was reached.
func TestTheBudgetIsReachedOnceByTheRunsCost(t *testing.T) {
	for _, c := range []struct {
		bench, maxCost float64
		want           *BudgetConfig
	}{
		{5, 2, &BudgetConfig{USD: 2, From: "max-cost"}},
		{5, 0, &BudgetConfig{USD: 5, From: "bench"}},
		{0, 0, nil},
	} {
		b := newBudget(c.bench, c.maxCost)
		if diff := cmp.Diff(c.want, b.config()); diff != "" {
			t.Errorf("bench $%v, --max-cost $%v (-want +got):\n%s", c.bench, c.maxCost, diff)
		}
	}
	cost := func(usd float64) store.Result { return store.Result{UsageSource: wfb.UsageReported, CostUSD: &usd} }
	b := newBudget(1, 0)
	b.charge(store.Result{UsageSource: wfb.UsageReported}) // not measured
	b.charge(cost(0.6))
	if b.reached {
		t.Fatalf("reached at $%v of $1", b.cost.USD)
	}
	b.charge(cost(0.5))
	b.charge(cost(0.5))
	if !b.reached || b.cost.USD != 1.6 || b.atCap.USD != 1.1 || b.cost.Of != 4 {
		t.Errorf("reached %v, cost %+v, at the cap %+v; want reached at $1.1 of 3 measured, the run at $1.6", b.reached, b.cost, b.atCap)
	}
	if why := b.why(); !strings.HasPrefix(why, "the run's budget of $1 was reached (cost $1.1") {
		t.Errorf("why %q", why)
	}
}
