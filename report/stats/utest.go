package stats

import (
	"math"
	"slices"
	"sync"

	"golang.org/x/perf/benchmath"
)

// Sample sizes up to which the U test is exact: without ties at most
// exactLimit values per side, with ties at most exactTiesLimit. They are
// go-moremath's MannWhitneyExactLimit and MannWhitneyTiesExactLimit, so the
// exact/approximate boundary is where benchstat has it.
const (
	exactLimit     = 50
	exactTiesLimit = 25
)

// errSamplesEqual is go-moremath's ErrSamplesEqual text, kept so the warning
// reads the same whichever path found it.
const errSamplesEqual = "all samples are equal"

// uTest runs the two-sided Mann–Whitney U test on a and b (finite, not
// sorted, not modified) and returns its p-value, in (0, 1], and warnings.
//
// Without ties, small samples go through benchmath (go-moremath's exact U
// distribution, which is right there). With ties they do not:
// go-moremath's exact tied path returns 2·P(U ≤ min(U1, U2)) computed on
// U1's distribution, which assumes that distribution is symmetric about
// n1·n2/2. Mid-ranks make it asymmetric (the mid-ranks of 0 0 0 1 are
// 2 2 2 4), so doubling one tail can exceed 1 (p = 1.8 for [0] against
// [0 0 0 0 1 0 0 0 0]) and reading U2 off U1's distribution can land below
// its support (p = 0 for 9 values all above 10, with ties on each side).
// Tied samples therefore get the exact conditional distribution of the rank
// sum computed here, and large samples the normal approximation computed
// here, whose tail does not round to 0.
func uTest(a, b []float64) (float64, []string) {
	as, bs := slices.Clone(a), slices.Clone(b)
	slices.Sort(as)
	slices.Sort(bs)
	return uTestSorted(as, bs, tally(as), tally(bs))
}

// uTestSorted is uTest on a and b sorted ascending, with ta and tb their
// tallies. It ranks them by merging the two sides' distinct values, never
// pooling them, in one pass that finds the ties and the rank sum together,
// and holds the tie groups in memory only for the exact tied path, whose
// samples are small.
func uTestSorted(a, b []float64, ta, tb tallied) (float64, []string) {
	r := rankSums(ta, tb)
	if r.groups == 1 {
		return 1, []string{errSamplesEqual}
	}
	n1, n2 := len(a), len(b)
	switch {
	case !r.ties && n1 <= exactLimit && n2 <= exactLimit:
		return benchmathUTest(a, b)
	case r.ties && n1 <= exactTiesLimit && n2 <= exactTiesLimit:
		return exactTiedP(tieGroups(ta, tb), n1, n2), nil
	default:
		return normalTail(r.twoW, r.tieSum, n1, n2), nil
	}
}

// ranked is what the U test needs of the pooled ranks: how many tie
// groups, whether any holds more than one value, twice A's rank sum and the
// tie term Σ(t³−t).
type ranked struct {
	groups int
	ties   bool
	twoW   int
	tieSum float64
}

// rankSums ranks a and b pooled, in one merge of their tie groups.
func rankSums(a, b tallied) ranked {
	var r ranked
	eachTieGroup(a, b, func(g tieGroup) {
		r.groups++
		r.ties = r.ties || g.size > 1
		r.twoW += g.fromA * g.twoRank
		t := float64(g.size)
		r.tieSum += t*t*t - t
	})
	return r
}

// benchmathUTest is the exact U test for samples without ties, through
// benchmath as benchstat runs it.
func benchmathUTest(a, b []float64) (float64, []string) {
	// benchmath's own "too few samples" warning only considers equal sample
	// sizes; we compute the bound for the sizes actually given, so we hand
	// it alpha 1, which switches that warning off and changes nothing else.
	thr := benchmath.Thresholds{CompareAlpha: 1}
	res := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &thr),
		benchmath.NewSample(slices.Clone(b), &thr))
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Error())
	}
	// Without ties U is symmetric, so twice the lower tail is at most 1;
	// go-moremath sums that tail term by term and can land a rounding step
	// above one half (1.0000000000000002 for some 3 vs 3 splits).
	return math.Min(res.P, 1), warnings
}

// tieGroup is a run of equal values in the pooled, sorted samples.
type tieGroup struct {
	size    int // values in the run
	fromA   int // how many of them are from the first sample
	twoRank int // twice their mid-rank, an integer even for an even run
}

// eachTieGroup calls f with each run of equal values of a and b pooled, in
// order: a merge of the two sides' distinct values.
func eachTieGroup(a, b tallied, f func(tieGroup)) {
	i, j, start := 0, 0, 0
	for i < len(a.v) || j < len(b.v) {
		g := tieGroup{}
		switch {
		case j == len(b.v) || i < len(a.v) && a.v[i] < b.v[j]:
			g.fromA, g.size = a.count(i), a.count(i)
			i++
		case i == len(a.v) || b.v[j] < a.v[i]:
			g.size = b.count(j)
			j++
		default: // equal
			g.fromA = a.count(i)
			g.size = g.fromA + b.count(j)
			i, j = i+1, j+1
		}
		// Ranks start+1 … start+size have mean (2·start+size+1)/2.
		g.twoRank = 2*start + g.size + 1
		f(g)
		start += g.size
	}
}

