package report

import (
	"math"
	"testing"
)

// TestNumColKeepsEveryValueExactly sets and sums values in a numCol and in
// a plain []float64 side by side: every value must read back bit for bit,
// whichever form its block holds, and a block of integers must stay ints.
func TestNumColKeepsEveryValueExactly(t *testing.T) {
	const n = 3*chunkSize + 17
	tricky := []float64{math.MinInt32, math.MaxInt32, math.MaxInt32 + 1, -1 << 31 >> 1, math.Copysign(0, -1),
		0.1, 1e300, math.Inf(1), math.Inf(-1), 2.5, -7}
	var col numCol
	want := make([]float64, n)
	col.extend(n)
	for i := range want {
		want[i] = math.NaN()
	}
	set := func(i int, v float64) {
		col.set(i, v)
		want[i] = v
	}
	// Block 0: integers only, including sums past int32.
	for i := 0; i < chunkSize; i += 3 {
		set(i, float64(i*1000))
	}
	set(5, math.MaxInt32)
	set(5, col.get(5)+1) // leaves int32: the block turns to floats
	// Block 1: integers only, and it must stay ints.
	for i := chunkSize; i < 2*chunkSize; i += 2 {
		set(i, float64(i%977))
	}
	// Block 2 and the tail: every tricky value.
	for j, v := range tricky {
		set(2*chunkSize+j, v)
		set(3*chunkSize+j, v)
	}
	if col.blocks[1].float {
		t.Errorf("block 1 holds only int32 values but was turned to floats")
	}
	if !col.blocks[0].float || !col.blocks[2].float {
		t.Errorf("blocks 0 and 2 hold values outside int32 but stayed ints")
	}
	if col.len() != n {
		t.Fatalf("len %d, want %d", col.len(), n)
	}
	measured := 0
	col.each(func(i int, v float64) {
		w := want[i]
		if math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
			t.Errorf("cell %d: got %v (bits %x), want %v (bits %x)", i, v, math.Float64bits(v), w, math.Float64bits(w))
		}
		if !math.IsNaN(w) {
			measured++
		}
	})
	if got := col.measured(); got != measured {
		t.Errorf("measured() = %d, want %d", got, measured)
	}
	if got := col.appendMeasured([]float64{42}); len(got) != measured+1 || got[0] != 42 {
		t.Errorf("appendMeasured kept %d values (first %v), want %d after 42", len(got), got[0], measured+1)
	}
	// Each tricky value alone, into a block of ints.
	for _, v := range tricky {
		var c numCol
		c.extend(2)
		c.set(0, 3)
		c.set(1, v)
		if got := c.get(1); math.Float64bits(got) != math.Float64bits(v) || c.get(0) != 3 {
			t.Errorf("%v into a block of ints reads back as %v (bits %x), and 3 as %v", v, got, math.Float64bits(got), c.get(0))
		}
	}
}

// TestNumColSumsAsFloat64Would sums values into cells with numCol.sum and
// with float64 addition side by side: the same bits every time, whether
// the sum stays an int, leaves int32, or meets a fraction or -0.
func TestNumColSumsAsFloat64Would(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, addends := range [][]float64{
		{1, 2, 3},
		{math.MaxInt32, math.MaxInt32, 1},
		{-math.MaxInt32, -math.MaxInt32},
		{negZero},
		{negZero, negZero},
		{5, negZero},
		{negZero, 5},
		{0.5, 1, 2},
		{1, 0.5},
		{1e300, 1e300},
		{3, math.Inf(-1)},
	} {
		var c numCol
		c.extend(2)
		c.sum(0, 7) // a neighbour that must keep its value
		want := math.NaN()
		for _, v := range addends {
			c.sum(1, v)
			if math.IsNaN(want) {
				want = v
			} else {
				want += v
			}
		}
		if got := c.get(1); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("sum of %v: got %v (bits %x), want %v (bits %x)", addends, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		if got := c.get(0); got != 7 {
			t.Errorf("sum of %v: the neighbour reads %v, want 7", addends, got)
		}
	}
}
