package agent

import "github.com/wfbench/wfb"

// StandInPrice is the price of the model "stand-in", and of every model the
// table does not name (Claude Code likewise prices unknown models with a
// default rather than refusing to).
//
// The stand-in's prices are fictitious round numbers, not any vendor's:
// they are chosen so that a test can assert an exact, non-zero cost. The
// seed's usage (2000 input, 300 output, 7000 cache read, 1000 cache write
// tokens) costs 0.2 + 0.12 + 0.07 + 0.03 = 0.42 dollars.
var StandInPrice = wfb.Price{Input: 100, Output: 400, CacheRead: 10, CacheWrite: 30}

// prices is the documented price table, keyed by model name.
var prices = map[string]wfb.Price{
	"stand-in": StandInPrice,
}

// PriceFor returns the price of model: its entry in the table, or
// StandInPrice for a model the table does not name.
func PriceFor(model string) wfb.Price {
	if p, ok := prices[model]; ok {
		return p
	}
	return StandInPrice
}
