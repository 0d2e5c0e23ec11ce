package report

import (
	"math"
	"testing"
)

// A domain of values of about 1e7 one float apart (as a chart's domain
// from min(0, lo) is for negative values): NiceTicks widens it at its
// magnitude and its ticks end, few, distinct and covering it (the old loop
// stepped by less than the float spacing and never ended).
func TestNiceTicksOfADomainOneFloatWideEnd(t *testing.T) {
	for _, v := range []float64{1e7, -1e7, 1e15, 3.7} {
		lo, hi := v, math.Nextafter(v, math.Inf(1))
		ticks, dlo, dhi := NiceTicks(lo, hi, 5)
		if len(ticks) < 2 || len(ticks) > 12 {
			t.Fatalf("%g: %d ticks, want a handful", v, len(ticks))
		}
		for i := 1; i < len(ticks); i++ {
			if !(ticks[i] > ticks[i-1]) || tickLabel(ticks[i]) == tickLabel(ticks[i-1]) {
				t.Errorf("%g: ticks %v and %v are not distinct and increasing", v, ticks[i-1], ticks[i])
			}
		}
		if dlo > lo || dhi < hi || ticks[0] != dlo || ticks[len(ticks)-1] != dhi {
			t.Errorf("%g: ticks %v..%v (domain %g..%g) do not cover %g..%g", v, ticks[0], ticks[len(ticks)-1], dlo, dhi, lo, hi)
		}
	}
}
