package report

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/wfbench/wfb/report/stats"
)

// TrendOptions says how `wfb trend` compares its buckets.
type TrendOptions struct {
	Alpha   float64
	Metrics []Metric
	// Keys, when set, keeps only the lines with these keys
	// (strict_pass_rate, cost_usd, …).
	Keys []string
	// By names the buckets for people: day, label or run.
	By string
	// Detect is the change each step is sized for (--detect); zero for
	// none.
	Detect Detect
}

// Trender compares a series of buckets (days, labels or runs), each with
// the one before it and, when there is a baseline, with the baseline,
// by the same Differ — so the same per-cell metrics, pairing and tests as
// `wfb diff`. A row of bucket i feeds the step i−1 → i as side B and the
// step i → i+1 as side A. It is pure, and gives one Result.
type Trender struct {
	opts     TrendOptions
	buckets  []string
	steps    []*Differ // steps[i] compares bucket i with i+1
	base     []*Differ // base[i] compares the baseline with bucket i; nil without one
	baseline int
}

// NewTrender returns a Trender over buckets, in order; baseline is the
// index of the baseline bucket, or −1.
func NewTrender(opts TrendOptions, buckets []string, baseline int) *Trender {
	t := &Trender{opts: opts, buckets: buckets, baseline: baseline}
	dopts := DiffOptions{Alpha: opts.Alpha, Metrics: opts.Metrics, Detect: opts.Detect, OneSided: true}
	for range max(len(buckets)-1, 0) {
		t.steps = append(t.steps, NewDiffer(dopts))
	}
	if baseline >= 0 {
		t.base = make([]*Differ, len(buckets))
		for i := range buckets {
			if i != baseline {
				t.base[i] = NewDiffer(dopts)
			}
		}
	}
	return t
}

// Add counts one attempt of bucket i. r is not retained.
func (t *Trender) Add(i int, r *Row) {
	if i > 0 {
		t.steps[i-1].Add(SideB, r)
	}
	if i < len(t.steps) {
		t.steps[i].Add(SideA, r)
	}
	for j, d := range t.base {
		switch {
		case d == nil:
		case i == t.baseline:
			d.Add(SideA, r)
		case i == j:
			d.Add(SideB, r)
		}
	}
}

// TrendPoint is one metric of one arm in one bucket: its centre and
// interval, and its comparison with the previous bucket (Step) and with
// the baseline (Base), nil where there is none.
type TrendPoint struct {
	Bucket     string
	Arm        string
	Key, Name  string
	Metric     Metric
	Rate       bool
	Summary    stats.Summary
	Step, Base *DiffLine
}

// Changed reports whether the step from the previous bucket is a
// significant, comparable change: the flag `wfb trend` shows.
func (p *TrendPoint) Changed() bool {
	return p.Step != nil && p.Step.Comparable() && p.Step.Cmp.Significant
}

// Trend is what `wfb trend` shows, before rendering.
type Trend struct {
	Options   TrendOptions
	Buckets   []string
	Baseline  string
	Points    []TrendPoint // by arm, metric, then bucket
	Footnotes []string
	// Legend is how each step is tested, Footnotes' first; StepNotes are
	// the rest, under the step each is about (in Footnotes each starts
	// with its step's name), for a page that groups and folds them.
	Legend    string
	StepNotes []NoteGroup
}

// NoteGroup is footnotes under one heading.
type NoteGroup struct {
	Title string
	Notes []string
}

