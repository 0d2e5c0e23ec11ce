package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

// CompareRates compares pass rates between independent attempts: aPass of
// aN attempts on side A against bPass of bN on side B, with Fisher's exact
// test (two-sided, summing the probabilities of all tables no more likely than
// the observed one, as R's fisher.test does). Each side's rate carries a
// Wilson interval at level 1-alpha. Use CompareRatesPaired instead when the
// attempts pair up (same task and repetition on both sides): pairing removes
// the task-to-task variation and makes the test more sensitive.
//
// Counts that cannot be (negative, or more passes than attempts) give P NaN
// and a warning. alpha must be in (0, 1); otherwise nothing is called
// significant and a warning says why.
func CompareRates(aPass, aN, bPass, bN int, alpha float64) Comparison {
	c := Comparison{
		A:     SummarizeRate(aPass, aN, confidenceFor(alpha)),
		B:     SummarizeRate(bPass, bN, confidenceFor(alpha)),
		Alpha: alpha,
		Test:  TestFisherExact,
		P:     math.NaN(),
		Shift: math.NaN(), ShiftLo: math.NaN(), ShiftHi: math.NaN(),
	}
	c.Delta = relativeChange(c.A.Center, c.B.Center)
	if aN <= 0 || bN <= 0 || aPass < 0 || bPass < 0 || aPass > aN || bPass > bN {
		c.Warnings = append(c.Warnings, fmt.Sprintf("nothing to compare: A has %d of %d, B has %d of %d", aPass, aN, bPass, bN))
		return c.judge()
	}
	c.Shift = c.B.Center - c.A.Center
	if validAlpha(alpha) {
		c.ShiftLo, c.ShiftHi = newcombe(c.A, c.B)
	}
	c.P = fisherExact(aPass, aN, bPass, bN)
	if c.P > alpha && validAlpha(alpha) {
		// The smallest p is reached when the sides separate completely:
		// every A attempt passes and every B attempt fails.
		if minP := fisherExact(aN, aN, 0, bN); minP > alpha {
			c.Warnings = append(c.Warnings, tooFew(aN, bN, minP, alpha, fisherNeedPerSide(alpha), "attempts"))
		}
	}
	return c.judge()
}

// fisherExact returns the two-sided p-value of Fisher's exact test for the
// 2×2 table [[aPass, aN-aPass], [bPass, bN-bPass]]. With the margins fixed,
// the number of passes on side A is hypergeometric; gonum has no
// hypergeometric distribution, so its probabilities come from gonum's log
// binomial coefficients.
func fisherExact(aPass, aN, bPass, bN int) float64 {
	n := aN + bN
	passes := aPass + bPass
	logProb := func(x int) float64 {
		return combin.LogGeneralizedBinomial(float64(passes), float64(x)) +
			combin.LogGeneralizedBinomial(float64(n-passes), float64(aN-x)) -
			combin.LogGeneralizedBinomial(float64(n), float64(aN))
	}
	observed := logProb(aPass)
	// Tables as likely as the observed one count as "at least as extreme";
	// the relative tolerance (R uses the same) keeps rounding in the log
	// arithmetic from dropping a table whose probability equals it exactly.
	limit := observed + math.Log1p(1e-7)
	p := 0.0
	for x := max(0, aN-(n-passes)); x <= min(aN, passes); x++ {
		if lp := logProb(x); lp <= limit {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

// fisherNeedPerSide returns the smallest n such that n attempts per side can
// reach significance at alpha.
func fisherNeedPerSide(alpha float64) int {
	for n := 1; n < 1000; n++ {
		if fisherExact(n, n, 0, n) <= alpha {
			return n
		}
	}
	return 1000
}

// Pair is one task and repetition attempted on both sides: A and B report
// whether each side passed.
type Pair struct {
	A, B bool
}

// CompareRatesPaired compares pass rates when attempts pair up (the same task
// and repetition ran on both sides) with the exact McNemar test: only pairs
// whose outcome changed carry information, and under no difference each change
// is equally likely to go either way, so the p-value is a two-sided binomial
// test of the changes against one half. The summaries are each side's pass
// rate over all pairs, with Wilson intervals at level 1-alpha.
//
// When too few pairs changed outcome for any split to be significant, a
// warning says how many changed pairs are needed. alpha must be in (0, 1);
// otherwise nothing is called significant and a warning says why.
func CompareRatesPaired(pairs []Pair, alpha float64) Comparison {
	var aPass, bPass, onlyA, onlyB int
	for _, p := range pairs {
		if p.A {
			aPass++
		}
		if p.B {
			bPass++
		}
		switch {
		case p.A && !p.B:
			onlyA++
		case p.B && !p.A:
			onlyB++
		}
	}
	n := len(pairs)
	c := Comparison{
		A:     SummarizeRate(aPass, n, confidenceFor(alpha)),
		B:     SummarizeRate(bPass, n, confidenceFor(alpha)),
		Alpha: alpha,
		Test:  TestMcNemarExact,
		P:     math.NaN(),
		Shift: math.NaN(), ShiftLo: math.NaN(), ShiftHi: math.NaN(),
	}
	c.Delta = relativeChange(c.A.Center, c.B.Center)
	if n == 0 {
		c.Warnings = append(c.Warnings, "nothing to compare: no pairs")
		return c.judge()
	}
	c.Shift = c.B.Center - c.A.Center
	c.ShiftLo, c.ShiftHi = pairedInterval(onlyA, onlyB, n, alpha)
	c.P = mcNemarExact(onlyA, onlyB)
	if c.P > alpha && validAlpha(alpha) {
		discordant := onlyA + onlyB
		if minP := mcNemarExact(discordant, 0); minP > alpha {
			need := 1
			for mcNemarExact(need, 0) > alpha {
				need++
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"too few changed pairs to ever reach significance: %d of %d pairs changed outcome (%d passed only on A, %d only on B), so the smallest possible p is %.3g > alpha %v; need at least %d changed pairs",
				discordant, n, onlyA, onlyB, minP, alpha, need))
		}
	}
	return c.judge()
}

// mcNemarExact returns the two-sided exact McNemar p-value for b pairs that
// passed only on A and c that passed only on B.
func mcNemarExact(b, c int) float64 {
	d := b + c
	if d == 0 {
		return 1
	}
	tail := distuv.Binomial{N: float64(d), P: 0.5}.CDF(float64(min(b, c)))
	return math.Min(1, 2*tail)
}
