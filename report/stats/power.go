package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Power is the probability at which wfb calls a change detectable: a test
// that finds the change four times in five.
const Power = 0.8

// MaxNeed bounds the sample sizes searched for: a change that needs more
// cells per side than this is out of reach (Need −1).
const MaxNeed = 1_000_000

// maxModelValues bounds the values a shift model keeps: above it, the
// pooled residuals are thinned to this many evenly spaced quantiles, which
// describe the spread as well and keep the search cheap for a million
// cells.
const maxModelValues = 2000

// Sensitivity says how large a change a comparison could detect with the
// samples it has, and how many it would need for a given change.
//
// Both are judged from the observed spread, for the test the comparison
// runs, at alpha and Power:
//
//   - Mann–Whitney U (ShiftSensitivity): the location-shift model, B's
//     values are A's moved by δ. The spread is both sides' values around
//     their own medians, pooled (tied values spread as if rounded); p′(δ) =
//     P(X + δ > X′) over pairs of those residuals, and the power is the
//     normal approximation with U's variance under the shift (Lehmann):
//     Φ((n₁n₂·|p′ − ½| − z₁₋α/₂·σ₀) / σ₁).
//   - Fisher's exact test (RateSensitivity): a change of the rate from A's
//     observed rate p₁ to p₁ ± d, power from the normal approximation with
//     continuity correction (Fleiss), in each direction the rate has room
//     for.
//   - Exact McNemar (PairedSensitivity): the rate moves from A's p₁ to
//     p₁ ± d while a pair's two outcomes stay as strongly tied as in the
//     data (the pairs' odds ratio is kept), which gives the share ψ of
//     pairs that change outcome; power from Connor's approximation,
//     Φ((d·√n − z₁₋α/₂·√ψ) / √(ψ − d²)).
//
// Sample sizes at which the exact tests cannot reach alpha at all are never
// called enough.
type Sensitivity struct {
	// Detectable is the smallest change the test finds with probability
	// Power at the current sample sizes, in the unit of B − A (a rate
	// difference in [0, 1] for rates). It is +Inf when no change could be
	// found that often, 0 when any change could (no spread at all), and NaN
	// when it cannot be judged (a side has no values).
	Detectable float64
	// Need is the sample size per side (pairs, for a paired test) at which
	// the asked change is found with probability Power: 0 when no change
	// was asked or it cannot be judged, −1 when no size up to MaxNeed is
	// enough (or the change does not fit, a rate beyond 0 or 1).
	Need int
}

