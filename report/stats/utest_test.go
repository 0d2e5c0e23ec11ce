package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// permutationP is the test's own oracle for the exact U test with ties: it
// enumerates every way of choosing which len(a) of the pooled values belong
// to A, computes A's rank sum with mid-ranks for each, and returns the share
// of choices whose rank sum lies at least as far from its mean as the
// observed one (the two-sided conditional p-value, as R's coin package
// defines it). It shares no code with the package: ranks come from counting,
// not sorting, and there is no dynamic programme. Doubled ranks keep every
// sum an integer, so "at least as far" is an exact comparison.
func permutationP(t *testing.T, a, b []float64) float64 {
	t.Helper()
	pool := append(append([]float64(nil), a...), b...)
	n1, n := len(a), len(pool)
	if n > 22 {
		t.Fatalf("permutationP: %d values are too many to enumerate", n)
	}
	// Twice the mid-rank of value v: 2·(number below) + (number equal) + 1.
	twoRank := make([]int, n)
	for i, v := range pool {
		below, equal := 0, 0
		for _, w := range pool {
			switch {
			case w < v:
				below++
			case w == v:
				equal++
			}
		}
		twoRank[i] = 2*below + equal + 1
	}
	twoSum := func(mask uint32) int {
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += twoRank[i]
			}
		}
		return s
	}
	centre := n1 * (n + 1) // twice the mean rank sum of A
	far := abs(twoSum(1<<n1-1) - centre)
	hits, total := 0, 0
	// Every n-bit mask with n1 bits set, in increasing order (Gosper's hack).
	for mask := uint32(1)<<n1 - 1; mask < 1<<n; {
		total++
		if abs(twoSum(mask)-centre) >= far {
			hits++
		}
		low := mask & -mask
		next := mask + low
		mask = next | ((next^mask)>>2)/low
	}
	if want := choose(n, n1); total != want {
		t.Fatalf("permutationP: enumerated %d splits, want C(%d, %d) = %d", total, n, n1, want)
	}
	return float64(hits) / float64(total)
}

func choose(n, k int) int {
	c := 1
	for i := 1; i <= k; i++ {
		c = c * (n - k + i) / i
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestUTestWithTiesMatchesTheExactPermutationP stops the exact U test from
// assuming that the distribution of U is symmetric when there are ties. It is
// not (mid-ranks of 0,0,0,1 are 2,2,2,4), yet go-moremath doubled one tail,
// which gave p = 1.8 for [0] against [0 0 0 0 1 0 0 0 0], and read U2 off
// U1's distribution, which gave p = 0 for [3] against [3 1 2 1 1 1] and for
// complete separation with ties. Each want is the exact conditional p of
// the rank sum, computed in R by enumerating every split with combn
// (testdata/utest_reference.R); the test checks its own enumeration,
// permutationP, against R too, so the two oracles vouch for each other.
func TestUTestWithTiesMatchesTheExactPermutationP(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want float64
	}{
		{
			// Every split is at least as far from the mean: p is 1, not 1.8.
			name: "one-tied-value-against-nine",
			a:    []float64{0},
			b:    []float64{0, 0, 0, 0, 1, 0, 0, 0, 0},
			want: 1,
		},
		{
			// go-moremath: 1.667.
			name: "four-ties-and-one-against-a-tied-one",
			a:    []float64{0, 1, 1, 1, 1},
			b:    []float64{1},
			want: 1,
		},
		{
			// A is the top value, tied with one of B. go-moremath: 0.
			name: "top-value-tied-across-sides",
			a:    []float64{3},
			b:    []float64{3, 1, 2, 1, 1, 1},
			want: 2.0 / 7,
		},
		{
			// All of A above all of B, ties inside each side (the report
			// that started this). Only the observed split is as extreme:
			// p = 1/C(19, 9). go-moremath: 0.
			name: "complete-separation-9-above-10-with-ties",
			a:    []float64{6, 6, 7, 7, 8, 8, 9, 9, 10},
			b:    []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5},
			want: 1.0 / 92378,
		},
		{
			// The same below, with one tie across the boundary. R prints
			// 3.247526467e-05, which is 3/C(19, 9).
			name: "separation-9-below-10-tied-at-the-boundary",
			a:    []float64{1, 1, 2, 2, 3, 3, 4, 4, 5},
			b:    []float64{5, 6, 6, 7, 7, 8, 8, 9, 9, 10},
			want: 3.0 / 92378,
		},
		{
			// R prints 0.01522007404, which is 370/C(17, 8).
			name: "overlapping-small-integers",
			a:    []float64{3, 4, 4, 5, 3, 6, 7, 4},
			b:    []float64{5, 5, 6, 7, 7, 8, 6, 5, 9},
			want: 370.0 / 24310,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oracle := permutationP(t, tt.a, tt.b)
			if diff := cmp.Diff(tt.want, oracle, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Fatalf("oracle disagrees with R's enumeration (-want +got):\n%s", diff)
			}
			got := CompareContinuous(tt.a, tt.b, 0.05)
			if diff := cmp.Diff(tt.want, got.P, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("CompareContinuous(%v, %v).P mismatch (-want +got):\n%s", tt.a, tt.b, diff)
			}
			// A two-sided test does not care which side is A.
			swapped := CompareContinuous(tt.b, tt.a, 0.05)
			if diff := cmp.Diff(tt.want, swapped.P, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("CompareContinuous(%v, %v).P mismatch (-want +got):\n%s", tt.b, tt.a, diff)
			}
		})
	}
}

