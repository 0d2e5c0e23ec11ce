package stats

import (
	"math/rand/v2"
	"testing"
)

// The calibration studies are simulations with a fixed seed, so they are
// deterministic: a change in the measured rates means the statistics changed.
const calibrationTrials = 2000

// rateOfSignificant runs trial calibrationTrials times and returns the share
// of comparisons called significant.
func rateOfSignificant(trial func() Comparison) float64 {
	hits := 0
	for range calibrationTrials {
		if trial().Significant {
			hits++
		}
	}
	return float64(hits) / calibrationTrials
}

// checkFalsePositiveRate fails when an A/A study calls too many comparisons
// significant (the test is anti-conservative: `wfb diff` would announce
// improvements that are noise) or none at all (the test cannot say anything,
// so every "~" is meaningless).
func checkFalsePositiveRate(t *testing.T, rate, alpha, ceiling float64) {
	t.Helper()
	t.Logf("A/A false-positive rate at alpha %v: %.4f (%d trials)", alpha, rate, calibrationTrials)
	if rate > ceiling {
		t.Errorf("false-positive rate %.4f > %.2f at alpha %v", rate, ceiling, alpha)
	}
	if rate == 0 {
		t.Errorf("false-positive rate is 0: the test never reports a difference")
	}
}

// TestCalibrationAAContinuousIsRarelySignificant stops a U test wrapper that
// calls two samples of the same distribution different more often than
// alpha says (e.g. a one-sided p, or dropped ties).
func TestCalibrationAAContinuousIsRarelySignificant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 6))
	const n, alpha = 10, 0.05
	draw := func() []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 + 15*rng.NormFloat64()
		}
		return xs
	}
	rate := rateOfSignificant(func() Comparison { return CompareContinuous(draw(), draw(), alpha) })
	checkFalsePositiveRate(t, rate, alpha, 0.06)
}

// TestCalibrationAAContinuousWithTiesIsRarelySignificant is the same study on
// the kind of data agents produce: small integers (turns, tool calls) full of
// ties, where a rank test that mishandles ties goes wrong. Equal sizes up to
// 25 take the exact tied path, where U is symmetric even with ties (A and B
// are exchangeable); unequal sizes are where it is not, and where go-moremath
// returned p-values above 1 and of 0. 30 vs 30 and 12 vs 40 take the normal
// approximation with tie correction.
func TestCalibrationAAContinuousWithTiesIsRarelySignificant(t *testing.T) {
	tests := []struct {
		name       string
		n1, n2     int
		levels     int
		seedStream uint64
	}{
		{"10-vs-10-five-levels", 10, 10, 5, 7},
		{"10-vs-10-three-levels", 10, 10, 3, 14},
		{"5-vs-5-five-levels", 5, 5, 5, 15},
		{"5-vs-5-three-levels", 5, 5, 3, 16},
		{"5-vs-12-four-levels", 5, 12, 4, 18},
		{"3-vs-20-three-levels", 3, 20, 3, 19},
		{"30-vs-30-five-levels", 30, 30, 5, 17},
		{"12-vs-40-four-levels", 12, 40, 4, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2024, tt.seedStream))
			const alpha = 0.05
			draw := func(n int) []float64 {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = float64(3 + rng.IntN(tt.levels))
				}
				return xs
			}
			outside := 0
			rate := rateOfSignificant(func() Comparison {
				c := CompareContinuous(draw(tt.n1), draw(tt.n2), alpha)
				if !(c.P > 0 && c.P <= 1) {
					outside++
				}
				return c
			})
			if outside > 0 {
				t.Errorf("%d of %d p-values outside (0, 1]", outside, calibrationTrials)
			}
			checkFalsePositiveRate(t, rate, alpha, 0.06)
		})
	}
}

// TestCalibrationAARatesAreRarelySignificant stops a Fisher test that is
// anti-conservative for pass rates of 0.7 over 30 attempts per side.
func TestCalibrationAARatesAreRarelySignificant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 8))
	const n, p, alpha = 30, 0.7, 0.05
	passes := func() int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	rate := rateOfSignificant(func() Comparison { return CompareRates(passes(), n, passes(), n, alpha) })
	checkFalsePositiveRate(t, rate, alpha, 0.06)
}

// TestCalibrationAAPairedRatesAreRarelySignificant is the paired version:
// each of 30 tasks passes with its own probability on both sides alike.
func TestCalibrationAAPairedRatesAreRarelySignificant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 9))
	const n, alpha = 30, 0.05
	rate := rateOfSignificant(func() Comparison {
		pairs := make([]Pair, n)
		for i := range pairs {
			// Tasks differ in difficulty; within a task both sides share it.
			p := 0.4 + 0.5*rng.Float64()
			pairs[i] = Pair{A: rng.Float64() < p, B: rng.Float64() < p}
		}
		return CompareRatesPaired(pairs, alpha)
	})
	checkFalsePositiveRate(t, rate, alpha, 0.06)
}

// TestCalibrationABClearShiftIsDetected stops a test so conservative that it
// never finds a real change: B shifted by two standard deviations with 10
// values per side must be significant at least 90% of the time.
func TestCalibrationABClearShiftIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 10))
	const n, alpha = 10, 0.05
	draw := func(shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 + 15*(rng.NormFloat64()+shift)
		}
		return xs
	}
	power := rateOfSignificant(func() Comparison { return CompareContinuous(draw(0), draw(2), alpha) })
	t.Logf("A/B power for a +2 sd shift, n=%d per side, alpha %v: %.4f (%d trials)", n, alpha, power, calibrationTrials)
	if power < 0.90 {
		t.Errorf("power %.4f < 0.90 for a +2 sd shift", power)
	}
}

// TestCalibrationABClearRateChangeIsDetected is the pass-rate counterpart:
// 0.4 against 0.9 over 30 attempts per side must be found at least 90% of the
// time by Fisher's test.
func TestCalibrationABClearRateChangeIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 11))
	const n, alpha = 30, 0.05
	passes := func(p float64) int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	power := rateOfSignificant(func() Comparison { return CompareRates(passes(0.4), n, passes(0.9), n, alpha) })
	t.Logf("A/B power for pass rate 0.4 vs 0.9, n=%d per side, alpha %v: %.4f (%d trials)", n, alpha, power, calibrationTrials)
	if power < 0.90 {
		t.Errorf("power %.4f < 0.90 for 0.4 vs 0.9", power)
	}
}

// BenchmarkCompareContinuous measures one comparison at sizes that take
// different paths through the U test: n=1000 (normal approximation, the size
// of a large bench), n=50 without ties (the largest exact computation
// benchmath does) and n=25 with ties (the largest exact tied computation,
// done here).
func BenchmarkCompareContinuous(b *testing.B) {
	cases := []struct {
		name string
		n    int
		draw func(*rand.Rand) float64
	}{
		{"n=1000", 1000, func(r *rand.Rand) float64 { return 100 + 15*r.NormFloat64() }},
		{"n=50-exact", 50, func(r *rand.Rand) float64 { return 100 + 15*r.NormFloat64() }},
		{"n=25-exact-ties", 25, func(r *rand.Rand) float64 { return float64(r.IntN(8)) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := make([]float64, c.n)
			y := make([]float64, c.n)
			for i := range x {
				x[i], y[i] = c.draw(rng), c.draw(rng)
			}
			b.ReportAllocs()
			for b.Loop() {
				CompareContinuous(x, y, 0.05)
			}
		})
	}
}
