package stats

import (
	"fmt"
	"math"
)

// Names of the tests a Comparison can come from, as they appear in
// Comparison.Test.
const (
	TestMannWhitneyU = "mann-whitney-u"
	TestFisherExact  = "fisher-exact"
	TestMcNemarExact = "mcnemar-exact"
)

// Comparison is the result of comparing a metric between run A and run B.
type Comparison struct {
	// A and B summarise each side. Their own warnings (skipped values, a
	// sample too small for an interval) stay in A.Warnings and B.Warnings.
	A, B Summary
	// Delta is the relative change of the centre, (B-A)/A. It is NaN when
	// A's centre is 0 or either centre is NaN: a relative change from
	// nothing has no value, and it is not 0.
	Delta float64
	// P is the two-sided p-value of the test named by Test, or NaN when no
	// test could be run (an empty side).
	P float64
	// Alpha is the significance level the comparison was judged at.
	Alpha float64
	// Significant reports P <= Alpha. A report prints "~" when it is false.
	Significant bool
	// Test is TestMannWhitneyU, TestFisherExact or TestMcNemarExact.
	Test string
	// Shift estimates B − A in the metric's unit (a rate difference in
	// [−1, 1] for rates), and ShiftLo and ShiftHi bound it at level
	// 1 − Alpha by the method that inverts Test (see change.go): the
	// interval and the p-value tell one story. ±Inf: the sample is too
	// small to bound that end; NaN: nothing to compare.
	Shift, ShiftLo, ShiftHi float64
	// Warnings explain why the comparison should be read with care, e.g.
	// that the samples are too few to ever reach significance.
	Warnings []string
}

// CompareContinuous compares a continuous metric (tokens, cost, wall time)
// between a and b with the two-sided Mann–Whitney U test: exact p-values for
// samples of up to 50 values per side (through benchmath) or 25 when there
// are ties (the exact conditional distribution given the ties), a normal
// approximation with tie and continuity correction above that. P is always in
// (0, 1]. The centres are medians with confidence intervals at level 1-alpha.
//
// NaN and ±Inf values are skipped, and each side's summary says how many.
// When the sample sizes are so small that no outcome could be significant at
// alpha, a warning gives the smallest reachable p-value and the sample size
// needed per side. alpha must be in (0, 1); otherwise nothing is called
// significant and a warning says why.
func CompareContinuous(a, b []float64, alpha float64) Comparison {
	return CompareSamples(NewSample(a), NewSample(b), alpha)
}

// CompareSamples is CompareContinuous over two Samples, whose sorted values
// serve the summaries, the U test and the shift interval alike; a Sample
// can go on to ShiftSensitivitySamples without being sorted again.
func CompareSamples(a, b *Sample, alpha float64) Comparison {
	c := Comparison{
		A:     a.summary(confidenceFor(alpha)),
		B:     b.summary(confidenceFor(alpha)),
		Alpha: alpha,
		Test:  TestMannWhitneyU,
		P:     math.NaN(),
		Shift: math.NaN(), ShiftLo: math.NaN(), ShiftHi: math.NaN(),
	}
	c.Delta = relativeChange(c.A.Center, c.B.Center)
	if c.A.N == 0 || c.B.N == 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("nothing to compare: A has %d values, B has %d", c.A.N, c.B.N))
		return c.judge()
	}
	// The test ranks the sides and the interval counts differences over
	// their distinct values: one tally of each side serves both.
	ta, tb := tally(a.sorted), tally(b.sorted)
	c.Shift, c.ShiftLo, c.ShiftHi = shiftInterval(ta, tb, alpha)
	c.P, c.Warnings = uTestSorted(a.sorted, b.sorted, ta, tb)
	if c.P > alpha && validAlpha(alpha) {
		if minP := uTestMinP(a.N(), b.N()); minP > alpha {
			c.Warnings = append(c.Warnings, tooFew(a.N(), b.N(), minP, alpha, uTestNeedPerSide(alpha), "values"))
		}
	}
	return c.judge()
}

// tooFew explains that no outcome at these sample sizes could be significant.
func tooFew(n1, n2 int, minP, alpha float64, need int, unit string) string {
	return fmt.Sprintf("too few %s to ever reach significance: with %d vs %d the smallest possible p is %.3g > alpha %v; need at least %d per side",
		unit, n1, n2, minP, alpha, need)
}

// judge sets Significant and adds the warning for an unusable alpha.
func (c Comparison) judge() Comparison {
	if !validAlpha(c.Alpha) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("alpha %v is outside (0, 1); nothing is called significant", c.Alpha))
		c.Significant = false
		return c
	}
	c.Significant = !math.IsNaN(c.P) && c.P <= c.Alpha
	return c
}

func validAlpha(alpha float64) bool { return alpha > 0 && alpha < 1 }

// confidenceFor returns the confidence level of the intervals shown next to
// a test at alpha, so that the interval and the test speak at the same level.
func confidenceFor(alpha float64) float64 {
	if !validAlpha(alpha) {
		return 0.95
	}
	return 1 - alpha
}

// relativeChange returns (b-a)/a, or NaN when a is 0 or either is NaN.
func relativeChange(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return (b - a) / a
}
