package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// A Sample is one side's values of a continuous metric, sorted once for
// every statistic that ranks them: the median and its interval, the
// Mann–Whitney U test, the Hodges–Lehmann shift and the power model all read
// the same sorted copy, where each used to sort its own (a million-row diff
// spent most of its statistics sorting the same values four times).
//
// A Sample is made of strata, a bench's tasks: the comparison pools them,
// the power model counts the spread within each (ShiftSensitivityStrata).
// Build one with NewSample; it is read-only afterwards and may be shared by
// any number of statistics.
type Sample struct {
	// strata holds each stratum's finite values in the order given; a
	// stratum without NaN or ±Inf is the caller's slice itself.
	strata [][]float64
	// sorted is every finite value, ascending: the one sorted copy.
	sorted []float64
	// warnings say what NewSample skipped.
	warnings []string
}

// NewSample returns the Sample of the strata's values. NaN and ±Inf are not
// measurements that can be ranked: they are skipped, and the Sample's
// summary warns how many. The strata are not modified, and are kept: they
// must not change while the Sample is in use.
func NewSample(strata ...[]float64) *Sample {
	s := &Sample{strata: make([][]float64, len(strata))}
	n, given := 0, 0
	for i, xs := range strata {
		s.strata[i] = finiteOnly(xs)
		n += len(s.strata[i])
		given += len(xs)
	}
	s.sorted = make([]float64, 0, n)
	for _, xs := range s.strata {
		s.sorted = append(s.sorted, xs...)
	}
	slices.Sort(s.sorted)
	if skipped := given - n; skipped > 0 {
		s.warnings = []string{skippedWarning(skipped, given)}
	}
	return s
}

// N is the number of finite values in the sample.
func (s *Sample) N() int { return len(s.sorted) }

// skippedWarning says that skipped of given values were not finite.
func skippedWarning(skipped, given int) string {
	return fmt.Sprintf("skipped %d of %d values that are NaN or infinite", skipped, given)
}

// finiteOnly returns xs when every value is finite, else a copy without NaN
// and ±Inf.
func finiteOnly(xs []float64) []float64 {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out := slices.Clone(xs[:i])
			for _, x := range xs[i+1:] {
				if !math.IsNaN(x) && !math.IsInf(x, 0) {
					out = append(out, x)
				}
			}
			return out
		}
	}
	return xs
}

// median is the sample's median exactly as its Summary reports it (NaN for
// no values), read off the sorted values.
func (s *Sample) median() float64 {
	if len(s.sorted) == 0 {
		return math.NaN()
	}
	return benchmath.AssumeNothing.Summary(sortedSample(s.sorted), 0.5).Center
}

// sortedSample is values, already ascending, as a benchmath Sample:
// benchmath.NewSample would sort them again (and in place).
func sortedSample(values []float64) *benchmath.Sample {
	return &benchmath.Sample{Values: values, Thresholds: &benchmath.DefaultThresholds}
}
