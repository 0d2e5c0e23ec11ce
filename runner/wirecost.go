package runner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Cost agreement (cost_check): the wire's cost and the agent's agree when
// they differ by at most costTolerance of the larger, or by at most
// costFloorUSD. Beyond both, the check names the two figures. The floor is
// a micro-dollar — far above float rounding, far below any wrong price: a
// one-request Haiku session costs about a tenth of a cent, and a price
// wrong by 10% there is still flagged.
const (
	costTolerance = 0.01
	costFloorUSD  = 0.000001
)

// priceWire records the wire's cost of a checked attempt (priced by the
// meter at the price table's list prices): metered_cost_usd, and the cost
// check against the agent's reported cost. The cost stays NULL when any
// billed request's model is not in the table, or a figure its price needs
// was not measured, and the detail says why.
func priceWire(row *store.Result, w Wire) {
	cost, why := w.Cost, w.CostWhy
	if cost == nil {
		row.AddDetail("metered cost not recorded: " + why)
		return
	}
	row.MeteredCostUSD = cost
	if row.CostUSD != nil && row.CostSource == "reported" {
		row.CostVerdict, row.CostCheck = costCheck(*cost, *row.CostUSD)
	}
}

// costCheck compares the wire's cost with the agent's: the verdict, and
// its text ("agree", or "disagree: wire $X, agent $Y").
func costCheck(wire, agent float64) (wfb.Verdict, string) {
	diff := math.Abs(wire - agent)
	if diff <= costFloorUSD || diff <= costTolerance*math.Max(math.Abs(wire), math.Abs(agent)) {
		return wfb.VerdictAgree, string(wfb.VerdictAgree)
	}
	return wfb.VerdictDisagree, fmt.Sprintf("%s: wire $%s, agent $%s", wfb.VerdictDisagree, dollars(wire), dollars(agent))
}

func dollars(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
