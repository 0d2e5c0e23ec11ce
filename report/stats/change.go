package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The change's interval (Comparison.ChangeLo, ChangeHi) is B − A at level
// 1 − alpha, from the method that matches the comparison's test, so that an
// interval and its p-value tell one story:
//
//   - Mann–Whitney U: the Hodges–Lehmann shift, the median of every
//     difference b − a, with the distribution-free interval that inverts the
//     U test (Moses: the k-th smallest and k-th largest of those
//     differences, k from U's normal approximation). A shift is estimated
//     whatever the spread; too few values give an unbounded end (±Inf).
//   - McNemar (paired): exact bounds on the shares of pairs that changed
//     each way, combined (pairedInterval): conservative next to the exact
//     McNemar test, which conditions on how many pairs changed.
//   - Fisher (unpaired): Newcombe's hybrid score interval, from each side's
//     Wilson interval.
//
// Rate differences stay inside [−1, 1].

// shiftInterval returns the Hodges–Lehmann estimate of the shift b − a and
// its interval at level 1 − alpha; ta and tb are the two samples tallied,
// neither empty.
func shiftInterval(ta, tb tallied, alpha float64) (est, lo, hi float64) {
	n1, n2 := float64(ta.n()), float64(tb.n())
	total := ta.n() * tb.n()
	// The median of the differences: the k-th, or the mean of the k-th and
	// the next when there is an even number of them.
	k1 := (total + 1) / 2
	lower := ta.kthDifference(tb, k1)
	upper := lower
	if k2 := total/2 + 1; k2 > k1 && ta.countAtMost(tb, lower) < k2 {
		upper = smallestAbove(ta.v, tb.v, lower, tb.v[len(tb.v)-1]-ta.v[0])
	}
	est = (lower + upper) / 2
	if !validAlpha(alpha) {
		return est, math.NaN(), math.NaN()
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	k := int(math.Floor(n1*n2/2 - z*math.Sqrt(n1*n2*(n1+n2+1)/12)))
	if k < 1 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, ta.kthDifference(tb, k), ta.kthDifference(tb, total-k+1)
}

// tallied is a sorted sample as its distinct values, ascending, each with
// how many values from it on are at least it (atLeast[i] counts the values
// >= v[i]). Counting the differences over distinct values gives the same
// counts as over the values, at the cost of the distinct ones: a metric of
// whole tokens or turns repeats a few thousand values a million times.
type tallied struct {
	v       []float64
	atLeast []int
}

// tally returns sorted xs as a tallied sample.
func tally(xs []float64) tallied {
	d := 0
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			d++
		}
	}
	t := tallied{v: make([]float64, 0, d), atLeast: make([]int, 0, d)}
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			t.v = append(t.v, x)
			t.atLeast = append(t.atLeast, len(xs)-i)
		}
	}
	return t
}

// n is how many values t stands for.
func (t tallied) n() int {
	if len(t.atLeast) == 0 {
		return 0
	}
	return t.atLeast[0]
}

// count is how many values the i-th distinct value stands for.
func (t tallied) count(i int) int {
	if i+1 < len(t.atLeast) {
		return t.atLeast[i] - t.atLeast[i+1]
	}
	return t.atLeast[i]
}

// kthDifference is the k-th smallest (from 1) of the differences b[j] −
// a[i] of two sorted samples, without forming them.
func kthDifference(a, b []float64, k int) float64 { return tally(a).kthDifference(tally(b), k) }

// maxList bounds the differences the bisection lists once few enough lie
// between its bounds (16 bytes each).
const maxList = 1 << 16

// listAt is how many differences kthDifference lists rather than halve the
// values again: about what a few more steps of the bisection would cost
// (each is a merge over the distinct values), at most maxList.
func (t tallied) listAt(b tallied) int { return min(4*(len(t.v)+len(b.v)), maxList) }