// TestUTestPIsAlwaysAProbabilityAndExact stops any p-value outside (0, 1] on
// the data agents produce (small integers, many ties, unequal sizes), and any
// exact p that differs from full enumeration: 3000 random pairs of samples
// of 1 to 10 values each.
func TestUTestPIsAlwaysAProbabilityAndExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 12))
	for i := range 3000 {
		n1, n2 := 1+rng.IntN(10), 1+rng.IntN(10)
		levels := 2 + rng.IntN(6)
		a, b := make([]float64, n1), make([]float64, n2)
		for j := range a {
			a[j] = float64(rng.IntN(levels))
		}
		for j := range b {
			b[j] = float64(rng.IntN(levels))
		}
		got := CompareContinuous(a, b, 0.05).P
		if !(got > 0 && got <= 1) {
			t.Errorf("case %d: CompareContinuous(%v, %v).P = %v, want a value in (0, 1]", i, a, b, got)
			continue
		}
		want := permutationP(t, a, b)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
			t.Errorf("case %d: CompareContinuous(%v, %v).P mismatch (-want +got):\n%s", i, a, b, diff)
		}
	}
}

// TestUTestNormalApproximationMatchesR stops the large-sample path from
// losing its tail to rounding: go-moremath computes the upper tail as
// 1 - Φ(z), which is exactly 0 once z passes about 8.3, so 51 values all
// above 51 others got p = 0. Each want is R 4.2's
// wilcox.test(a, b, exact = FALSE, correct = TRUE)$p.value (normal
// approximation with tie and continuity correction, the one the package uses
// above the exact limits), printed by testdata/utest_reference.R.
func TestUTestNormalApproximationMatchesR(t *testing.T) {
	seq := func(lo, hi float64) []float64 {
		var xs []float64
		for x := lo; x <= hi; x++ {
			xs = append(xs, x)
		}
		return xs
	}
	rep := func(each int, vs ...float64) []float64 {
		var xs []float64
		for _, v := range vs {
			for range each {
				xs = append(xs, v)
			}
		}
		return xs
	}
	tests := []struct {
		name string
		a, b []float64
		want float64
	}{
		{
			// wilcox.test(100:150, 0:50, ...): no ties, 51 per side.
			name: "51-above-51-no-ties",
			a:    seq(100, 150),
			b:    seq(0, 50),
			want: 3.303681502e-18,
		},
		{
			name: "51-below-51-no-ties",
			a:    seq(0, 50),
			b:    seq(100, 150),
			want: 3.303681502e-18,
		},
		{
			// wilcox.test(rep(c(10,11,12), each=10), rep(1:4, each=10), ...)
			name: "30-above-40-with-ties",
			a:    rep(10, 10, 11, 12),
			b:    rep(10, 1, 2, 3, 4),
			want: 6.586652034e-13,
		},
		{
			name: "300-below-300-no-ties",
			a:    seq(1, 300),
			b:    seq(1001, 1300),
			want: 1.054964149e-99,
		},
		{
			name: "30-vs-30-small-integers",
			a: []float64{3, 4, 4, 5, 5, 5, 6, 6, 7, 3, 4, 5, 5, 6, 7, 7, 4, 3, 5, 6, 5, 4, 6, 7, 5,
				4, 3, 5, 6, 4},
			b: []float64{4, 5, 5, 6, 6, 7, 7, 7, 5, 6, 8, 6, 5, 7, 6, 4, 6, 7, 8, 5, 6, 7, 5, 6, 7,
				6, 5, 8, 6, 7},
			want: 0.0009996459801,
		},
		{
			// One side above the exact limit for ties is enough to leave it.
			name: "26-vs-16-small-integers",
			a: []float64{3, 4, 4, 5, 5, 5, 6, 6, 7, 3, 4, 5, 5, 6, 7, 7, 4, 3, 5, 6, 5, 4, 6, 7, 5,
				4},
			b:    []float64{4, 5, 5, 6, 6, 7, 7, 7, 5, 6, 8, 6, 5, 7, 6, 4},
			want: 0.04620512545,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareContinuous(tt.a, tt.b, 0.05)
			// R prints ten significant digits.
			if diff := cmp.Diff(tt.want, got.P, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("P mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUTestWithoutTiesNeverRoundsAboveOne stops a p of 1.0000000000000004:
// without ties the exact two-sided p sums half of a symmetric distribution
// and doubles it, and the sum can round above one half.
func TestUTestWithoutTiesNeverRoundsAboveOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 13))
	for n1 := 1; n1 <= 50; n1 += 2 {
		for n2 := n1; n2 <= 50; n2 += 4 {
			for range 3 {
				perm := rng.Perm(n1 + n2)
				a, b := make([]float64, n1), make([]float64, n2)
				for j := range a {
					a[j] = float64(perm[j])
				}
				for j := range b {
					b[j] = float64(perm[n1+j])
				}
				if p := CompareContinuous(a, b, 0.05).P; !(p > 0 && p <= 1) {
					t.Errorf("%d vs %d: P = %v, want a value in (0, 1]", n1, n2, p)
				}
			}
		}
	}
}

// BenchmarkUTestExactWithTies measures the exact tied path at its limit, 25
// values per side, with few and with many tie groups.
func BenchmarkUTestExactWithTies(b *testing.B) {
	for _, levels := range []int{3, 40} {
		b.Run(fmt.Sprintf("levels=%d", levels), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x, y := make([]float64, 25), make([]float64, 25)
			for i := range x {
				x[i], y[i] = float64(rng.IntN(levels)), float64(rng.IntN(levels))
			}
			b.ReportAllocs()
			for b.Loop() {
				if p, _ := uTest(x, y); math.IsNaN(p) {
					b.Fatal("NaN p")
				}
			}
		})
	}
}

// pooledTieGroups is the definition the merge walk must match: pool both
// samples, sort the pool, and cut it into runs of equal values.
func pooledTieGroups(a, b []float64) []tieGroup {
	type labelled struct {
		v     float64
		fromA bool
	}
	var pool []labelled
	for _, v := range a {
		pool = append(pool, labelled{v, true})
	}
	for _, v := range b {
		pool = append(pool, labelled{v, false})
	}
	slices.SortStableFunc(pool, func(x, y labelled) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	var groups []tieGroup
	for i := 0; i < len(pool); {
		g := tieGroup{}
		j := i
		for ; j < len(pool) && pool[j].v == pool[i].v; j++ {
			if pool[j].fromA {
				g.fromA++
			}
		}
		g.size, g.twoRank = j-i, i+1+j
		groups = append(groups, g)
		i = j
	}
	return groups
}

// The merge of two sorted sides finds the same runs, sizes and mid-ranks as
// pooling and sorting them, with ties within and across sides, signed
// zeros, and an empty side.
func TestMergedTieGroupsMatchThePooledDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cases := [][2][]float64{
		{{0, 0, 1}, {1, 2, 2}},
		{{math.Copysign(0, -1), 3}, {0, 3, 3}},
		{{}, {1, 1, 2}},
		{{5}, {}},
	}
	for range 200 {
		a, b := make([]float64, rng.IntN(30)), make([]float64, rng.IntN(30))
		levels := 1 + rng.IntN(12)
		for i := range a {
			a[i] = float64(rng.IntN(levels))
		}
		for i := range b {
			b[i] = float64(rng.IntN(levels))
		}
		cases = append(cases, [2][]float64{a, b})
	}
	for _, c := range cases {
		a, b := slices.Sorted(slices.Values(c[0])), slices.Sorted(slices.Values(c[1]))
		if got, want := tieGroups(tally(a), tally(b)), pooledTieGroups(c[0], c[1]); !slices.Equal(got, want) {
			t.Fatalf("%v vs %v: merged groups %v, pooled %v", c[0], c[1], got, want)
		}
	}
}

// Past the exact limits the smallest reachable p is computed without
// building the samples; it must be what the test gives two samples that do
// not overlap.
func TestTheClosedFormSmallestPIsTheTestsOwn(t *testing.T) {
	for _, n := range [][2]int{{51, 3}, {3, 51}, {60, 60}, {1, 400}, {1000, 999}} {
		a, b := make([]float64, n[0]), make([]float64, n[1])
		for i := range a {
			a[i] = float64(i)
		}
		for i := range b {
			b[i] = float64(n[0] + i)
		}
		want, _ := uTest(a, b)
		if got := uTestMinP(n[0], n[1]); got != want {
			t.Errorf("%d vs %d: uTestMinP %v, uTest of non-overlapping samples %v", n[0], n[1], got, want)
		}
	}
}