// Result compares every step (and every bucket with the baseline).
func (t *Trender) Result(runs []RunInfo) *Trend {
	out := &Trend{Options: t.opts, Buckets: t.buckets}
	if t.baseline >= 0 {
		out.Baseline = t.buckets[t.baseline]
	}
	type key struct{ arm, key string }
	points := map[key][]TrendPoint{}
	var order []key
	point := func(i int, l *DiffLine, s stats.Summary) *TrendPoint {
		k := key{l.Arm, l.Key}
		ps, seen := points[k]
		if !seen {
			order = append(order, k)
			ps = make([]TrendPoint, len(t.buckets))
			for b := range ps {
				ps[b] = TrendPoint{Bucket: t.buckets[b], Arm: l.Arm, Key: l.Key, Name: l.Name, Metric: l.Metric, Rate: l.Rate,
					Summary: stats.Summary{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}
			}
			points[k] = ps
		}
		ps[i].Summary = s
		return &ps[i]
	}
	// Every step's and baseline's comparison at once, one per CPU; they
	// are read below in order.
	all := append(append([]*Differ{}, t.steps...), t.base...)
	results := make([]*Diff, len(all))
	eachInParallel(len(all), func(i int) {
		if all[i] != nil {
			results[i] = all[i].Result(runs)
		}
	})
	stepResults, baseResults := results[:len(t.steps)], results[len(t.steps):]
	for i := range t.steps {
		df := stepResults[i]
		for j := range df.Lines {
			l := df.Lines[j]
			point(i, &l, l.Cmp.A)
			point(i+1, &l, l.Cmp.B).Step = &l
		}
		step := fmt.Sprintf("%s %s → %s", t.opts.By, t.buckets[i], t.buckets[i+1])
		out.Footnotes = t.stepNotes(out.Footnotes, df, step, i == 0)
		if i == 0 && len(out.Footnotes) > 0 {
			out.Legend = out.Footnotes[0]
		}
		if len(df.Footnotes) > 1 {
			out.StepNotes = append(out.StepNotes, NoteGroup{Title: step, Notes: df.Footnotes[1:]})
		}
	}
	for i, d := range t.base {
		if d == nil {
			continue
		}
		df := baseResults[i]
		for j := range df.Lines {
			l := df.Lines[j]
			point(i, &l, l.Cmp.B).Base = &l
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].arm < order[j].arm })
	for _, k := range order {
		if len(t.opts.Keys) > 0 && !slices.Contains(t.opts.Keys, k.key) {
			continue
		}
		out.Points = append(out.Points, points[k]...)
	}
	return out
}

// stepNotes adds a step's footnotes, each under the step's name; the
// legend (the first) only once.
func (t *Trender) stepNotes(notes []string, df *Diff, step string, first bool) []string {
	for i, n := range df.Footnotes {
		switch {
		case i == 0 && first:
			notes = append(notes, "Each bucket is compared with the one before it (and with the baseline) as wfb diff compares A with B. "+n)
		case i > 0:
			notes = append(notes, step+": "+n)
		}
	}
	return notes
}

// Tables returns the trend as one table in format f: a line per arm,
// metric and bucket, with the step from the previous bucket flagged when
// it is a significant change.
func (tr *Trend) Tables(f Format) []*Table {
	human := Human(f)
	level := int(math.Round((1 - tr.Options.Alpha) * 100))
	d := dual{title: fmt.Sprintf("wfb trend by %s", tr.Options.By)}
	d.col("arm", "arm")
	d.col("metric", "metric")
	d.col(tr.Options.By, "bucket")
	d.col("centre", "center")
	d.col(fmt.Sprintf("%d%% CI", level), "lo")
	if !human {
		d.col("", "hi")
	}
	d.col("n", "n")
	d.col("Δ prev", "delta")
	if !human {
		d.col("", "change")
		d.col("", "change_unit")
	}
	d.col("p", "p")
	sensitivityCols(&d, human, tr.Options.Detect.Asked())
	d.col("flag", "changed")
	if tr.Baseline != "" {
		d.col("Δ "+tr.Baseline, "base_delta")
		if !human {
			d.col("", "base_change")
			d.col("", "base_p")
			d.col("", "base_significant")
		}
	}
	for i := range tr.Points {
		tr.pointRow(&d, &tr.Points[i], human)
	}
	tbl := d.table(human, tr.Footnotes)
	tbl.Notes = true
	if tr.Options.By == "run" {
		tbl.Whole = []string{"run"}
	}
	// A narrow screen keeps each point's centre, its change and its flag.
	tbl.Shed = []string{"detectable", "n needed", fmt.Sprintf("%d%% CI", level), "n", "p"}
	return []*Table{tbl}
}