// kthDifference is the k-th smallest (from 1) of the differences b[j] −
// a[i] (a is t): a bisection on the value, each step counting the
// differences at or below it in one merge, until few enough lie between
// the bounds to list them.
func (t tallied) kthDifference(b tallied, k int) float64 {
	a := t.v
	lo, hi := b.v[0]-a[len(a)-1], b.v[len(b.v)-1]-a[0]
	below := t.countAtMost(b, lo)
	if below >= k {
		return lo
	}
	// below = countAtMost(lo) < k <= above = countAtMost(hi).
	above, listAt := t.n()*b.n(), t.listAt(b)
	// Halving the values closes in on any difference in some 60 steps
	// unless the differences span hundreds of binades; past 200 steps the
	// bisection halves the floats between the bounds instead, which takes
	// at most 64 more.
	for step := range 200 + 64 {
		if above-below <= listAt {
			return t.kthBetween(b, lo, hi, k-below, above-below)
		}
		mid := lo + (hi-lo)/2
		if step >= 200 {
			mid = midFloat(lo, hi)
		}
		if mid <= lo || mid >= hi {
			break
		}
		c := t.countAtMost(b, mid)
		stalled := c == below || c == above
		if c >= k {
			hi, above = mid, c
		} else {
			lo, below = mid, c
		}
		if stalled {
			// Half the values held no difference. Many equal differences
			// (an A/A comparison's zeros) can keep the count from ever
			// falling to listAt while the bounds close in on them for
			// hundreds of steps: try the smallest difference above lo.
			s := smallestAbove(a, b.v, lo, hi)
			c := t.countAtMost(b, s)
			if c >= k {
				return s
			}
			lo, below = s, c
		}
	}
	// lo and hi are neighbouring floats: the k-th difference is hi's value.
	return smallestAbove(a, b.v, lo, hi)
}

// midFloat is the float halfway between lo < hi in the order of all
// floats, not in value: halving it reaches neighbouring floats in 64 steps
// from anywhere.
func midFloat(lo, hi float64) float64 {
	key := func(x float64) uint64 { // the floats' order, as unsigned integers
		b := math.Float64bits(x)
		if b>>63 == 1 {
			return ^b
		}
		return b | 1<<63
	}
	m := key(lo) + (key(hi)-key(lo))/2
	if m>>63 == 1 {
		return math.Float64frombits(m &^ (1 << 63))
	}
	return math.Float64frombits(^m)
}

// kthBetween is the r-th smallest (from 1) of the n differences b[j] −
// a[i] in (lo, hi] (a is t): they are listed, one per pair of distinct
// values with its count, and the r-th picked by a selection.
func (t tallied) kthBetween(b tallied, lo, hi float64, r, n int) float64 {
	ds := make([]countedDiff, 0, min(n, len(t.v)*len(b.v)))
	a := t.v
	// For each b[j] (ascending), the a[i] with lo < b[j] − a[i] <= hi are
	// a[from:to], and both ends only move up.
	from, to := 0, 0
	for j, bj := range b.v {
		for from < len(a) && bj-a[from] > hi {
			from++
		}
		for to < len(a) && bj-a[to] > lo {
			to++
		}
		for i := from; i < to; i++ {
			ds = append(ds, countedDiff{bj - a[i], b.count(j) * t.count(i)})
		}
	}
	return selectCounted(ds, r)
}

// countedDiff is a difference that n pairs of values have.
type countedDiff struct {
	v float64
	n int
}

