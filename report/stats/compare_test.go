package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares comparisons up to rounding; the change's interval has
// tests of its own (change_test.go).
var approx = cmp.Options{cmpopts.EquateApprox(1e-9, 0), cmpopts.EquateNaNs(),
	cmpopts.IgnoreFields(Comparison{}, "Shift", "ShiftLo", "ShiftHi")}

// TestTooFewSamplesSayHowManyAreNeeded stops `wfb diff` from printing "~" for
// three runs per side as if that meant "no change": with 3 vs 3 no outcome can
// reach p <= 0.05, and the reader must be told so and how many are needed.
func TestTooFewSamplesSayHowManyAreNeeded(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want []string
	}{
		{
			name: "three-vs-three-fully-separated",
			a:    []float64{1, 2, 3},
			b:    []float64{10, 11, 12},
			want: []string{"too few values to ever reach significance: with 3 vs 3 the smallest possible p is 0.1 > alpha 0.05; need at least 4 per side"},
		},
		{
			// One against thirty: exact minimum p is 2/31 ≈ 0.065.
			name: "one-vs-thirty",
			a:    []float64{100},
			b:    []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30},
			want: []string{"too few values to ever reach significance: with 1 vs 30 the smallest possible p is 0.0645 > alpha 0.05; need at least 4 per side"},
		},
		{
			// Enough values, just no difference: "~" is the honest answer and
			// needs no excuse.
			name: "enough-values-no-difference",
			a:    []float64{1, 3, 5, 7},
			b:    []float64{2, 4, 6, 8},
			want: nil,
		},
		{
			name: "all-equal",
			a:    []float64{5, 5, 5, 5},
			b:    []float64{5, 5, 5, 5},
			want: []string{"all samples are equal"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareContinuous(tt.a, tt.b, 0.05)
			if diff := cmp.Diff(tt.want, got.Warnings); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
			if got.Significant {
				t.Errorf("Significant = true with P = %v, want false", got.P)
			}
		})
	}
}

// TestSmallestPossiblePMatchesTheExactCount stops the "too few" bound from
// drifting from the test it describes: for samples that do not overlap the
// exact U test gives 2/C(n1+n2, n1).
func TestSmallestPossiblePMatchesTheExactCount(t *testing.T) {
	choose := func(n, k int) float64 {
		r := 1.0
		for i := 1; i <= k; i++ {
			r = r * float64(n-k+i) / float64(i)
		}
		return r
	}
	for _, sizes := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {2, 7}, {1, 30}, {9, 9}, {5, 12}} {
		want := math.Min(1, 2/choose(sizes[0]+sizes[1], sizes[0]))
		got := uTestMinP(sizes[0], sizes[1])
		if diff := cmp.Diff(want, got, approx); diff != "" {
			t.Errorf("uTestMinP(%d, %d) mismatch (-want +got):\n%s", sizes[0], sizes[1], diff)
		}
	}
}

