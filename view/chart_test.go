package view

import (
	"math"
	"testing"
)

// Values of about 1e7 one float apart: the axis is padded at their
// magnitude and its ticks end, few, distinct and covering the values (the
// old loop stepped by less than the float spacing and never ended).
func TestAxisTicksOfValuesOneFloatApartEnd(t *testing.T) {
	for _, v := range []float64{1e7, -1e7, 1e15, 3.7} {
		vs := []float64{v, math.Nextafter(v, math.Inf(1))}
		lo, hi := valueRange(vs, false)
		ts := yTicks(&lo, &hi)
		if len(ts) < 2 || len(ts) > 12 {
			t.Fatalf("%g: %d ticks, want a handful", v, len(ts))
		}
		for i := 1; i < len(ts); i++ {
			if !(ts[i].Y > ts[i-1].Y) || ts[i].Label == ts[i-1].Label {
				t.Errorf("%g: ticks %v and %v are not distinct and increasing", v, ts[i-1], ts[i])
			}
		}
		if ts[0].Y > vs[0] || ts[len(ts)-1].Y < vs[1] || lo != ts[0].Y || hi != ts[len(ts)-1].Y {
			t.Errorf("%g: ticks %v..%v (axis %g..%g) do not cover the values", v, ts[0].Y, ts[len(ts)-1].Y, lo, hi)
		}
	}
}
