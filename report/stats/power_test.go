package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"
)

// powerTrials is how many simulated comparisons check a power figure: at
// 80% the share detected has a standard error of 2%, so 70–90% is five of
// them either way.
const powerTrials = 400

// checkPower fails when the share of simulated comparisons the real test
// calls significant is not about Power: the figure wfb prints would
// promise a sensitivity the test does not have, or ask for more
// repetitions than needed.
func checkPower(t *testing.T, what string, trial func() Comparison) {
	t.Helper()
	hits := 0
	for range powerTrials {
		if trial().Significant {
			hits++
		}
	}
	rate := float64(hits) / powerTrials
	t.Logf("%s: detected in %.3f of %d simulated comparisons", what, rate, powerTrials)
	if rate < 0.70 || rate > 0.90 {
		t.Errorf("%s: detected in %.3f of %d simulated comparisons, want 0.70–0.90 (power %v)", what, rate, powerTrials, Power)
	}
}

// logNormalSample returns the n evenly spaced quantiles of a log-normal
// distribution with median 100: a sample with exactly the distribution's
// spread, the "observed" data the figures are computed from.
func logNormalSample(n int, sigma float64) []float64 {
	d := distuv.LogNormal{Mu: math.Log(100), Sigma: sigma}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.Quantile((float64(i) + 0.5) / float64(n))
	}
	return xs
}

func drawLogNormal(rng *rand.Rand, n int, sigma, shift float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 100*math.Exp(sigma*rng.NormFloat64()) + shift
	}
	return xs
}

// TestShiftSensitivityNeedDetectsTheTargetFourTimesInFive stops a sample
// size for the Mann–Whitney U test that is too small (the user runs it and
// the change is missed) or too large (the user pays for repetitions that
// add nothing): at the n it asks for, a 10% shift of skewed data (cost,
// wall time) is found about 80% of the time by the real test.
func TestShiftSensitivityNeedDetectsTheTargetFourTimesInFive(t *testing.T) {
	const alpha, sigma = 0.05, 0.5
	observed := logNormalSample(200, sigma)
	shift := 0.10 * 100 // 10% of the median
	s := ShiftSensitivity(observed, observed, alpha, Power, shift)
	t.Logf("need %d per side for a shift of %v", s.Need, shift)
	if s.Need < 10 || s.Need > 1000 {
		t.Fatalf("need %d per side: not a plausible size", s.Need)
	}
	rng := rand.New(rand.NewPCG(15, 1))
	checkPower(t, "U test at the needed n", func() Comparison {
		return CompareContinuous(drawLogNormal(rng, s.Need, sigma, 0), drawLogNormal(rng, s.Need, sigma, shift), alpha)
	})
}

// TestShiftSensitivityDetectableIsFoundFourTimesInFive stops a minimum
// detectable effect that promises more than the test delivers: a shift
// of the size reported for 20 values per side is found about 80% of the
// time.
func TestShiftSensitivityDetectableIsFoundFourTimesInFive(t *testing.T) {
	const alpha, sigma, n = 0.05, 0.5, 20
	observed := logNormalSample(n, sigma)
	s := ShiftSensitivity(observed, observed, alpha, Power, math.NaN())
	t.Logf("detectable shift at %d+%d: %.2f (median 100)", n, n, s.Detectable)
	if !(s.Detectable > 0) || math.IsInf(s.Detectable, 0) {
		t.Fatalf("detectable %v", s.Detectable)
	}
	rng := rand.New(rand.NewPCG(15, 2))
	checkPower(t, "U test at the detectable shift", func() Comparison {
		return CompareContinuous(drawLogNormal(rng, n, sigma, 0), drawLogNormal(rng, n, sigma, s.Detectable), alpha)
	})
}

