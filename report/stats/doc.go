// Package stats compares a metric measured in two runs, A and B, the way
// `wfb diff` reports it: a centre and confidence interval for each side, the
// relative change, and a p-value from a test that fits the data.
//
// The statistics come from maintained libraries where those are right:
// golang.org/x/perf/benchmath (the median, its distribution-free confidence
// interval and the exact Mann–Whitney U test without ties that benchstat
// uses) and gonum (binomial and normal distributions, log binomial
// coefficients for Fisher's exact test). Two parts of the U test are computed
// here because the library gets them wrong: the exact test with ties
// (go-moremath treats the tied distribution as symmetric and returns p-values
// above 1 and of 0) and the normal approximation for large samples (its upper
// tail rounds to 0). Beyond that this package only chooses the test,
// refuses values that cannot be ranked, and explains in Warnings when a result
// cannot be trusted — most importantly when the samples are too few to ever
// reach significance, so that a "~" is not mistaken for "no change".
//
// Every function is pure: values in, a Summary or Comparison out. Nothing
// panics on bad data; problems become warnings, the way benchmath reports
// them, so that a report can show them as footnotes.
package stats