// pointRow writes one point's cells.
func (tr *Trend) pointRow(d *dual, p *TrendPoint, human bool) {
	l := &DiffLine{Metric: p.Metric, Rate: p.Rate}
	s := p.Summary
	d.same(p.Arm)
	d.cell(p.Name, p.Key)
	d.same(p.Bucket)
	d.cell(humanLine(l, s.Center), num(s.Center))
	d.cell(humanInterval(l, s.Lo, s.Hi), finite(s.Lo))
	if !human {
		d.same(finite(s.Hi))
	}
	d.same(s.N)
	stepCells(d, p.Step, human)
	sensitivityCells(d, p.Step, human, tr.Options.Detect.Asked())
	flag := ""
	if p.Changed() {
		flag = "changed"
	}
	d.cell(flag, p.Changed())
	if tr.Baseline != "" {
		if p.Base == nil {
			d.same(nil)
			if !human {
				d.same(nil)
				d.same(nil)
				d.same(nil)
			}
		} else {
			d.cell(humanDelta(p.Base), num(p.Base.Cmp.Delta))
			if !human {
				d.same(num(p.Base.Change()))
				d.same(num(p.Base.Cmp.P))
				d.same(p.Base.Comparable() && p.Base.Cmp.Significant)
			}
		}
	}
	d.endRow()
}

// stepCells writes the comparison with the previous bucket: NULL for the
// first bucket, which has none.
func stepCells(d *dual, l *DiffLine, human bool) {
	if l == nil {
		d.same(nil)
		if !human {
			d.same(nil)
			d.same(nil)
		}
		d.same(nil)
		return
	}
	d.cell(humanDelta(l), num(l.Cmp.Delta))
	if !human {
		d.same(num(l.Change()))
		d.same(changeUnit(l))
	}
	d.cell(humanP(l.Cmp.P), num(l.Cmp.P))
}

// finite returns x, or nil when it is NaN or infinite (an unbounded
// interval end).
func finite(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// humanP rounds a p-value for people.
func humanP(p float64) any {
	switch {
	case math.IsNaN(p):
		return nil
	case p < 0.001:
		return "<0.001"
	}
	return roundSig(p, 2)
}

// TrendBuckets names the buckets of `wfb trend --by` over the runs that
// have rows (present): day (the UTC date a run started), label (runs
// without one are "(no label)") or run. Buckets are ordered by their first
// run's start. ofRun maps a run id to its bucket's index.
func TrendBuckets(runs []RunInfo, by string, present map[string]bool) (names []string, ofRun map[string]int, err error) {
	bucketOf := map[string]func(RunInfo) string{
		"day": func(r RunInfo) string { return r.StartedAt[:min(10, len(r.StartedAt))] },
		"label": func(r RunInfo) string {
			if r.Label == "" {
				return "(no label)"
			}
			return r.Label
		},
		"run": func(r RunInfo) string { return r.ID },
	}[by]
	if bucketOf == nil {
		return nil, nil, fmt.Errorf("--by %q: the buckets are day, label and run", by)
	}
	sorted := slices.Clone(runs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].StartedAt < sorted[j].StartedAt })
	index := map[string]int{}
	ofRun = map[string]int{}
	for _, r := range sorted {
		if !present[r.ID] {
			continue
		}
		b := bucketOf(r)
		i, ok := index[b]
		if !ok {
			i = len(names)
			index[b] = i
			names = append(names, b)
		}
		ofRun[r.ID] = i
	}
	return names, ofRun, nil
}
