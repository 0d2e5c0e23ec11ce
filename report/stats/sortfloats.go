package stats

import (
	"math"
	"slices"
)

// radixMin is the length from which sortFloats sorts by radix: below it a
// comparison sort is as fast.
const radixMin = 4096

// sortFloats sorts finite xs ascending, in place. Large samples are sorted
// by their bits (an order-preserving key, least significant byte first,
// skipping the bytes every key shares — most of them for whole tokens,
// turns and milliseconds) in linear time; a million cells' values sort
// several times faster than by comparisons. The order is the numeric one;
// a -0 sorts before a +0, which compare equal.
func sortFloats(xs []float64) {
	if len(xs) < radixMin {
		slices.Sort(xs)
		return
	}
	keys := make([]uint64, len(xs))
	var or, and uint64 = 0, math.MaxUint64
	for i, x := range xs {
		k := floatKey(x)
		keys[i] = k
		or |= k
		and &= k
	}
	tmp := make([]uint64, len(xs))
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if (or>>shift)&0xff == (and>>shift)&0xff {
			continue // every key has this byte
		}
		count = [256]int{}
		for _, k := range keys {
			count[(k>>shift)&0xff]++
		}
		sum := 0
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		for _, k := range keys {
			b := (k >> shift) & 0xff
			tmp[count[b]] = k
			count[b]++
		}
		keys, tmp = tmp, keys
	}
	for i, k := range keys {
		xs[i] = keyFloat(k)
	}
}

// floatKey maps a float's bits to a key whose unsigned order is the
// float's: negatives have every bit flipped, the rest their sign bit set.
func floatKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func keyFloat(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
