package agent

import "math/big"

// Price is what the stand-in agent charges for a model, in whole US dollars
// per million tokens of each usage bucket.
//
// The prices are fictitious round numbers, not any vendor's: they are chosen
// so that a test can assert an exact, non-zero cost. The seed's usage (2000
// input, 300 output, 7000 cache read, 1000 cache write tokens) costs
// 0.2 + 0.12 + 0.07 + 0.03 = 0.42 dollars.
type Price struct {
	InputPerMTok      int64
	OutputPerMTok     int64
	CacheReadPerMTok  int64
	CacheWritePerMTok int64
}

// StandInPrice is the price of the model "stand-in", and of every model the
// table does not name (Claude Code likewise prices unknown models with a
// default rather than refusing to).
var StandInPrice = Price{
	InputPerMTok:      100,
	OutputPerMTok:     400,
	CacheReadPerMTok:  10,
	CacheWritePerMTok: 30,
}

// prices is the documented price table, keyed by model name.
var prices = map[string]Price{
	"stand-in": StandInPrice,
}

// PriceFor returns the price of model: its entry in the table, or
// StandInPrice for a model the table does not name.
func PriceFor(model string) Price {
	if p, ok := prices[model]; ok {
		return p
	}
	return StandInPrice
}

// CostUSD returns the cost in dollars of the given token counts.
//
// Dollars per million tokens times tokens is exactly micro-dollars, so the
// sum is taken in integers (big, so that no count can overflow) and divided
// by a million once: 420000 micro-dollars is 0.42, the float64 nearest to
// 0.42, not 0.42000000000000004 from adding four rounded floats.
func (p Price) CostUSD(input, output, cacheRead, cacheWrite int64) float64 {
	return p.costUSD(big.NewInt(input), big.NewInt(output), big.NewInt(cacheRead), big.NewInt(cacheWrite))
}

func (p Price) costUSD(input, output, cacheRead, cacheWrite *big.Int) float64 {
	micro := new(big.Int)
	for _, term := range []struct {
		tokens *big.Int
		price  int64
	}{
		{input, p.InputPerMTok},
		{output, p.OutputPerMTok},
		{cacheRead, p.CacheReadPerMTok},
		{cacheWrite, p.CacheWritePerMTok},
	} {
		micro.Add(micro, new(big.Int).Mul(term.tokens, big.NewInt(term.price)))
	}
	f, _ := new(big.Rat).SetFrac(micro, big.NewInt(1_000_000)).Float64()
	return f
}
