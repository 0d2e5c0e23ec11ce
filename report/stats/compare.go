package stats

import (
	"fmt"
	"math"
	"sync"

	"golang.org/x/perf/benchmath"
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
	// Warnings explain why the comparison should be read with care, e.g.
	// that the samples are too few to ever reach significance.
	Warnings []string
}

// CompareContinuous compares a continuous metric (tokens, cost, wall time)
// between a and b with the two-sided Mann–Whitney U test, through benchmath:
// exact p-values for samples of up to 50 values (25 when there are ties), a
// normal approximation with tie and continuity correction above that. The
// centres are medians with confidence intervals at level 1-alpha.
//
// NaN and ±Inf values are skipped, and each side's summary says how many.
// When the sample sizes are so small that no outcome could be significant at
// alpha, a warning gives the smallest reachable p-value and the sample size
// needed per side. alpha must be in (0, 1); otherwise nothing is called
// significant and a warning says why.
func CompareContinuous(a, b []float64, alpha float64) Comparison {
	c := Comparison{
		A:     Summarize(a, confidenceFor(alpha)),
		B:     Summarize(b, confidenceFor(alpha)),
		Alpha: alpha,
		Test:  TestMannWhitneyU,
		P:     math.NaN(),
	}
	c.Delta = relativeChange(c.A.Center, c.B.Center)
	if c.A.N == 0 || c.B.N == 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("nothing to compare: A has %d values, B has %d", c.A.N, c.B.N))
		return c.judge()
	}
	af, _ := finiteValues(a)
	bf, _ := finiteValues(b)
	c.P, c.Warnings = uTest(af, bf)
	if c.P > alpha && validAlpha(alpha) {
		if minP := uTestMinP(len(af), len(bf)); minP > alpha {
			c.Warnings = append(c.Warnings, tooFew(len(af), len(bf), minP, alpha, uTestNeedPerSide(alpha), "values"))
		}
	}
	return c.judge()
}

// uTest runs benchmath's Mann–Whitney U test on a and b (finite, not sorted,
// not modified) and returns its p-value and warnings.
func uTest(a, b []float64) (float64, []string) {
	// benchmath's own "too few samples" warning only considers equal sample
	// sizes; we compute the bound for the sizes actually given, so we hand
	// it alpha 1, which switches that warning off and changes nothing else.
	thr := benchmath.Thresholds{CompareAlpha: 1}
	res := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(append([]float64(nil), a...), &thr),
		benchmath.NewSample(append([]float64(nil), b...), &thr))
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Error())
	}
	return res.P, warnings
}

// uTestMinP returns the smallest p-value the U test can report for samples
// of sizes n1 and n2: the one for two samples that do not overlap at all. It
// asks the same library that computes real p-values, so the bound matches the
// test (exact below benchmath's limits, normal approximation above).
func uTestMinP(n1, n2 int) float64 {
	key := [2]int{n1, n2}
	if p, ok := uMinPCache.Load(key); ok {
		return p.(float64)
	}
	a := make([]float64, n1)
	b := make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	p, _ := uTest(a, b)
	uMinPCache.Store(key, p)
	return p
}

var uMinPCache sync.Map

// uTestNeedPerSide returns the smallest n such that two samples of n values
// each can reach significance at alpha.
func uTestNeedPerSide(alpha float64) int {
	for n := 1; n < 1000; n++ {
		if uTestMinP(n, n) <= alpha {
			return n
		}
	}
	return 1000
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