// tieGroups returns the runs of equal values of a and b pooled, in order.
func tieGroups(a, b tallied) []tieGroup {
	var groups []tieGroup
	eachTieGroup(a, b, func(g tieGroup) { groups = append(groups, g) })
	return groups
}

// exactTiedP returns the exact two-sided p-value of the rank-sum test given
// the tie pattern: under the null hypothesis every choice of which n1 of the
// pooled values are A's is equally likely, and p is the share of choices
// whose rank sum lies at least as far from its mean as the observed one,
// P(|W − E W| ≥ |w − E W|) (the definition of R's coin package). The
// distribution is not symmetric with ties, so this is not twice a tail.
//
// The counts come from a dynamic programme over the tie groups: count[j][s]
// is the number of ways to pick j values from the groups seen so far with
// doubled rank sum s, and a group of size t adds k of its values in C(t, k)
// ways. Doubled mid-ranks keep every sum an integer, and every count is at
// most C(n1+n2, n1) ≤ C(50, 25) < 2^53, so the arithmetic is exact.
func exactTiedP(groups []tieGroup, n1, n2 int) float64 {
	n := n1 + n2
	// Count the smaller side: |W − E W| is the same for either side, and
	// fewer values make a smaller table.
	m, picked := n1, func(g tieGroup) int { return g.fromA }
	if n2 < n1 {
		m, picked = n2, func(g tieGroup) int { return g.size - g.fromA }
	}
	centre := m * (n + 1) // twice E W
	observed := 0
	for _, g := range groups {
		observed += picked(g) * g.twoRank
	}
	far := absInt(observed - centre)

	maxSum := 2 * m * n // every doubled rank is at most 2n
	count := make([][]uint64, m+1)
	for j := range count {
		count[j] = make([]uint64, maxSum+1)
	}
	count[0][0] = 1
	// top[j] is the largest sum reachable with j values so far, -1 for none;
	// it bounds the inner loop.
	top := make([]int, m+1)
	for j := range top {
		top[j] = -1
	}
	top[0] = 0
	seen := 0
	for _, g := range groups {
		ways := binomialRow(g.size)
		// Downwards in j, so count[j] is read before this group adds to it
		// (it only adds to count[j+k] from count[j], k ≥ 1).
		for j := min(seen, m); j >= 0; j-- {
			if top[j] < 0 {
				continue
			}
			src := count[j]
			for k := 1; k <= g.size && j+k <= m; k++ {
				dst, shift, w := count[j+k], k*g.twoRank, ways[k]
				for s, c := range src[:top[j]+1] {
					if c != 0 {
						dst[s+shift] += c * w
					}
				}
				top[j+k] = max(top[j+k], top[j]+shift)
			}
		}
		seen += g.size
	}

	var hits, total uint64
	for s, c := range count[m][:top[m]+1] {
		total += c
		if absInt(s-centre) >= far {
			hits += c
		}
	}
	// The observed choice is among the hits, so p > 0, and hits ≤ total.
	return float64(hits) / float64(total)
}

// binomialRow returns C(t, 0) … C(t, t). Each step C(t, k−1)·(t−k+1) is
// divisible by k, and for t ≤ 2·exactTiesLimit no product overflows.
func binomialRow(t int) []uint64 {
	row := make([]uint64, t+1)
	row[0] = 1
	for k := 1; k <= t; k++ {
		row[k] = row[k-1] * uint64(t-k+1) / uint64(k)
	}
	return row
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// normalTail returns the two-sided p-value of the U test from the normal
// approximation with tie and continuity correction, as R's
// wilcox.test(exact = FALSE, correct = TRUE) and go-moremath compute it,
// given twice A's rank sum and the tie term Σ(t³−t) (rankSums). Unlike
// go-moremath it takes the tail as erfc rather than 1 − Φ(z), which rounds
// to 0 once z passes about 8.3; when even erfc underflows (z above about
// 38) it returns the smallest positive float64, because a p-value of 0 is
// impossible for finite samples.
func normalTail(twoW int, tieSum float64, n1, n2 int) float64 {
	nf1, nf2, n := float64(n1), float64(n2), float64(n1+n2)
	u := float64(twoW)/2 - nf1*(nf1+1)/2
	sigma := math.Sqrt(nf1 * nf2 / 12 * ((n + 1) - tieSum/(n*(n-1))))
	// Continuity correction: move |U − E U| half a step towards the centre.
	d := math.Max(0, math.Abs(u-nf1*nf2/2)-0.5)
	p := math.Erfc(d / sigma / math.Sqrt2)
	if p == 0 {
		return math.SmallestNonzeroFloat64
	}
	return math.Min(p, 1)
}

// uTestMinP returns the smallest p-value the U test can report for samples
// of sizes n1 and n2: the one for two samples that do not overlap at all. It
// asks the same function that computes real p-values, so the bound matches
// the test (exact below the limits, normal approximation above).
func uTestMinP(n1, n2 int) float64 {
	if n1 > exactLimit || n2 > exactLimit {
		// Past the exact limits two samples without ties take the normal
		// approximation, whatever their values; A's ranks are 1 … n1.
		return normalTail(n1*(n1+1), 0, n1, n2)
	}
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