// TestShiftSensitivitySmallSamplesAndTies checks the figure where bench
// sizes live: 6 values per side (the exact test, far from normal), and
// cells' turns, small integers full of ties.
func TestShiftSensitivitySmallSamplesAndTies(t *testing.T) {
	const alpha = 0.05
	t.Run("6 per side", func(t *testing.T) {
		observed := logNormalSample(6, 0.3)
		s := ShiftSensitivity(observed, observed, alpha, Power, math.NaN())
		t.Logf("detectable shift at 6+6: %.2f (median 100)", s.Detectable)
		rng := rand.New(rand.NewPCG(15, 7))
		checkPower(t, "U test at the detectable shift, 6+6", func() Comparison {
			return CompareContinuous(drawLogNormal(rng, 6, 0.3, 0), drawLogNormal(rng, 6, 0.3, s.Detectable), alpha)
		})
	})
	t.Run("turns", func(t *testing.T) {
		// Turns: 1 + Poisson(3), counts of an agent's work; a change of
		// the work shows as a shift of the underlying rate.
		const n = 60
		// The observed cells: Poisson(3)'s quantiles, by its CDF.
		observed := make([]float64, n)
		k := 0.0
		for i := range observed {
			for (distuv.Poisson{Lambda: 3}).CDF(k) < (float64(i)+0.5)/n {
				k++
			}
			observed[i] = 1 + k
		}
		s := ShiftSensitivity(observed, observed, alpha, Power, math.NaN())
		t.Logf("detectable shift of turns at %d+%d: %.2f (median 4)", n, n, s.Detectable)
		rng := rand.New(rand.NewPCG(15, 8))
		draw := func(lambda float64) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = 1 + distuv.Poisson{Lambda: lambda, Src: rng}.Rand()
			}
			return xs
		}
		checkPower(t, "U test at the detectable shift of turns", func() Comparison {
			return CompareContinuous(draw(3), draw(3+s.Detectable), alpha)
		})
	})
}

// TestShiftSensitivityOfSeveralTasks checks the figure for a bench whose
// tasks differ (cost around 1 on one task, 3 on the other): every sample
// holds each task in the same share, which makes the U test less variable
// than a sample drawn from the mixture, and the n asked for accounts for it
// — a bench of that size finds a shift of 0.2 about 80% of the time.
func TestShiftSensitivityOfSeveralTasks(t *testing.T) {
	const alpha, perTask = 0.05, 200
	task := func(level float64, n int, shift float64, rng *rand.Rand) []float64 {
		xs := make([]float64, n)
		d := distuv.LogNormal{Mu: math.Log(level), Sigma: 0.4}
		for i := range xs {
			if rng == nil {
				xs[i] = d.Quantile((float64(i)+0.5)/float64(n)) + shift
			} else {
				xs[i] = level*math.Exp(0.4*rng.NormFloat64()) + shift
			}
		}
		return xs
	}
	pilot := [][]float64{task(1, perTask, 0, nil), task(3, perTask, 0, nil)}
	s := ShiftSensitivityStrata(pilot, pilot, alpha, Power, 0.2)
	pooled := ShiftSensitivity(append(slices.Clone(pilot[0]), pilot[1]...), append(slices.Clone(pilot[0]), pilot[1]...), alpha, Power, 0.2)
	t.Logf("need %d cells per side (%d per task); pooled as one mixture it would say %d", s.Need, (s.Need+1)/2, pooled.Need)
	if s.Need >= pooled.Need {
		t.Errorf("by task %d, as a mixture %d: fixed shares should need fewer", s.Need, pooled.Need)
	}
	rng := rand.New(rand.NewPCG(15, 9))
	k := (s.Need + 1) / 2
	checkPower(t, "U test over two tasks at the needed n", func() Comparison {
		a := append(task(1, k, 0, rng), task(3, k, 0, rng)...)
		b := append(task(1, k, 0.2, rng), task(3, k, 0.2, rng)...)
		return CompareContinuous(a, b, alpha)
	})
}

