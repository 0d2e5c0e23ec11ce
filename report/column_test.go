package report

import (
	"math"
	"slices"
	"testing"
)

// A column gives back exactly the values added, in order, whichever width
// it holds them in: integers that fit, then a value that does not (a
// fraction, -0, past int32), and integers after it.
func TestAColumnKeepsEveryValueExactly(t *testing.T) {
	cases := [][]float64{
		{1, 2, 3},
		{0, -7, math.MinInt32, math.MaxInt32},
		{1, 2, 0.5, 4},
		{3, math.Copysign(0, -1), 5},
		{10, math.MaxInt32 + 1, 12},
		{math.MinInt32 - 1, 1},
		{1e300, -2.25},
		{},
	}
	for _, in := range cases {
		var c column
		for _, v := range in {
			c.add(v)
		}
		got := c.appendTo(nil)
		if c.len() != len(in) || !slices.Equal(got, in) {
			t.Errorf("added %v, got back %v (len %d)", in, got, c.len())
		}
		for i := range in {
			if math.Signbit(got[i]) != math.Signbit(in[i]) {
				t.Errorf("added %v: value %d lost its sign", in, i)
			}
		}
	}
}
