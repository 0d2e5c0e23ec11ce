package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// TabulateOptions says how `wfb report` groups attempts and which metrics
// the file has.
type TabulateOptions struct {
	// ByTask groups by task and arm; otherwise by arm alone.
	ByTask bool
	// Metrics are the metrics to summarise, usually Columns.Metrics(): a
	// metric whose column the file lacks is left out, not shown as empty.
	Metrics []Metric
	// Keep asks for every measured value of these metrics to be kept in
	// Group.Values, for charts of their distribution.
	Keep []Metric
}

// Spread summarises the measured values of one metric in one group. For a
// continuous metric Center is the median and Q1/Q3 the quartiles (R's type 7,
// the same median benchstat reports); for a proportion Center is the mean
// (the rate) and Q1/Q3 are NaN. Everything is NaN when N is 0: nothing was
// measured, which is not the same as a measured 0.
type Spread struct {
	N                        int
	Center, Q1, Q3, Min, Max float64
	Sum                      float64 // sum of the measured values
}

// Group is one line of `wfb report`: the attempts of one arm (and task).
type Group struct {
	Task      string // empty unless grouped by task
	Arm       string
	Attempted int
	OK        int
	// Failed counts the attempts that are not ok, by error kind.
	Failed map[string]int
	// Errored counts the failed attempts whose kind is an error (see
	// IsError): they are in Attempted, and left out of the clean rate.
	Errored int
	// Retries counts attempts after a cell's first (attempt > 1).
	Retries int
	Metrics [NumMetrics]Spread
	// Values holds the sorted measured values of the metrics asked for in
	// TabulateOptions.Keep.
	Values [NumMetrics][]float64
}

// StrictRate is OK/Attempted: every attempt counts, and an error is a
// failure. NaN when nothing was attempted.
func (g *Group) StrictRate() float64 { return ratio(g.OK, g.Attempted) }

// CleanRate is OK/(Attempted − Errored): attempts that were never fairly
// measured (an error kind, see IsError) leave the denominator; failures of
// the workflow stay in it. NaN when every attempt errored.
func (g *Group) CleanRate() float64 { return ratio(g.OK, g.Attempted-g.Errored) }

// CostComplete reports whether every attempt's cost was measured, so that
// the cost sum is the group's total cost rather than a lower bound.
func (g *Group) CostComplete() bool { return g.Metrics[CostUSD].N == g.Attempted }

func ratio(a, b int) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Tabulation is what `wfb report` shows, before rendering: one Group per
// arm (and task), the error kinds present, and footnotes explaining what was
// excluded or unmeasured.
type Tabulation struct {
	Options TabulateOptions
	// Kinds lists the error kinds present in any group, in the documented
	// order: one column each.
	Kinds  []string
	Groups []*Group
	// OutcomeNotes explain the counts and rates (errored attempts,
	// retries); MetricNotes explain the medians (unmeasured values).
	OutcomeNotes, MetricNotes []string
}

// Tabulator accumulates rows into a Tabulation. It is pure: rows in, a
// Tabulation out; nothing is read or written.
type Tabulator struct {
	opts   TabulateOptions
	groups map[[2]string]*groupAcc
}

type groupAcc struct {
	g      Group
	values [NumMetrics][]float64
}

// NewTabulator returns an empty Tabulator.
func NewTabulator(opts TabulateOptions) *Tabulator {
	return &Tabulator{opts: opts, groups: map[[2]string]*groupAcc{}}
}

// Tabulate tabulates rows in one go.
func Tabulate(rows []Row, opts TabulateOptions) *Tabulation {
	t := NewTabulator(opts)
	for i := range rows {
		t.Add(&rows[i])
	}
	return t.Result()
}

// Add counts one attempt. r is not retained.
func (t *Tabulator) Add(r *Row) {
	key := [2]string{"", r.Arm}
	if t.opts.ByTask {
		key[0] = r.Task
	}
	a := t.groups[key]
	if a == nil {
		a = &groupAcc{g: Group{Task: key[0], Arm: key[1], Failed: map[string]int{}}}
		t.groups[key] = a
	}
	a.g.Attempted++
	if r.Attempt > 1 {
		a.g.Retries++
	}
	if r.OK {
		a.g.OK++
	} else {
		kind := r.ErrorKind
		if kind == "" {
			// The schema forbids this; if a foreign writer managed it,
			// the attempt still counts as failed, under a name that
			// says so.
			kind = "unknown"
		}
		a.g.Failed[kind]++
		if IsError(kind) {
			a.g.Errored++
		}
	}
	for _, m := range t.opts.Metrics {
		if v := r.Values[m]; !math.IsNaN(v) {
			a.values[m] = append(a.values[m], v)
		}
	}
}

