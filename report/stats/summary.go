package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes one side of a comparison.
type Summary struct {
	// N is the number of values the summary is built from: finite values
	// for a continuous metric, attempts (or pairs) for a pass rate.
	N int
	// Center is the median of a continuous metric, or the pass rate
	// (passes/N) of a pass/fail metric. It is NaN when N is 0.
	Center float64
	// Lo and Hi bound the confidence interval of Center. They are -Inf and
	// +Inf when the sample is too small for an interval at the requested
	// confidence (a warning says how many values are needed), and NaN when
	// N is 0.
	Lo, Hi float64
	// Confidence is the confidence level the interval actually has. For a
	// median it can exceed the requested level, because order statistics
	// only give certain levels.
	Confidence float64
	// Warnings explain why this summary should be read with care.
	Warnings []string
}

// Summarize returns the median of xs and the distribution-free confidence
// interval of the median at the given confidence level (0.95 for 95%), as
// benchstat computes them. NaN and ±Inf values are not measurements that can be
// ranked: they are skipped and a warning says how many. xs is not modified.
func Summarize(xs []float64, confidence float64) Summary {
	return NewSample(xs).summary(confidence)
}

// summary is Summarize over the sample's sorted finite values, with its
// warnings about what was skipped.
func (s *Sample) summary(confidence float64) Summary {
	warnings := slices.Clone(s.warnings) // each Summary owns its warnings
	finite := s.sorted
	if !(confidence >= 0 && confidence <= 1) {
		return Summary{N: len(finite), Center: s.median(), Lo: math.NaN(), Hi: math.NaN(), Confidence: confidence,
			Warnings: append(warnings, fmt.Sprintf("confidence %v is outside [0, 1]; no interval computed", confidence))}
	}
	if len(finite) == 0 {
		return Summary{N: 0, Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Confidence: confidence,
			Warnings: append(warnings, "no values")}
	}
	r := benchmath.AssumeNothing.Summary(sortedSample(finite), confidence)
	for _, w := range r.Warnings {
		warnings = append(warnings, w.Error())
	}
	return Summary{N: len(finite), Center: r.Center, Lo: r.Lo, Hi: r.Hi, Confidence: r.Confidence, Warnings: warnings}
}

// SummarizeRate returns the pass rate pass/n and its Wilson score interval at
// the given confidence level. The Wilson interval is used rather than the
// textbook normal ("Wald") interval because it stays inside [0, 1] and keeps
// close to its nominal coverage for small n and for rates near 0 or 1, which
// is where agent pass rates live.
func SummarizeRate(pass, n int, confidence float64) Summary {
	switch {
	case n < 0 || pass < 0 || pass > n:
		return Summary{N: n, Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Confidence: confidence,
			Warnings: []string{fmt.Sprintf("impossible count: %d passes out of %d", pass, n)}}
	case n == 0:
		return Summary{N: 0, Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Confidence: confidence,
			Warnings: []string{"no attempts"}}
	case !(confidence > 0 && confidence < 1):
		return Summary{N: n, Center: float64(pass) / float64(n), Lo: math.NaN(), Hi: math.NaN(), Confidence: confidence,
			Warnings: []string{fmt.Sprintf("confidence %v is outside (0, 1); no interval computed", confidence)}}
	}
	lo, hi := wilson(pass, n, confidence)
	return Summary{N: n, Center: float64(pass) / float64(n), Lo: lo, Hi: hi, Confidence: confidence}
}

// wilson returns the Wilson (1927) score interval for pass successes out of n.
func wilson(pass, n int, confidence float64) (lo, hi float64) {
	z := distuv.UnitNormal.Quantile(1 - (1-confidence)/2)
	nf := float64(n)
	p := float64(pass) / nf
	z2 := z * z
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	// At 0 or n passes the bound is exactly 0 or 1; rounding must not push
	// it past.
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if pass == 0 {
		lo = 0
	}
	if pass == n {
		hi = 1
	}
	return lo, hi
}