func drawPasses(rng *rand.Rand, n int, p float64) int {
	k := 0
	for range n {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

// TestRateSensitivityNeedDetectsTheTargetFourTimesInFive does the same for
// Fisher's exact test: a pass rate of 70% falling 15pp (the harder
// direction, towards 50%) is found about 80% of the time at the n asked.
func TestRateSensitivityNeedDetectsTheTargetFourTimesInFive(t *testing.T) {
	const alpha = 0.05
	s := RateSensitivity(70, 100, 100, alpha, Power, 0.15)
	t.Logf("need %d per side for 70%% → 55%%", s.Need)
	if s.Need < 10 || s.Need > 1000 {
		t.Fatalf("need %d per side", s.Need)
	}
	rng := rand.New(rand.NewPCG(15, 3))
	checkPower(t, "Fisher at the needed n", func() Comparison {
		return CompareRates(drawPasses(rng, s.Need, 0.70), s.Need, drawPasses(rng, s.Need, 0.55), s.Need, alpha)
	})
}

// TestRateSensitivityDetectableIsFoundFourTimesInFive: at 40 cells per
// side and 70% on A, the change reported detectable is found about 80% of
// the time.
func TestRateSensitivityDetectableIsFoundFourTimesInFive(t *testing.T) {
	const alpha, n = 0.05, 40
	s := RateSensitivity(28, n, n, alpha, Power, math.NaN())
	t.Logf("detectable at %d+%d from 70%%: %.1fpp", n, n, 100*s.Detectable)
	rng := rand.New(rand.NewPCG(15, 4))
	checkPower(t, "Fisher at the detectable change", func() Comparison {
		return CompareRates(drawPasses(rng, n, 0.70), n, drawPasses(rng, n, 0.70-s.Detectable), n, alpha)
	})
}

// pairsOf builds pairs with the given counts of (A, B) outcomes.
func pairsOf(both, onlyA, onlyB, neither int) []Pair {
	var ps []Pair
	for range both {
		ps = append(ps, Pair{true, true})
	}
	for range onlyA {
		ps = append(ps, Pair{true, false})
	}
	for range onlyB {
		ps = append(ps, Pair{false, true})
	}
	for range neither {
		ps = append(ps, Pair{false, false})
	}
	return ps
}

// drawPairs draws n pairs with A passing with probability pA, B with pB,
// and the pairs' odds ratio theta.
func drawPairs(rng *rand.Rand, n int, pA, pB, theta float64) []Pair {
	p11 := jointPass(pA, pB, theta)
	p10, p01 := pA-p11, pB-p11
	ps := make([]Pair, n)
	for i := range ps {
		u := rng.Float64()
		switch {
		case u < p10:
			ps[i] = Pair{true, false}
		case u < p10+p01:
			ps[i] = Pair{false, true}
		case u < p10+p01+p11:
			ps[i] = Pair{true, true}
		}
	}
	return ps
}

// pilotTheta is the odds ratio PairedSensitivity sees in pairsOf(50, 10,
// 10, 30) and pairsOf(30, 6, 6, 18): 60% pass on each side, 20% of pairs
// flip.
const pilotTheta = 50.5 * 30.5 / (10.5 * 10.5)

// TestPairedSensitivityNeedDetectsTheTargetFourTimesInFive does the same for
// the exact McNemar test: with 20% of pairs flipping by chance, a rise of
// 15pp is found about 80% of the time at the n asked.
func TestPairedSensitivityNeedDetectsTheTargetFourTimesInFive(t *testing.T) {
	const alpha = 0.05
	s := PairedSensitivity(pairsOf(50, 10, 10, 30), alpha, Power, 0.15)
	t.Logf("need %d pairs for +15pp with 20%% flipping", s.Need)
	if s.Need < 10 || s.Need > 1000 {
		t.Fatalf("need %d pairs", s.Need)
	}
	rng := rand.New(rand.NewPCG(15, 5))
	checkPower(t, "McNemar at the needed n", func() Comparison {
		return CompareRatesPaired(drawPairs(rng, s.Need, 0.6, 0.75, pilotTheta), alpha)
	})
}

// TestPairedSensitivityDetectableIsFoundFourTimesInFive: over 60 pairs with
// 20% flipping, the change reported detectable is found about 80% of the
// time.
func TestPairedSensitivityDetectableIsFoundFourTimesInFive(t *testing.T) {
	const alpha = 0.05
	ps := pairsOf(30, 6, 6, 18)
	s := PairedSensitivity(ps, alpha, Power, math.NaN())
	t.Logf("detectable over %d pairs: %.1fpp", len(ps), 100*s.Detectable)
	rng := rand.New(rand.NewPCG(15, 6))
	checkPower(t, "McNemar at the detectable change", func() Comparison {
		return CompareRatesPaired(drawPairs(rng, len(ps), 0.6, 0.6+s.Detectable, pilotTheta), alpha)
	})
}

// TestSensitivityEdges stops the figures from claiming what the data
// cannot say: too few values for the exact test to ever reach alpha is no
// detectable change (+Inf), a side without values is unknown (NaN), a
// metric without any spread detects any shift (0), and a rate change
// beyond 100% is out of reach (−1).
func TestSensitivityEdges(t *testing.T) {
	const alpha = 0.05
	tests := []struct {
		name       string
		s          Sensitivity
		detectable float64
		need       int
	}{
		{"3 vs 3 values", ShiftSensitivity([]float64{1, 2, 3}, []float64{1, 2, 3}, alpha, Power, math.NaN()), math.Inf(1), 0},
		{"an empty side", ShiftSensitivity(nil, []float64{1, 2, 3}, alpha, Power, 1), math.NaN(), 0},
		{"no spread", ShiftSensitivity([]float64{5, 5, 5, 5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5, 5, 5, 5}, alpha, Power, math.NaN()), 0, 0},
		{"5 vs 5 attempts", RateSensitivity(3, 5, 5, alpha, Power, math.NaN()), math.Inf(1), 0},
		{"no pairs", PairedSensitivity(nil, alpha, Power, 0.1), math.NaN(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.s.Detectable
			same := d == tt.detectable || (math.IsNaN(d) && math.IsNaN(tt.detectable)) || math.Abs(d-tt.detectable) < 1e-6
			if !same {
				t.Errorf("detectable %v, want %v", d, tt.detectable)
			}
		})
	}
	// From 90% the rate has 10pp of room upwards, too little to detect at
	// 100 per side: the figure is the fall's, larger than that room.
	if s := RateSensitivity(90, 100, 100, alpha, Power, math.NaN()); !(s.Detectable > 0.10 && s.Detectable < 0.5) {
		t.Errorf("90%% at 100+100: detectable %v, want the fall's (over 10pp)", s.Detectable)
	}
	if s := RateSensitivity(90, 100, 100, alpha, Power, 0.95); s.Need != -1 {
		t.Errorf("90%% ± 95pp: need %d, want -1 (neither direction fits)", s.Need)
	}
	// Tied values (turns) are a rounding, not a spread of zero: a shift of
	// 0.01 turns is not detectable at any size one would run.
	turns := []float64{2, 3, 3, 3, 4, 4, 5, 2, 3, 3, 4, 6}
	if s := ShiftSensitivity(turns, turns, alpha, Power, 0.01); s.Need >= 0 && s.Need < 100000 {
		t.Errorf("a shift of 0.01 turns: need %d, want a huge n", s.Need)
	}
}

// TestShiftModelIsTheStableSortOfTheResiduals holds newShiftModel, which
// picks the thinned ranks by walking a merge of the sorted sides and one
// pass over the input, to the model's definition: every residual with its
// stratum, stably sorted by value, thinned to maxModelValues evenly spaced
// ranks. Ties across strata and sides, and the two zeros, are the cases a
// shortcut would get wrong.
func TestShiftModelIsTheStableSortOfTheResiduals(t *testing.T) {
	negZero := math.Copysign(0, -1)
	// A's median is 0 + −0 = 0, so its −0 (in stratum 1) leaves a residual
	// of −0, tied with the residuals 0 of A's stratum 0 and of B.
	cases := [][2][][]float64{{{{-1, 0, 1}, {negZero}}, {{5, 6, 7}}}}
	rng := rand.New(rand.NewPCG(3, 7))
	for trial := range 40 {
		var sides [2][][]float64
		for s := range sides {
			for range 1 + rng.IntN(4) {
				n := rng.IntN([]int{5, 300, 3000}[trial%3])
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = float64(rng.IntN(1 + trial*3)) // many ties
					if trial%4 == 3 {
						xs[i] = rng.NormFloat64()
					}
					if xs[i] == 0 && rng.IntN(2) == 0 {
						xs[i] = negZero
					}
				}
				sides[s] = append(sides[s], xs)
			}
		}
		cases = append(cases, sides)
	}
	for i, sides := range cases {
		want := stableShiftModel(sides[0], sides[1])
		got := newShiftModel(NewSample(sides[0]...), NewSample(sides[1]...))
		if !slices.Equal(want.e, got.e) || !slices.Equal(want.strata, got.strata) {
			t.Fatalf("case %d: the model differs from the stable sort's:\n got %v %v\nwant %v %v", i, got.e, got.strata, want.e, want.strata)
		}
	}
}

// stableShiftModel is newShiftModel as first written: a stable sort of
// every residual.
func stableShiftModel(a, b [][]float64) shiftModel {
	type residual struct {
		v       float64
		stratum int
	}
	var rs []residual
	for _, side := range [][][]float64{a, b} {
		var all []float64
		for _, xs := range side {
			all = append(all, xs...)
		}
		slices.Sort(all)
		med := benchmath.AssumeNothing.Summary(benchmath.NewSample(all, &benchmath.DefaultThresholds), 0.5).Center
		for st, xs := range side {
			for _, x := range xs {
				rs = append(rs, residual{x - med, st})
			}
		}
	}
	slices.SortStableFunc(rs, func(x, y residual) int { return cmp.Compare(x.v, y.v) })
	if len(rs) > maxModelValues {
		thin := make([]residual, maxModelValues)
		for i := range thin {
			thin[i] = rs[int((float64(i)+0.5)*float64(len(rs))/maxModelValues)]
		}
		rs = thin
	}
	m := shiftModel{e: make([]float64, len(rs)), strata: make([]int, len(rs))}
	for i, r := range rs {
		m.e[i], m.strata[i] = r.v, r.stratum
	}
	spreadTies(m.e)
	return m
}
