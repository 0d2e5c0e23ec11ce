package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKthDifferenceIsTheSortedDifference stops the shift interval from
// reading a wrong order statistic: every k-th smallest difference of two
// random samples (ties included) is the one a sort of all n1·n2 differences
// gives, exactly.
func TestKthDifferenceIsTheSortedDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		a := make([]float64, 1+r.IntN(12))
		b := make([]float64, 1+r.IntN(12))
		for i := range a {
			a[i] = math.Round(r.NormFloat64()*10) / 4
		}
		for i := range b {
			b[i] = math.Round(r.NormFloat64()*10)/4 + 1
		}
		slices.Sort(a)
		slices.Sort(b)
		var all []float64
		for _, x := range a {
			for _, y := range b {
				all = append(all, y-x)
			}
		}
		slices.Sort(all)
		for k := 1; k <= len(all); k++ {
			if got := kthDifference(a, b, k); got != all[k-1] {
				t.Fatalf("trial %d: k=%d of a=%v b=%v: got %v, want %v", trial, k, a, b, got, all[k-1])
			}
		}
	}
}

// TestKthDifferenceAtScaleIsTheSortedDifference stops the paths a
// comparison of thousands of values takes from reading a wrong order
// statistic: the bisection down to maxList differences and the list, the
// step past a pile of equal differences (identical sides, few levels) and
// the median's upper middle taken as the next difference. Each is held to
// a sort of every difference, exactly.
func TestKthDifferenceAtScaleIsTheSortedDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	draw := func(n int, f func() float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = f()
		}
		slices.Sort(xs)
		return xs
	}
	distinct := draw(400, r.NormFloat64)
	cases := []struct {
		name string
		a, b []float64
	}{
		{"distinct, even count", draw(300, r.NormFloat64), draw(300, func() float64 { return 0.3 + r.NormFloat64() })},
		{"distinct, odd count", draw(301, r.NormFloat64), draw(301, r.NormFloat64)},
		{"three levels", draw(600, func() float64 { return float64(r.IntN(3)) }), draw(600, func() float64 { return float64(r.IntN(3)) })},
		{"identical sides", distinct, distinct},
		{"wide magnitudes", draw(350, func() float64 { return math.Exp(40 * r.NormFloat64()) }), draw(350, func() float64 { return -math.Exp(40 * r.NormFloat64()) })},
	}
	for _, c := range cases {
		all := make([]float64, 0, len(c.a)*len(c.b))
		for _, x := range c.a {
			for _, y := range c.b {
				all = append(all, y-x)
			}
		}
		if len(all) <= maxList {
			t.Fatalf("%s: %d differences never reach the bisection", c.name, len(all))
		}
		slices.Sort(all)
		ta, tb := tally(c.a), tally(c.b)
		ks := []int{1, 2, len(all) / 3, len(all) - 1, len(all)}
		for range 30 {
			ks = append(ks, 1+r.IntN(len(all)))
		}
		for _, k := range ks {
			if got := ta.kthDifference(tb, k); got != all[k-1] {
				t.Errorf("%s: k=%d of %d: got %v, want %v", c.name, k, len(all), got, all[k-1])
			}
		}
		want := (all[(len(all)+1)/2-1] + all[len(all)/2]) / 2
		if est, _, _ := shiftInterval(ta, tb, 0.05); est != want {
			t.Errorf("%s: the median difference is %v, want %v", c.name, est, want)
		}
	}
}

// TestTheShiftIntervalCoversTheShift stops an interval narrower than its
// level claims: over 400 fixed-seed draws of 10 vs 10 values with a true
// shift of 3, the 95% interval holds 3 at least 93% of the time, and a
// comparison whose interval excludes 0 is one the U test calls significant
// (the interval inverts the test, within the normal approximation).
func TestTheShiftIntervalCoversTheShift(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	covered, disagree := 0, 0
	const trials = 400
	for range trials {
		a, b := make([]float64, 10), make([]float64, 10)
		for i := range a {
			a[i] = 100 + 5*r.NormFloat64()
			b[i] = 103 + 5*r.NormFloat64()
		}
		c := CompareContinuous(a, b, 0.05)
		if c.ShiftLo <= 3 && 3 <= c.ShiftHi {
			covered++
		}
		if excludes := c.ShiftLo > 0 || c.ShiftHi < 0; excludes != c.Significant {
			disagree++
		}
	}
	if share := float64(covered) / trials; share < 0.93 {
		t.Errorf("the 95%% interval covered the shift in %.3f of draws", share)
	}
	if share := float64(disagree) / trials; share > 0.03 {
		t.Errorf("the interval and the U test disagreed on significance in %.3f of draws", share)
	}
}

// TestAPairedIntervalTellsTheMcNemarStory stops a paired rate change's
// interval from claiming more than the exact McNemar test: 10 pairs, 5
// passing only on A (100% → 50%, p = 0.0625) must give an interval that
// still holds 0, and 8 of 10 (p = 0.0078) one that does not; both stay in
// [−1, 1].
func TestAPairedIntervalTellsTheMcNemarStory(t *testing.T) {
	pairs := func(onlyA int) []Pair {
		ps := make([]Pair, 10)
		for i := range ps {
			ps[i] = Pair{A: true, B: i >= onlyA}
		}
		return ps
	}
	for _, c := range []struct {
		onlyA       int
		significant bool
	}{{5, false}, {8, true}} {
		got := CompareRatesPaired(pairs(c.onlyA), 0.05)
		holdsZero := got.ShiftLo <= 0 && 0 <= got.ShiftHi
		if got.Significant != c.significant || holdsZero == c.significant {
			t.Errorf("%d of 10 only on A: p %.4g significant %v, interval %.3f – %.3f", c.onlyA, got.P, got.Significant, got.ShiftLo, got.ShiftHi)
		}
		if got.ShiftLo < -1 || got.ShiftHi > 1 || got.Shift != -float64(c.onlyA)/10 {
			t.Errorf("%d of 10: change %v in %v – %v, want −%d/10 inside [−1, 1]", c.onlyA, got.Shift, got.ShiftLo, got.ShiftHi, c.onlyA)
		}
	}
	none := CompareRatesPaired(pairs(0), 0.05)
	if !(none.ShiftLo < 0 && none.ShiftHi > 0) || none.ShiftHi >= 1 {
		t.Errorf("no changed pair: interval %v – %v, want around 0 and narrower than [−1, 1]", none.ShiftLo, none.ShiftHi)
	}
}

// TestAnUnpairedRateIntervalStaysInsideItsRange stops a rate difference's
// interval from leaving [−1, 1] at the extremes.
func TestAnUnpairedRateIntervalStaysInsideItsRange(t *testing.T) {
	for _, c := range [][4]int{{3, 3, 0, 3}, {0, 5, 5, 5}, {10, 10, 10, 10}, {1, 2, 1, 2}} {
		got := CompareRates(c[0], c[1], c[2], c[3], 0.05)
		if got.ShiftLo < -1 || got.ShiftHi > 1 || got.ShiftLo > got.Shift || got.Shift > got.ShiftHi {
			t.Errorf("%v: %v in %v – %v", c, got.Shift, got.ShiftLo, got.ShiftHi)
		}
	}
}