// zFor returns the standard normal quantile at p.
func zFor(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// ShiftSensitivity is the Sensitivity of the Mann–Whitney U test between
// a and b (NaN and ±Inf skipped) for a location shift; target is the shift
// asked for, in the metric's unit, NaN for none.
func ShiftSensitivity(a, b []float64, alpha, power, target float64) Sensitivity {
	return ShiftSensitivityStrata([][]float64{a}, [][]float64{b}, alpha, power, target)
}

// ShiftSensitivityStrata is ShiftSensitivity for samples made of strata in
// fixed shares, a bench's tasks: a[s] and b[s] are stratum s's values on
// each side. The U test pools them, but a sample whose tasks are fixed
// varies less than one drawn from their mixture: the variance of U under
// the shift counts only the spread within each stratum.
func ShiftSensitivityStrata(a, b [][]float64, alpha, power, target float64) Sensitivity {
	return ShiftSensitivitySamples(NewSample(a...), NewSample(b...), alpha, power, target)
}

// ShiftSensitivitySamples is ShiftSensitivityStrata over two Samples, each
// made of its strata: the model reads the sorted values the comparison
// (CompareSamples) ranked, and sorts nothing.
func ShiftSensitivitySamples(a, b *Sample, alpha, power, target float64) Sensitivity {
	n1, n2 := a.N(), b.N()
	if n1 == 0 || n2 == 0 || !validAlpha(alpha) {
		return Sensitivity{Detectable: math.NaN()}
	}
	m := newShiftModel(a, b)
	s := Sensitivity{Detectable: math.Inf(1)}
	if uTestMinP(n1, n2) <= alpha {
		s.Detectable = smallestChange(func(d float64) float64 { return m.shiftPower(d, n1, n2, alpha) }, m.span(), power)
	}
	if !math.IsNaN(target) {
		least := uTestNeedPerSide(alpha)
		s.Need = smallestN(func(n int) float64 {
			if n < least {
				return 0
			}
			return m.shiftPower(math.Abs(target), n, n, alpha)
		}, power)
	}
	return s
}

// shiftModel is a continuous metric's spread: both sides' values minus
// their own median, pooled and sorted, each with its stratum.
type shiftModel struct {
	e      []float64
	strata []int
}

// newShiftModel builds the model from each side's Sample.
//
// The residuals are ordered by value, ties in their input order (side A's
// strata in order, then B's), and thinned to maxModelValues evenly spaced
// ranks. Each side's residuals come sorted from its sorted values (x − med
// keeps the order), so the pooled order is a merge, walked without being
// stored; the residual at a rank is then the one of its value whose place
// among the residuals of that value (in input order) is the rank's place in
// its tie group — found in one pass over the input, with no sort of the
// residuals and their strata.
func newShiftModel(a, b *Sample) shiftModel {
	meds := [2]float64{a.median(), b.median()}
	n := a.N() + b.N()
	slots := min(n, maxModelValues)
	rankOf := func(slot int) int {
		if n > maxModelValues {
			return int((float64(slot) + 0.5) * float64(n) / maxModelValues)
		}
		return slot
	}
	// values lists the residuals some rank falls on, ascending; the k-th
	// has the picks picks[first[k]:first[k+1]]: the places within its tie
	// group that are wanted, ascending, and the model slot of each.
	type pick struct{ offset, slot int }
	var values []float64
	picks := make([]pick, 0, slots)
	first := make([]int, 0, slots+1)
	// Walk the merge of the two sides' residuals up to the last rank wanted.
	as, bs := a.sorted, b.sorted
	i, j, start, slot, next := 0, 0, 0, 0, rankOf(0)
	prev := 0.0
	for p := 0; slot < slots; p++ {
		var v float64
		if j < len(bs) && (i == len(as) || bs[j]-meds[1] < as[i]-meds[0]) {
			v = bs[j] - meds[1]
			j++
		} else {
			v = as[i] - meds[0]
			i++
		}
		if p == 0 || v != prev {
			start, prev = p, v
		}
		for ; slot < slots && next == p; slot++ {
			if k := len(values); k == 0 || values[k-1] != v {
				values = append(values, v)
				first = append(first, len(picks))
			}
			picks = append(picks, pick{p - start, slot})
			if slot+1 < slots {
				next = rankOf(slot + 1)
			}
		}
	}
	first = append(first, len(picks))
	seen := make([]int, len(values))         // residuals of each value met so far, in input order
	due := slices.Clone(first[:len(values)]) // each value's next pick to hand out
	find := newValueIndex(values)
	m := shiftModel{e: make([]float64, slots), strata: make([]int, slots)}
	for side, s := range [2]*Sample{a, b} {
		for st, xs := range s.strata {
			for _, x := range xs {
				v := x - meds[side]
				lo := find.index(v)
				if lo < 0 {
					continue
				}
				// Hand out the picks at this place in the tie group.
				for due[lo] < first[lo+1] && picks[due[lo]].offset == seen[lo] {
					k := picks[due[lo]].slot
					m.e[k], m.strata[k] = v, st
					due[lo]++
				}
				seen[lo]++
			}
		}
	}
	spreadTies(m.e)
	return m
}

// valueIndex finds a value among a few thousand distinct ones: an
// open-addressing hash table on the value's bits, which the model's pass
// asks once for every residual (a binary search there cost most of the
// model's time).
type valueIndex struct {
	values []float64
	slots  []int32 // index into values + 1; 0 is an empty slot
	shift  uint
}

// newValueIndex indexes distinct values, none NaN.
func newValueIndex(values []float64) valueIndex {
	bits := uint(1)
	for 1<<bits < 2*len(values) {
		bits++
	}
	x := valueIndex{values: values, slots: make([]int32, 1<<bits), shift: 64 - bits}
	for i, v := range values {
		h := x.hash(v)
		for x.slots[h] != 0 {
			h = (h + 1) & (len(x.slots) - 1)
		}
		x.slots[h] = int32(i + 1)
	}
	return x
}

// hash is the slot v's probe starts at. Both zeros hash alike, since they
// are equal.
func (x valueIndex) hash(v float64) int {
	if v == 0 {
		v = 0
	}
	return int(math.Float64bits(v) * 0x9E3779B97F4A7C15 >> x.shift)
}

// index returns the index of v among the values, or −1.
func (x valueIndex) index(v float64) int {
	for h := x.hash(v); ; h = (h + 1) & (len(x.slots) - 1) {
		i := x.slots[h]
		if i == 0 {
			return -1
		}
		if x.values[i-1] == v {
			return int(i - 1)
		}
	}
}

// spreadTies spreads each group of tied values in sorted e evenly over the
// interval halfway to its neighbours, as if the tie were a rounding of a
// continuous quantity (turns, whole tokens). Without it, shifting a tied
// sample by any ε breaks every tie the same way, and a shift of 0.01 turns
// would count as detectable.
func spreadTies(e []float64) {
	type group struct{ lo, hi int } // e[lo:hi] are equal
	var gs []group
	for i := 0; i < len(e); {
		j := i + 1
		for j < len(e) && e[j] == e[i] {
			j++
		}
		gs = append(gs, group{i, j})
		i = j
	}
	if len(gs) < 2 {
		return // no spread at all: nothing to spread a tie over
	}
	v := func(g int) float64 { return e[gs[g].lo] }
	below := make([]float64, len(gs))
	above := make([]float64, len(gs))
	for g := range gs {
		if g > 0 {
			below[g] = (v(g) - v(g-1)) / 2
		}
		if g < len(gs)-1 {
			above[g] = (v(g+1) - v(g)) / 2
		}
	}
	below[0], above[len(gs)-1] = above[0], below[len(gs)-1]
	for g, gr := range gs {
		k := gr.hi - gr.lo
		if k == 1 {
			continue
		}
		lo, w := v(g)-below[g], below[g]+above[g]
		for i := range k {
			e[gr.lo+i] = lo + (float64(i)+0.5)*w/float64(k)
		}
	}
}

// span is a shift beyond which every residual moved by it exceeds every
// other: p′ is 1 there.
func (m shiftModel) span() float64 {
	w := m.e[len(m.e)-1] - m.e[0]
	return w + math.Max(w, 1)*1e-9
}

// superiority returns, for a shift δ ≥ 0 of B's values, p′ = P(X < Y)
// over the distinct pairs of residuals (ties count one half), and the two
// variances U's variance needs under that shift: v1 of P(Y > x) over A's
// values x and v2 of P(X < y) over B's values y (Lehmann's P(X < Y, X <
// Y′) − p′² and P(X < Y, X′ < Y) − p′²), each within the strata. One sweep
// each way: the residuals moved by δ are as sorted as the residuals.
func (m shiftModel) superiority(delta float64) (p, v1, v2 float64) {
	n := len(m.e)
	if n < 2 {
		return 0.5, 0, 0
	}
	fn := float64(n)
	// below and upto count residuals < t and <= t as t sweeps upwards.
	sweep := func(shift float64, each func(i, below, upto int)) {
		below, upto := 0, 0
		for i, x := range m.e {
			t := x + shift
			for below < n && m.e[below] < t {
				below++
			}
			upto = max(upto, below)
			for upto < n && m.e[upto] <= t {
				upto++
			}
			each(i, below, upto)
		}
	}
	total := 0.0
	g2 := newWithin(m)
	sweep(delta, func(i, below, upto int) {
		f := float64(below) + float64(upto-below)/2 // A's values below this B value
		total += f
		g2.add(i, f/fn)
	})
	g1 := newWithin(m)
	sweep(-delta, func(i, below, upto int) {
		g1.add(i, (fn-float64(upto)+float64(upto-below)/2)/fn) // B's values above this A value
	})
	// Each residual met itself: below it when δ > 0, tied when δ = 0.
	if delta > 0 {
		total -= fn
	} else {
		total -= fn / 2
	}
	return total / (fn * (fn - 1)), g1.variance(), g2.variance()
}

// within accumulates values by stratum for their pooled within-stratum
// variance, in stratum order so that the sum is the same every time.
type within struct {
	strata         []int
	n              []float64
	sum, sumSquare []float64
}

func newWithin(m shiftModel) *within {
	k := slices.Max(m.strata) + 1
	return &within{strata: m.strata, n: make([]float64, k), sum: make([]float64, k), sumSquare: make([]float64, k)}
}

func (w *within) add(i int, x float64) {
	s := w.strata[i]
	w.n[s]++
	w.sum[s] += x
	w.sumSquare[s] += x * x
}

// variance is Σ over strata of the squared deviations from the stratum's
// mean, over all values.
func (w *within) variance() float64 {
	total, ss := 0.0, 0.0
	for s, n := range w.n {
		if n > 0 {
			total += n
			ss += w.sumSquare[s] - w.sum[s]*w.sum[s]/n
		}
	}
	return math.Max(ss/total, 0)
}

// shiftPower is the power of the two-sided U test at alpha for n1 and n2
// values when B's are shifted by delta: U's mean and variance under the
// shift (Lehmann's) against its null distribution, normal. Under the
// shift the variance shrinks as the samples separate, which the null
// variance alone (Noether's formula) misses at small n.
func (m shiftModel) shiftPower(delta float64, n1, n2 int, alpha float64) float64 {
	p, va, vb := m.superiority(delta)
	f1, f2 := float64(n1), float64(n2)
	sd0 := math.Sqrt(f1 * f2 * (f1 + f2 + 1) / 12)
	v1 := f1 * f2 * (p*(1-p) + (f2-1)*va + (f1-1)*vb)
	num := f1*f2*math.Abs(p-0.5) - zFor(1-alpha/2)*sd0
	if v1 <= 0 {
		if num > 0 {
			return 1
		}
		return 0
	}
	return distuv.UnitNormal.CDF(num / math.Sqrt(v1))
}

// RateSensitivity is the Sensitivity of Fisher's exact test between aPass
// of aN and bN attempts, for a change of the rate from A's by target (a
// rate difference, NaN for none).
func RateSensitivity(aPass, aN, bN int, alpha, power, target float64) Sensitivity {
	if aN <= 0 || bN <= 0 || aPass < 0 || aPass > aN || !validAlpha(alpha) {
		return Sensitivity{Detectable: math.NaN()}
	}
	p1 := float64(aPass) / float64(aN)
	reachable, least := fisherExact(aN, aN, 0, bN) <= alpha, fisherNeedPerSide(alpha)
	now := func(d float64) float64 {
		if !reachable {
			return 0
		}
		return fleissPower(p1, p1+d, aN, bN, alpha)
	}
	at := func(d float64, n int) float64 {
		if n < least {
			return 0
		}
		return fleissPower(p1, p1+d, n, n, alpha)
	}
	return rateSensitivity(p1, 1, target, power, now, at)
}

// rateSensitivity searches both directions of a rate change of at most
// most: now is the power of a signed change d at the current sizes, at the
// power at n per side. The detectable change is the larger of the
// directions the rate has room to detect a change in; the need the larger
// of the directions the target fits in.
func rateSensitivity(p1, most, target, power float64, now func(d float64) float64, at func(d float64, n int) float64) Sensitivity {
	s := Sensitivity{Detectable: math.Inf(1)}
	found := false
	for _, dir := range []float64{1, -1} {
		room := p1
		if dir > 0 {
			room = 1 - p1
		}
		room = math.Min(room, most)
		if room <= 0 {
			continue
		}
		d := smallestChange(func(d float64) float64 { return now(dir * d) }, room, power)
		if !math.IsInf(d, 1) && (!found || d > s.Detectable) {
			s.Detectable, found = d, true
		}
	}
	if math.IsNaN(target) {
		return s
	}
	s.Need = -1
	for _, dir := range []float64{1, -1} {
		p2 := p1 + dir*math.Abs(target)
		if target == 0 || p2 < 0 || p2 > 1 || math.Abs(target) > most {
			continue
		}
		n := smallestN(func(n int) float64 { return at(dir*math.Abs(target), n) }, power)
		if n < 0 {
			s.Need = -1
			break
		}
		s.Need = max(s.Need, n)
	}
	return s
}

// fleissPower is the power of a two-sided test of two proportions at
// alpha, p1 against p2 with n1 and n2 attempts, by the normal approximation
// with continuity correction, which tracks Fisher's exact test.
func fleissPower(p1, p2 float64, n1, n2 int, alpha float64) float64 {
	f1, f2 := float64(n1), float64(n2)
	pbar := (f1*p1 + f2*p2) / (f1 + f2)
	se0 := math.Sqrt(pbar * (1 - pbar) * (1/f1 + 1/f2))
	se1 := math.Sqrt(p1*(1-p1)/f1 + p2*(1-p2)/f2)
	num := math.Abs(p2-p1) - (1/f1+1/f2)/2 - zFor(1-alpha/2)*se0
	if se1 == 0 {
		if num > 0 {
			return 1
		}
		return 0
	}
	return distuv.UnitNormal.CDF(num / se1)
}

// PairedSensitivity is the Sensitivity of the exact McNemar test over
// pairs, for a change of the pass rate by target (a rate difference, NaN
// for none).
func PairedSensitivity(pairs []Pair, alpha, power, target float64) Sensitivity {
	n := len(pairs)
	if n == 0 || !validAlpha(alpha) {
		return Sensitivity{Detectable: math.NaN()}
	}
	var both, onlyA, onlyB, neither float64
	for _, p := range pairs {
		switch {
		case p.A && p.B:
			both++
		case p.A:
			onlyA++
		case p.B:
			onlyB++
		default:
			neither++
		}
	}
	p1 := (both + onlyA) / float64(n)
	// How strongly a pair's outcomes go together, as an odds ratio
	// (Haldane's half added to each count, so that a table with an empty
	// cell still has one): it is kept when the rate moves.
	theta := (both + 0.5) * (neither + 0.5) / ((onlyA + 0.5) * (onlyB + 0.5))
	need := 1
	for mcNemarExact(need, 0) > alpha {
		need++
	}
	pw := func(d float64, n int) float64 {
		if n < need {
			return 0
		}
		p2 := p1 + d
		p11 := jointPass(p1, p2, theta)
		return connorPower((p1-p11)+(p2-p11), math.Abs(d), n, alpha)
	}
	return rateSensitivity(p1, 1, target, power, func(d float64) float64 { return pw(d, n) }, pw)
}

// jointPass returns the share of pairs passing on both sides when side A
// passes p1 of them, side B p2, and the odds ratio of the 2×2 table is
// theta (Plackett's distribution).
func jointPass(p1, p2, theta float64) float64 {
	lo, hi := math.Max(0, p1+p2-1), math.Min(p1, p2)
	if math.Abs(theta-1) < 1e-9 {
		return p1 * p2
	}
	a := 1 + (p1+p2)*(theta-1)
	p11 := (a - math.Sqrt(a*a-4*theta*(theta-1)*p1*p2)) / (2 * (theta - 1))
	return math.Min(math.Max(p11, lo), hi)
}

// connorPower is the power of McNemar's test at alpha over n pairs when a
// share psi of pairs changes outcome, d more of them one way than the
// other (Connor's approximation). Simulated through the exact test it is
// on target without a continuity correction (power_test.go).
func connorPower(psi, d float64, n int, alpha float64) float64 {
	if psi > 1 || d == 0 {
		return 0
	}
	v := psi - d*d
	num := d*math.Sqrt(float64(n)) - zFor(1-alpha/2)*math.Sqrt(psi)
	if v <= 0 {
		if num > 0 {
			return 1
		}
		return 0
	}
	return distuv.UnitNormal.CDF(num / math.Sqrt(v))
}

// smallestChange returns the smallest change in [0, hi] whose power
// reaches target, by bisection (power grows with the change): +Inf when
// even hi falls short, 0 when any change reaches it.
func smallestChange(power func(float64) float64, hi, target float64) float64 {
	if power(hi) < target {
		return math.Inf(1)
	}
	lo := 0.0
	for range 60 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if power(mid) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi <= 1e-12 {
		return 0
	}
	return hi
}

// smallestN returns the smallest n per side in [2, MaxNeed] whose power
// reaches target (power grows with n), or −1.
func smallestN(power func(int) float64, target float64) int {
	if power(MaxNeed) < target {
		return -1
	}
	lo, hi := 1, MaxNeed // power(lo) < target ≤ power(hi)
	if power(2) >= target {
		return 2
	}
	lo = 2
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if power(mid) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