// TestContinuousComparisonReportsEverything stops a Comparison that loses a
// side's summary, miscomputes the relative change, or calls a refused input
// significant.
func TestContinuousComparisonReportsEverything(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	tests := []struct {
		name  string
		a, b  []float64
		alpha float64
		want  Comparison
	}{
		{
			name:  "clear-increase",
			a:     []float64{10, 11, 12, 13, 14, 15},
			b:     []float64{20, 21, 22, 23, 24, 25},
			alpha: 0.05,
			want: Comparison{
				A:     Summary{N: 6, Center: 12.5, Lo: 10, Hi: 15, Confidence: 1 - 2.0/64},
				B:     Summary{N: 6, Center: 22.5, Lo: 20, Hi: 25, Confidence: 1 - 2.0/64},
				Delta: 0.8, P: 2.0 / 924, Alpha: 0.05, Significant: true, Test: TestMannWhitneyU,
			},
		},
		{
			// NaN and Inf are not measurements: they are skipped, counted in
			// the side's warnings, and the test runs on what is left.
			name:  "non-finite-skipped",
			a:     []float64{10, nan, 11, 12, 13, 14, 15, inf},
			b:     []float64{20, 21, 22, 23, 24, 25},
			alpha: 0.05,
			want: Comparison{
				A: Summary{N: 6, Center: 12.5, Lo: 10, Hi: 15, Confidence: 1 - 2.0/64,
					Warnings: []string{"skipped 2 of 8 values that are NaN or infinite"}},
				B:     Summary{N: 6, Center: 22.5, Lo: 20, Hi: 25, Confidence: 1 - 2.0/64},
				Delta: 0.8, P: 2.0 / 924, Alpha: 0.05, Significant: true, Test: TestMannWhitneyU,
			},
		},
		{
			// A relative change from a zero median has no value; it is not
			// +Inf and not 0.
			name:  "zero-centre-has-no-relative-change",
			a:     []float64{0, 0, 0, 0, 0, 1},
			b:     []float64{2, 3, 4, 5, 6, 7},
			alpha: 0.05,
			want: Comparison{
				A:     Summary{N: 6, Center: 0, Lo: 0, Hi: 1, Confidence: 1 - 2.0/64},
				B:     Summary{N: 6, Center: 4.5, Lo: 2, Hi: 7, Confidence: 1 - 2.0/64},
				Delta: nan, P: 2.0 / 924, Alpha: 0.05, Significant: true, Test: TestMannWhitneyU,
			},
		},
		{
			name:  "empty-side-is-not-compared",
			a:     []float64{nan},
			b:     []float64{1, 2},
			alpha: 0.05,
			want: Comparison{
				A: Summary{N: 0, Center: nan, Lo: nan, Hi: nan, Confidence: 0.95,
					Warnings: []string{"skipped 1 of 1 values that are NaN or infinite", "no values"}},
				B: Summary{N: 2, Center: 1.5, Lo: -inf, Hi: inf, Confidence: 1,
					Warnings: []string{"need >= 6 samples for confidence interval at level 0.95"}},
				Delta: nan, P: nan, Alpha: 0.05, Test: TestMannWhitneyU,
				Warnings: []string{"nothing to compare: A has 0 values, B has 2"},
			},
		},
		{
			name:  "bad-alpha-is-never-significant",
			a:     []float64{10, 11, 12, 13, 14, 15},
			b:     []float64{20, 21, 22, 23, 24, 25},
			alpha: 0,
			want: Comparison{
				A:     Summary{N: 6, Center: 12.5, Lo: 10, Hi: 15, Confidence: 1 - 2.0/64},
				B:     Summary{N: 6, Center: 22.5, Lo: 20, Hi: 25, Confidence: 1 - 2.0/64},
				Delta: 0.8, P: 2.0 / 924, Alpha: 0, Significant: false, Test: TestMannWhitneyU,
				Warnings: []string{"alpha 0 is outside (0, 1); nothing is called significant"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareContinuous(tt.a, tt.b, tt.alpha)
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("CompareContinuous mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareContinuousLeavesInputsAlone stops the wrapper from sorting the
// caller's slices in place (benchmath.NewSample sorts what it is given), which
// would scramble a report's per-row order.
func TestCompareContinuousLeavesInputsAlone(t *testing.T) {
	a := []float64{3, 1, 2, math.NaN()}
	b := []float64{9, 7, 8}
	wantA, wantB := slices.Clone(a), slices.Clone(b)
	CompareContinuous(a, b, 0.05)
	Summarize(a, 0.95)
	if diff := cmp.Diff(wantA, a, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("a changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, b); diff != "" {
		t.Errorf("b changed (-want +got):\n%s", diff)
	}
}

// TestRateComparisonsReportEverything stops pass-rate comparisons that drop
// the per-side interval, accept impossible counts, or stay silent when the
// counts are too few to decide anything.
func TestRateComparisonsReportEverything(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		got  Comparison
		want Comparison
	}{
		{
			name: "three-vs-three-can-never-be-significant",
			got:  CompareRates(3, 3, 0, 3, 0.05),
			want: Comparison{
				A:     SummarizeRate(3, 3, 0.95),
				B:     SummarizeRate(0, 3, 0.95),
				Delta: -1, P: 0.1, Alpha: 0.05, Test: TestFisherExact,
				Warnings: []string{"too few attempts to ever reach significance: with 3 vs 3 the smallest possible p is 0.1 > alpha 0.05; need at least 4 per side"},
			},
		},
		{
			name: "impossible-counts",
			got:  CompareRates(5, 4, 1, 4, 0.05),
			want: Comparison{
				A: Summary{N: 4, Center: nan, Lo: nan, Hi: nan, Confidence: 0.95,
					Warnings: []string{"impossible count: 5 passes out of 4"}},
				B:     SummarizeRate(1, 4, 0.95),
				Delta: nan, P: nan, Alpha: 0.05, Test: TestFisherExact,
				Warnings: []string{"nothing to compare: A has 5 of 4, B has 1 of 4"},
			},
		},
		{
			name: "zero-pass-rate-has-no-relative-change",
			got:  CompareRates(0, 20, 10, 20, 0.05),
			want: Comparison{
				A:     SummarizeRate(0, 20, 0.95),
				B:     SummarizeRate(10, 20, 0.95),
				Delta: nan, P: fisherExact(0, 20, 10, 20), Alpha: 0.05, Significant: true, Test: TestFisherExact,
			},
		},
		{
			name: "paired-few-changes",
			got:  CompareRatesPaired([]Pair{{true, true}, {true, false}, {false, true}, {true, false}, {false, false}}, 0.05),
			want: Comparison{
				A:     SummarizeRate(3, 5, 0.95),
				B:     SummarizeRate(2, 5, 0.95),
				Delta: (0.4 - 0.6) / 0.6, P: 1, Alpha: 0.05, Test: TestMcNemarExact,
				Warnings: []string{"too few changed pairs to ever reach significance: 3 of 5 pairs changed outcome (2 passed only on A, 1 only on B), so the smallest possible p is 0.25 > alpha 0.05; need at least 6 changed pairs"},
			},
		},
		{
			name: "paired-no-pairs",
			got:  CompareRatesPaired(nil, 0.05),
			want: Comparison{
				A:     SummarizeRate(0, 0, 0.95),
				B:     SummarizeRate(0, 0, 0.95),
				Delta: nan, P: nan, Alpha: 0.05, Test: TestMcNemarExact,
				Warnings: []string{"nothing to compare: no pairs"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got, approx); diff != "" {
				t.Errorf("comparison mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