// selectCounted returns the r-th smallest (from 1) of ds's values, each
// counted n times, and reorders ds: a quickselect that splits at a value
// into those below it, at it and above it, and goes on in the part that
// holds the r-th (pivots from a fixed-seed generator, so any order of ds
// takes linear time in expectation).
func selectCounted(ds []countedDiff, r int) float64 {
	seed := uint64(0x9E3779B97F4A7C15)
	for len(ds) > 1 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		pivot := ds[seed%uint64(len(ds))].v
		// ds[:lt] < pivot, ds[lt:i] == pivot, ds[gt:] > pivot.
		lt, i, gt := 0, 0, len(ds)
		below, at := 0, 0
		for i < gt {
			switch d := ds[i]; {
			case d.v < pivot:
				below += d.n
				ds[lt], ds[i] = ds[i], ds[lt]
				lt++
				i++
			case d.v > pivot:
				gt--
				ds[gt], ds[i] = ds[i], ds[gt]
			default:
				at += d.n
				i++
			}
		}
		switch {
		case r <= below:
			ds = ds[:lt]
		case r <= below+at:
			return pivot
		default:
			r -= below + at
			ds = ds[gt:]
		}
	}
	return ds[0].v
}

// smallestAbove is the smallest difference b[j] − a[i] above lo (and at
// most hi): the exact value the bisection closed in on, not a rounding of
// it.
func smallestAbove(a, b []float64, lo, hi float64) float64 {
	best, i := hi, 0
	// For each b[j] (ascending), the largest a[i] with b[j] − a[i] > lo
	// only moves up.
	for _, bj := range b {
		for i < len(a) && bj-a[i] > lo {
			i++
		}
		// a[i-1] is the largest a with bj − a > lo.
		if i > 0 {
			if d := bj - a[i-1]; d < best {
				best = d
			}
		}
	}
	return best
}

// countAtMost counts the pairs with b[j] − a[i] <= t (a is t's values).
func (t tallied) countAtMost(b tallied, at float64) int {
	n, i := 0, 0
	a := t.v
	// For each b[j] (ascending), the a[i] with b[j] − a[i] <= at form a
	// suffix of a that only grows. The difference is computed as the
	// differences themselves are (b[j] − a[i], never a[i] < b[j] − at),
	// so a count never disagrees with the values by a rounding.
	for j, bj := range b.v {
		for i < len(a) && bj-a[i] > at {
			i++
		}
		if i == len(a) {
			break
		}
		n += b.count(j) * t.atLeast[i]
	}
	return n
}

// pairedInterval is the interval of pB − pA over n pairs of which onlyA
// passed only on A and onlyB only on B. The change is πB − πA, the shares
// of pairs that change outcome each way; each share gets its exact
// (Clopper–Pearson) bounds at alpha/4 a tail, and the change's bounds
// combine them — lo = πB's lower − πA's upper, hi = πB's upper − πA's
// lower — so that the four tails together err at most alpha. It does not
// condition on how many pairs changed, so one changed pair of ten does not
// pin the change at −10pp: how often pairs change is uncertain too.
func pairedInterval(onlyA, onlyB, n int, alpha float64) (lo, hi float64) {
	if n == 0 || !validAlpha(alpha) {
		return math.NaN(), math.NaN()
	}
	aLo, aHi := clopperPearson(onlyA, n, alpha/2)
	bLo, bHi := clopperPearson(onlyB, n, alpha/2)
	return clamp(bLo-aHi, -1, 1), clamp(bHi-aLo, -1, 1)
}

// clopperPearson is the exact binomial interval of x successes in n.
func clopperPearson(x, n int, alpha float64) (lo, hi float64) {
	if x > 0 {
		lo = distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(alpha / 2)
	}
	hi = 1
	if x < n {
		hi = distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}

// newcombe is Newcombe's (1998) hybrid score interval of pB − pA from each
// side's rate and Wilson interval.
func newcombe(a, b Summary) (lo, hi float64) {
	d := b.Center - a.Center
	lo = d - math.Sqrt(sq(b.Center-b.Lo)+sq(a.Hi-a.Center))
	hi = d + math.Sqrt(sq(b.Hi-b.Center)+sq(a.Center-a.Lo))
	return clamp(lo, -1, 1), clamp(hi, -1, 1)
}

func sq(x float64) float64 { return x * x }

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
