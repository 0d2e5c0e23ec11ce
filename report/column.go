package report

import "math"

// column is one metric's measured values on one side of a diff, kept as
// compactly as they allow: as int32 while every value is an integer that
// fits (token counts, turns, milliseconds), as float64 from the first value
// that is not. Both hold each value exactly; a diff of a million attempts
// keeps seven columns of them, so the halved width is most of its memory.
type column struct {
	ints   []int32
	floats []float64 // non-nil once a value is not an int32
}

// add appends v, which is not NaN.
func (c *column) add(v float64) {
	if c.floats == nil {
		if exactInt32(v) {
			c.ints = append(c.ints, int32(v))
			return
		}
		c.floats = c.appendTo(make([]float64, 0, 2*len(c.ints)+1))
		c.ints = nil
	}
	c.floats = append(c.floats, v)
}

// exactInt32 reports whether v is an int32 as a float64: an integer in
// range, and not -0 (whose sign an int would lose).
func exactInt32(v float64) bool {
	return v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32 && !(v == 0 && math.Signbit(v))
}

func (c *column) len() int { return len(c.ints) + len(c.floats) }

// appendTo appends the values, in the order added, to dst.
func (c *column) appendTo(dst []float64) []float64 {
	if c.floats != nil {
		return append(dst, c.floats...)
	}
	for _, i := range c.ints {
		dst = append(dst, float64(i))
	}
	return dst
}

// samples are one side's measured values of each metric.
type samples [NumMetrics]column

// values joins parts' values of m into one slice of its own.
func values(parts []*samples, m Metric) []float64 {
	n := 0
	for _, p := range parts {
		n += p[m].len()
	}
	out := make([]float64, 0, n)
	for _, p := range parts {
		out = p[m].appendTo(out)
	}
	return out
}