// Result summarises what was added. Groups are sorted by task, then arm.
func (t *Tabulator) Result() *Tabulation {
	tab := &Tabulation{Options: t.opts}
	tab.Options.Metrics = scoredOnly(t.opts.Metrics, func(m Metric) bool {
		for _, a := range t.groups {
			if len(a.values[m]) > 0 {
				return true
			}
		}
		return false
	})
	kinds := map[string]bool{}
	for _, a := range t.groups {
		g := &a.g
		for _, m := range tab.Options.Metrics {
			g.Metrics[m] = spreadOf(m, a.values[m])
			if slices.Contains(t.opts.Keep, m) {
				g.Values[m] = a.values[m]
			}
		}
		for k := range g.Failed {
			kinds[k] = true
		}
		tab.Groups = append(tab.Groups, g)
	}
	sort.Slice(tab.Groups, func(i, j int) bool {
		a, b := tab.Groups[i], tab.Groups[j]
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.Arm < b.Arm
	})
	for k := range kinds {
		tab.Kinds = append(tab.Kinds, k)
	}
	sortKinds(tab.Kinds)
	tab.OutcomeNotes, tab.MetricNotes = tabulationNotes(tab)
	return tab
}

// spreadOf summarises values (which it sorts in place).
func spreadOf(m Metric, values []float64) Spread {
	nan := math.NaN()
	s := Spread{N: len(values), Center: nan, Q1: nan, Q3: nan, Min: nan, Max: nan, Sum: nan}
	if len(values) == 0 {
		return s
	}
	sort.Float64s(values)
	s.Min, s.Max = values[0], values[len(values)-1]
	s.Sum = 0
	for _, v := range values {
		s.Sum += v
	}
	if m.Kind() == Proportion {
		s.Center = s.Sum / float64(len(values))
		return s
	}
	s.Center = quantile(values, 0.5)
	s.Q1 = quantile(values, 0.25)
	s.Q3 = quantile(values, 0.75)
	return s
}

// quantile returns the p-quantile of sorted by linear interpolation between
// order statistics (R's type 7, NumPy's default). Its median is the mean of
// the two middle values, as benchstat's is.
func quantile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// tabulationNotes explains, group by group, what the rates and medians left
// out: errored attempts, unmeasured values, retries.
func tabulationNotes(tab *Tabulation) (outcome, metric []string) {
	name := func(g *Group) string {
		if g.Task != "" {
			return fmt.Sprintf("task %s, arm %s", g.Task, g.Arm)
		}
		return "arm " + g.Arm
	}
	for _, g := range tab.Groups {
		if g.Errored > 0 {
			var parts []string
			for _, k := range tab.Kinds {
				if n := g.Failed[k]; n > 0 && IsError(k) {
					parts = append(parts, fmt.Sprintf("%d %s", n, k))
				}
			}
			outcome = append(outcome, fmt.Sprintf("%s: %d of %d attempts errored (%s): they count as not ok in the strict rate and are left out of the clean rate's denominator.",
				name(g), g.Errored, g.Attempted, strings.Join(parts, ", ")))
		}
		if c := g.Metrics[CostUSD]; slices.Contains(tab.Options.Metrics, CostUSD) && !g.CostComplete() {
			if c.N == 0 {
				outcome = append(outcome, fmt.Sprintf("%s: cost unmeasured for all %d attempts: the cost total is NULL, not 0.", name(g), g.Attempted))
			} else {
				outcome = append(outcome, fmt.Sprintf("%s: cost unmeasured for %d of %d attempts: the cost total is the sum over the %d measured (marked *), a lower bound.",
					name(g), g.Attempted-c.N, g.Attempted, c.N))
			}
		}
		var partial []string
		for _, m := range tab.Options.Metrics {
			if m == CostUSD {
				continue
			}
			if n := g.Metrics[m].N; n < g.Attempted {
				partial = append(partial, fmt.Sprintf("%s %d", m.Name(), g.Attempted-n))
			}
		}
		if len(partial) > 0 {
			metric = append(metric, fmt.Sprintf("%s: not measured (NULL), left out of the medians: %s of %d attempts.",
				name(g), strings.Join(partial, ", "), g.Attempted))
		}
		if g.Retries > 0 {
			outcome = append(outcome, fmt.Sprintf("%s: %d of %d attempts are retries; every attempt is counted.", name(g), g.Retries, g.Attempted))
		}
	}
	return outcome, metric
}

// scoredOnly drops the review-quality metrics that no attempt has: a file
// can have the scores table while the selection holds no review task, and
// rows of NULL quality would only say "this was not a review". Usage
// metrics stay even when unmeasured everywhere, since their absence is news.
func scoredOnly(ms []Metric, measured func(Metric) bool) []Metric {
	out := make([]Metric, 0, len(ms))
	for _, m := range ms {
		if !m.Quality() || measured(m) {
			out = append(out, m)
		}
	}
	return out
}
