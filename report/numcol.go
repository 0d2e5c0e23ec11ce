package report

import "math"

// numCol is one metric's per-cell values in a group (see tabAcc.values):
// NaN where the cell has no measured value. It grows in blocks of
// chunkSize, like chunked, and each block holds its values as compactly as
// they allow: as int32 while every value in it is an integer that fits
// (token counts, turns, milliseconds, a 0/1 verdict), as float64 from the
// first that is not (a cost, a precision). Both hold each value exactly,
// and a block turns to floats on its own, so one fractional value costs
// one block's width, not the column's. A million cells keep seven such
// columns, so the halved width is most of a report's memory.
type numCol struct {
	blocks []numBlock
	n      int
}

// numBlock is one block of a numCol: ints until floats is set.
type numBlock struct {
	ints   []int32
	floats []float64
	float  bool
}

// noValue stands for NaN (not measured) among a block's ints; a measured
// value of MinInt32 goes to floats.
const noValue = math.MinInt32

// asInt32 returns v as a block's int: NaN as noValue, an integer that fits
// int32 (other than MinInt32, and not -0, whose sign an int would lose) as
// itself. ok is false for anything else.
func asInt32(v float64) (x int32, ok bool) {
	switch {
	case math.IsNaN(v):
		return noValue, true
	case v == math.Trunc(v) && v > math.MinInt32 && v <= math.MaxInt32 && !(v == 0 && math.Signbit(v)):
		return int32(v), true
	}
	return 0, false
}

func (b *numBlock) len() int {
	if b.float {
		return len(b.floats)
	}
	return len(b.ints)
}

func (b *numBlock) get(j int) float64 {
	if b.float {
		return b.floats[j]
	}
	if x := b.ints[j]; x != noValue {
		return float64(x)
	}
	return math.NaN()
}

// toFloats turns the block's ints to floats, keeping their capacity.
func (b *numBlock) toFloats() {
	fs := make([]float64, len(b.ints), cap(b.ints))
	for j := range b.ints {
		fs[j] = b.get(j)
	}
	b.floats, b.ints, b.float = fs, nil, true
}

func (b *numBlock) set(j int, v float64) {
	if !b.float {
		if x, ok := asInt32(v); ok {
			b.ints[j] = x
			return
		}
		b.toFloats()
	}
	b.floats[j] = v
}

func (b *numBlock) add(v float64) {
	if !b.float {
		if x, ok := asInt32(v); ok {
			b.ints = append(b.ints, x)
			return
		}
		b.toFloats()
	}
	b.floats = append(b.floats, v)
}

func (c *numCol) len() int { return c.n }

// extend adds NaN (not measured) until c holds n values.
func (c *numCol) extend(n int) {
	for c.n < n {
		// The first block grows as a slice does, up to chunkSize, as
		// chunked's does: most columns of a diff by task and arm are a
		// few cells long.
		switch {
		case c.n == 0:
			c.blocks = append(c.blocks, numBlock{ints: make([]int32, 0, 8)})
		case c.n%chunkSize == 0:
			c.blocks = append(c.blocks, numBlock{ints: make([]int32, 0, chunkSize)})
		}
		c.blocks[len(c.blocks)-1].add(math.NaN())
		c.n++
	}
}

// get returns the value of cell i (< len()).
func (c *numCol) get(i int) float64 { return c.blocks[i/chunkSize].get(i % chunkSize) }

// set sets the value of cell i (< len()).
func (c *numCol) set(i int, v float64) { c.blocks[i/chunkSize].set(i%chunkSize, v) }

// sum adds v (not NaN) to the value of cell i (< len()), or sets it
// there when the cell has none yet. A sum of two int32s is exact in int64
// and in float64 alike, so a block of ints sums as float64 would.
func (c *numCol) sum(i int, v float64) {
	b := &c.blocks[i/chunkSize]
	j := i % chunkSize
	if !b.float && v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32 {
		// An int is never -0, so adding -0 to one leaves it, in ints too.
		if cur := b.ints[j]; cur != noValue {
			v = float64(int64(cur) + int64(v))
		}
		b.set(j, v)
		return
	}
	if cur := b.get(j); !math.IsNaN(cur) {
		v += cur
	}
	b.set(j, v)
}

// each calls f with every cell's value in order, NaN included.
func (c *numCol) each(f func(i int, v float64)) {
	for bi := range c.blocks {
		b := &c.blocks[bi]
		for j := range b.len() {
			f(bi*chunkSize+j, b.get(j))
		}
	}
}

// measured counts the cells with a value.
func (c *numCol) measured() int {
	n := 0
	for bi := range c.blocks {
		b := &c.blocks[bi]
		if b.float {
			for _, v := range b.floats {
				if !math.IsNaN(v) {
					n++
				}
			}
			continue
		}
		for _, x := range b.ints {
			if x != noValue {
				n++
			}
		}
	}
	return n
}

// appendMeasured appends the measured values, in cell order, to dst.
func (c *numCol) appendMeasured(dst []float64) []float64 {
	for bi := range c.blocks {
		b := &c.blocks[bi]
		if b.float {
			for _, v := range b.floats {
				if !math.IsNaN(v) {
					dst = append(dst, v)
				}
			}
			continue
		}
		for _, x := range b.ints {
			if x != noValue {
				dst = append(dst, float64(x))
			}
		}
	}
	return dst
}
