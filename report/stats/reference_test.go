package stats

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// verdict is the part of a Comparison that published examples state.
type verdict struct {
	P           float64
	Significant bool
	Test        string
}

func verdictOf(c Comparison) verdict { return verdict{c.P, c.Significant, c.Test} }

// Published p-values are printed to four significant digits.
var fourDigits = cmpopts.EquateApprox(5e-4, 0)

// TestMannWhitneyMatchesPublishedPValues stops a wrapper that feeds the U test
// the wrong samples, the wrong tail, or mangles ties: each case is a published
// example with its p-value.
func TestMannWhitneyMatchesPublishedPValues(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want verdict
	}{
		{
			// Hollander & Wolfe (1973), p. 69: permeability constants of the
			// human chorioamnion, at term (x) and at 12–26 weeks (y). The
			// example in R's ?wilcox.test prints W = 35, p = 0.1272 for the
			// one-sided test; the two-sided exact p is twice that, 0.2544.
			name: "hollander-wolfe-exact",
			a:    []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			b:    []float64{1.15, 0.88, 0.90, 0.74, 1.21},
			want: verdict{P: 0.2544, Significant: false, Test: TestMannWhitneyU},
		},
		{
			// R's ?wilcox.test: wilcox.test(Ozone ~ Month, data = airquality,
			// subset = Month %in% c(5, 8)) prints W = 127.5, p = 0.0001208
			// (normal approximation with tie and continuity correction; 26
			// values per side after dropping NA). The data are R's airquality
			// set, Ozone for May and August.
			name: "airquality-ozone-may-august-ties",
			a: []float64{41, 36, 12, 18, 28, 23, 19, 8, 7, 16, 11, 14, 18, 14, 34, 6, 30,
				11, 1, 11, 4, 32, 23, 45, 115, 37},
			b: []float64{39, 9, 16, 78, 35, 66, 122, 89, 110, 44, 28, 65, 22, 59, 23, 31,
				44, 21, 9, 45, 168, 73, 76, 118, 84, 85},
			want: verdict{P: 0.0001208, Significant: true, Test: TestMannWhitneyU},
		},
		{
			// Four against four with no overlap: the exact two-sided p is
			// 2/C(8,4) = 2/70 (benchmath's own table says the same).
			name: "complete-separation-4-vs-4",
			a:    []float64{1, 2, 3, 4},
			b:    []float64{5, 6, 7, 8},
			want: verdict{P: 2.0 / 70, Significant: true, Test: TestMannWhitneyU},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictOf(CompareContinuous(tt.a, tt.b, 0.05))
			if diff := cmp.Diff(tt.want, got, fourDigits); diff != "" {
				t.Errorf("CompareContinuous verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFisherExactMatchesPublishedPValues stops a Fisher test that only sums
// one tail, or that drops tables exactly as likely as the observed one.
func TestFisherExactMatchesPublishedPValues(t *testing.T) {
	tests := []struct {
		name                 string
		aPass, aN, bPass, bN int
		want                 verdict
	}{
		{
			// Fisher (1935), the lady tasting tea: 3 of 4 milk-first cups
			// named right, 1 of 4 tea-first cups named milk-first. R's
			// ?fisher.test: p = 0.4857 two-sided, exactly 34/70.
			name: "tea-tasting", aPass: 3, aN: 4, bPass: 1, bN: 4,
			want: verdict{P: 34.0 / 70, Significant: false, Test: TestFisherExact},
		},
		{
			// R's ?fisher.test, Convictions of like-sex twins of criminals
			// (Fisher 1962): dizygotic 2 of 17 convicted, monozygotic 10 of
			// 13. The page prints the one-sided p 0.0004652; R 4.2's
			// fisher.test(Convictions) gives two-sided p = 0.0005367.
			name: "convictions-of-twins", aPass: 2, aN: 17, bPass: 10, bN: 13,
			want: verdict{P: 0.0005367, Significant: true, Test: TestFisherExact},
		},
		{
			// Same table with the sides swapped: a two-sided test must not care.
			name: "convictions-of-twins-swapped", aPass: 10, aN: 13, bPass: 2, bN: 17,
			want: verdict{P: 0.0005367, Significant: true, Test: TestFisherExact},
		},
		{
			name: "identical-rates", aPass: 7, aN: 10, bPass: 7, bN: 10,
			want: verdict{P: 1, Significant: false, Test: TestFisherExact},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictOf(CompareRates(tt.aPass, tt.aN, tt.bPass, tt.bN, 0.05))
			if diff := cmp.Diff(tt.want, got, fourDigits); diff != "" {
				t.Errorf("CompareRates verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMcNemarExactMatchesPublishedPValues stops a paired test that counts
// concordant pairs or reports a one-sided p.
func TestMcNemarExactMatchesPublishedPValues(t *testing.T) {
	pairs := func(both, onlyA, onlyB, neither int) []Pair {
		var ps []Pair
		for range both {
			ps = append(ps, Pair{A: true, B: true})
		}
		for range onlyA {
			ps = append(ps, Pair{A: true, B: false})
		}
		for range onlyB {
			ps = append(ps, Pair{A: false, B: true})
		}
		for range neither {
			ps = append(ps, Pair{})
		}
		return ps
	}
	tests := []struct {
		name  string
		pairs []Pair
		want  verdict
	}{
		{
			// Fagerland, Lydersen & Laake (2013), "The McNemar test for binary
			// matched-pairs data", BMC Med Res Methodol 13:91, Table 1: airway
			// hyper-responsiveness before and after stem cell transplantation
			// (Bentur et al. 2009), 1 yes/yes, 1 yes/no, 7 no/yes, 12 no/no.
			// Exact conditional McNemar p = 0.070 (R: binom.test(1, 8) gives
			// 0.07031 = 18/256).
			name:  "fagerland-ahr",
			pairs: pairs(1, 1, 7, 12),
			want:  verdict{P: 18.0 / 256, Significant: false, Test: TestMcNemarExact},
		},
		{
			// Concordant pairs carry no information: adding a hundred of them
			// must not move p.
			name:  "fagerland-ahr-plus-concordant",
			pairs: pairs(101, 1, 7, 12),
			want:  verdict{P: 18.0 / 256, Significant: false, Test: TestMcNemarExact},
		},
		{
			// Ten changes all one way: p = 2 * 0.5^10.
			name:  "ten-changes-one-way",
			pairs: pairs(5, 0, 10, 5),
			want:  verdict{P: 2.0 / 1024, Significant: true, Test: TestMcNemarExact},
		},
		{
			name:  "balanced-changes",
			pairs: pairs(5, 4, 4, 5),
			want:  verdict{P: 1, Significant: false, Test: TestMcNemarExact},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictOf(CompareRatesPaired(tt.pairs, 0.05))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("CompareRatesPaired verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWilsonIntervalMatchesNewcombe stops a rate interval that is the Wald
// interval in disguise (it would go below 0 for 0/20) or uses the wrong z.
func TestWilsonIntervalMatchesNewcombe(t *testing.T) {
	// Newcombe (1998), "Two-sided confidence intervals for the single
	// proportion: comparison of seven methods", Stat Med 17:857–872, Table II,
	// method 3 (Wilson score, no continuity correction), 95%. R's
	// prop.test(x, n, correct = FALSE)$conf.int agrees to the digits shown.
	tests := []struct {
		pass, n int
		want    Summary
	}{
		{81, 263, Summary{N: 263, Center: 81.0 / 263, Lo: 0.2553, Hi: 0.3662, Confidence: 0.95}},
		{15, 148, Summary{N: 148, Center: 15.0 / 148, Lo: 0.0624, Hi: 0.1605, Confidence: 0.95}},
		{0, 20, Summary{N: 20, Center: 0, Lo: 0, Hi: 0.1611, Confidence: 0.95}},
		{1, 29, Summary{N: 29, Center: 1.0 / 29, Lo: 0.0061, Hi: 0.1718, Confidence: 0.95}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-of-%d", tt.pass, tt.n), func(t *testing.T) {
			got := SummarizeRate(tt.pass, tt.n, 0.95)
			// Newcombe prints four decimals.
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 5e-5)); diff != "" {
				t.Errorf("SummarizeRate(%d, %d) mismatch (-want +got):\n%s", tt.pass, tt.n, diff)
			}
		})
	}
}

// TestMedianIntervalUsesOrderStatistics stops a median interval that is not
// the distribution-free one benchstat prints, or that claims a confidence it
// does not have.
func TestMedianIntervalUsesOrderStatistics(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{
			// n = 10 at 95%: the textbook sign-test interval is (x(2), x(9)),
			// whose coverage is 1 - 2·P(Bin(10, ½) ≤ 1) = 1 - 22/1024 (e.g.
			// Hollander & Wolfe, Nonparametric Statistical Methods, §3.6).
			name: "ten-values",
			xs:   []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			want: Summary{N: 10, Center: 1.415, Lo: 0.80, Hi: 1.89, Confidence: 1 - 22.0/1024},
		},
		{
			// Five values cannot bracket the median at 95%: (x(1), x(5))
			// covers only 1 - 2/32 = 0.9375. benchmath then opens one end,
			// (-∞, x(5)) covering 1 - 1/32, and warns.
			name: "five-values-too-few",
			xs:   []float64{1.15, 0.88, 0.90, 0.74, 1.21},
			want: Summary{N: 5, Center: 0.90, Lo: -inf, Hi: 1.21, Confidence: 1 - 1.0/32,
				Warnings: []string{"need >= 6 samples for confidence interval at level 0.95"}},
		},
		{
			name: "non-finite-values-are-skipped-and-counted",
			xs:   []float64{math.NaN(), 3, 1, math.Inf(1), 2, 4, 6, 5, math.Inf(-1)},
			want: Summary{N: 6, Center: 3.5, Lo: 1, Hi: 6, Confidence: 1 - 2.0/64,
				Warnings: []string{"skipped 3 of 9 values that are NaN or infinite"}},
		},
		{
			name: "no-values",
			xs:   nil,
			want: Summary{N: 0, Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Confidence: 0.95,
				Warnings: []string{"no values"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.xs, 0.95)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(1e-12, 0), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
