package wfb

import (
	"math"
	"math/big"
)

// Price is a model's list price in US dollars per million tokens, by token
// bucket. The buckets are the results columns' (Anthropic's semantics):
// uncached input, output (reasoning included), cache reads and cache
// writes are disjoint, so nothing is billed twice. A table of prices is
// not vocabulary: runner holds the vendors' list prices, mock/agent the
// stand-in's fictitious ones; both are Prices, priced by Cost.
type Price struct {
	// CacheRead is what a cache hit costs, CacheWrite what writing the
	// cache costs (0 where the vendor bills none: OpenAI's cache writes
	// are input).
	Input, Output, CacheRead, CacheWrite float64
	// LongPromptOver: a request whose prompt (input, cache reads and cache
	// writes) is longer than this is billed at a long-context rate the
	// price does not hold, so it is not priced. 0: the model has none.
	LongPromptOver int64
	// Source is the vendor's pricing page the price was read from; Read is
	// the date it was read there.
	Source, Read string
}

// Cost is the cost in US dollars of a usage, its four buckets in the
// results columns' order: input, output, cache reads, cache writes.
//
// A price per million tokens, to the micro-dollar as the vendors publish
// them, times tokens is a whole number of 10⁻¹² dollars: Pico sums it in
// integers and Dollars divides once, so a cost is the float64 nearest to
// the exact figure (0.42, not 0.42000000000000004 from adding rounded
// floats) and two sums of the same usage are equal.
func (p Price) Cost(input, output, cacheRead, cacheWrite int64) float64 {
	return DollarsOfPico(p.Pico(big.NewInt(input), big.NewInt(output), big.NewInt(cacheRead), big.NewInt(cacheWrite)))
}

// Pico is the exact cost of a usage in 10⁻¹² dollars, its buckets in
// Cost's order. Counts are big so that no sum overflows: the stand-in
// agent prices whatever it was served, and the runner sums the requests of
// an attempt before dividing once.
func (p Price) Pico(input, output, cacheRead, cacheWrite *big.Int) *big.Int {
	total := new(big.Int)
	for _, term := range []struct {
		tokens *big.Int
		price  float64
	}{{input, p.Input}, {output, p.Output}, {cacheRead, p.CacheRead}, {cacheWrite, p.CacheWrite}} {
		micro := big.NewInt(int64(math.Round(term.price * 1e6)))
		total.Add(total, micro.Mul(micro, term.tokens))
	}
	return total
}

// DollarsOfPico is the float64 nearest to pico 10⁻¹² dollars.
func DollarsOfPico(pico *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(pico, big.NewInt(1e12)).Float64()
	return f
}
