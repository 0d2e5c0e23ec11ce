package wfb

import (
	"math/big"
	"testing"
)

// TestACostPricesEachBucketAtItsOwnRate stops a usage from being priced
// with its buckets swapped: the stand-in's price took (input, output,
// cache read, cache write) and the runner's (input, cache read, cache
// write, output), so a caller of one in the other's order billed output
// at the cache rate.
func TestACostPricesEachBucketAtItsOwnRate(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	for _, tc := range []struct {
		name                                 string
		input, output, cacheRead, cacheWrite int64
		want                                 float64
	}{
		{"input", 1_000_000, 0, 0, 0, 3},
		{"output", 0, 1_000_000, 0, 0, 15},
		{"cache read", 0, 0, 1_000_000, 0, 0.30},
		{"cache write", 0, 0, 0, 1_000_000, 3.75},
	} {
		if got := p.Cost(tc.input, tc.output, tc.cacheRead, tc.cacheWrite); got != tc.want {
			t.Errorf("a million %s tokens cost %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestACostIsTheNearestFloatToTheExactSum stops float rounding from
// making two equal costs differ (the cost check compares them, and the
// seed asserts the stand-in's 0.42 exactly): the sum is exact, then
// rounded once.
func TestACostIsTheNearestFloatToTheExactSum(t *testing.T) {
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	standIn := Price{Input: 100, Output: 400, CacheRead: 10, CacheWrite: 30}
	for _, tc := range []struct {
		p                                    Price
		input, output, cacheRead, cacheWrite int64
		want                                 float64
	}{
		// 1200×3 + 30×15 + 4000×0.30 + 500×3.75 = 7125 micro-dollars.
		{sonnet, 1200, 30, 4000, 500, 0.007125},
		// Added as floats: 0.00046889999999999996.
		{sonnet, 1, 30, 53, 0, 0.0004689},
		// 0.1 + 0.2 is not 0.3 in floats; 100000×1 + 2000000×0.10 is.
		{Price{Input: 1, CacheRead: 0.10}, 100_000, 0, 2_000_000, 0, 0.3},
		{Price{Input: 0.05, Output: 0.40, CacheRead: 0.005}, 7, 3, 0, 0, 0.00000155},
		// Added as floats: 0.42000000000000004.
		{standIn, 2000, 300, 7000, 1000, 0.42},
		{standIn, 0, 0, 0, 0, 0},
	} {
		if got := tc.p.Cost(tc.input, tc.output, tc.cacheRead, tc.cacheWrite); got != tc.want {
			t.Errorf("cost of %d/%d/%d/%d at %+v = %v, want exactly %v", tc.input, tc.output, tc.cacheRead, tc.cacheWrite, tc.p, got, tc.want)
		}
	}
}

// TestACostDoesNotOverflow stops a wrap-around to a negative cost on
// huge (nonsense but integer) token sums.
func TestACostDoesNotOverflow(t *testing.T) {
	huge, _ := new(big.Int).SetString("100000000000000000000", 10) // 1e20 tokens
	zero := new(big.Int)
	p := Price{Input: 100}
	if got, want := DollarsOfPico(p.Pico(huge, zero, zero, zero)), 1e16; got != want {
		t.Errorf("cost of 1e20 input tokens = %v, want %v", got, want)
	}
}
