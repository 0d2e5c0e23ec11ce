package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/wfbench/wfb"
)

// TabulateOptions says how `wfb report` groups cells and which metrics the
// file has.
type TabulateOptions struct {
	// ByTask groups by task and arm; otherwise by arm alone.
	ByTask bool
	// Metrics are the metrics to summarise, usually Columns.Metrics(): a
	// metric whose column the file lacks is left out, not shown as empty.
	Metrics []Metric
	// Keep asks for every cell's measured value of these metrics to be
	// kept in Group.Values, for charts of their distribution.
	Keep []Metric
}

// Spread summarises one metric over the cells of one group: a value per
// cell (see Tabulator), taken over the cells where it was measured. For a
// continuous metric Center is the median and Q1/Q3 the quartiles (R's type
// 7, the same median benchstat reports); for a proportion Center is the
// mean (the rate) and Q1/Q3 are NaN. Everything is NaN when N is 0: nothing
// was measured, which is not the same as a measured 0.
type Spread struct {
	// N counts the cells with a measured value.
	N int
	// Partial counts the cells among N whose value sums only some of their
	// attempts, the others not measured: a lower bound.
	Partial int
	// Attempts counts the attempts whose measured values went into the
	// cells' values: for a summed metric every attempt that measured it,
	// for review quality the final attempts.
	Attempts                 int
	Center, Q1, Q3, Min, Max float64
	Sum                      float64 // sum of the cells' values
}

// Group is one line of `wfb report`: the cells of one arm (and task). A
// cell is one (run, task, arm, rep); its outcome is its final attempt's,
// the one that ends its retry chain (see isFinal), as in `wfb diff`.
type Group struct {
	Task string // empty unless grouped by task
	Arm  string
	// Cells counts the cells; Attempts every attempt of them, retries
	// included.
	Cells, Attempts int
	// OK counts the cells whose final attempt is ok.
	OK int
	// Failed counts the cells whose final attempt is not ok, by its error
	// kind.
	Failed map[string]int
	// Errored counts the cells in Failed whose kind is an error (see
	// wfb.IsErrored): they are in Cells, and left out of the clean rate.
	Errored int
	// Retried counts the attempts superseded by a retry (Attempts − Cells);
	// Superseded splits them by the kind they ended with ("ok" for an ok
	// attempt that was run again).
	Retried    int
	Superseded map[string]int
	// UsageDisagreements counts the attempts whose usage as the agent
	// reported it disagreed with the wire's (results.usage_check).
	UsageDisagreements int
	// UsageUnwitnessed counts the attempts whose agent reported billed
	// usage while no model request reached the meter (usage_verdict
	// unwitnessed); UsageAgentOnly those whose usage is the agent's report
	// in a run recorded with the meter off. Only the agent witnessed
	// either.
	UsageUnwitnessed, UsageAgentOnly int
	Metrics                          [NumMetrics]Spread
	// Values holds the sorted measured per-cell values of the metrics asked
	// for in TabulateOptions.Keep.
	Values [NumMetrics][]float64
	// CellValues holds the same metrics cell by cell, unsorted and NaN
	// where not measured, and CellOK each cell's outcome, all in one order:
	// what a chart of one metric against another needs to plot both over
	// the same cells. Empty unless TabulateOptions.Keep is.
	CellValues [NumMetrics][]float64
	CellOK     []bool
}

// StrictRate is OK/Cells: every cell counts, by its final attempt, and an
// error is a failure. NaN when there are no cells.
func (g *Group) StrictRate() float64 { return ratio(g.OK, g.Cells) }

// CleanRate is OK/(Cells − Errored): cells whose final attempt was never
// fairly measured (an error kind, see wfb.IsErrored) leave the denominator;
// failures of the workflow stay in it. NaN when every cell errored.
func (g *Group) CleanRate() float64 { return ratio(g.OK, g.Cells-g.Errored) }

// CostComplete reports whether every attempt's cost was measured, so that
// the cost sum is the group's total cost rather than a lower bound.
func (g *Group) CostComplete() bool { return g.Metrics[CostUSD].Attempts == g.Attempts }

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
	// Kinds lists the error kinds cells ended with in any group, in the
	// documented order: one column each.
	Kinds []string
	// RetriedKinds lists the kinds superseded attempts ended with in any
	// group, "ok" first, then in the documented order.
	RetriedKinds []string
	Groups       []*Group
	// OutcomeNotes explain the counts and rates (errored cells, retries,
	// unmeasured cost); MetricNotes explain the medians (what a cell's
	// value is, unmeasured values).
	OutcomeNotes, MetricNotes []string
	// outcomeGrouped and metricGrouped say the same for people: the notes
	// of one kind (say, no measured value) in one note that lists the
	// groups it is about and counts them, each group's figures kept.
	outcomeGrouped, metricGrouped []string
	// Tools is the tool use of the same attempts (LoadToolUse), set by the
	// caller: the tables show it when some attempt's tool calls were
	// measured.
	Tools *ToolUse
}

// isFinal reports whether attempt r becomes its cell's final attempt over
// prev, the final one so far (seen is false when r is the cell's first):
// the highest attempt number ends a retry chain, and of two rows with the
// same number the later one read wins. `wfb report` and `wfb diff` judge a
// cell by the attempt this picks, so the two never disagree on an outcome.
func isFinal(r *Row, prev cellOut, seen bool) bool {
	return !seen || int32(r.Attempt) >= prev.attempt
}

// outcomeOf is the outcome of a cell whose final attempt is r.
func outcomeOf(r *Row) cellOut {
	return cellOut{attempt: int32(r.Attempt), ok: r.OK, errored: wfb.OutcomeOf(r.OK, r.ErrorKind) == wfb.OutcomeErrored}
}

// Tabulator accumulates rows into a Tabulation, cell by cell. It is pure:
// rows in, a Tabulation out; nothing is read or written.
//
// A cell's outcome is its final attempt's. Its value of a usage metric
// (tokens, cost, turns, wall time) is the sum over all its attempts that
// measured it — what the cell cost, retries included — and its review
// quality is its final attempt's, the artifact the cell ended with.
type Tabulator struct {
	opts   TabulateOptions
	groups map[[2]string]*tabAcc
	last   *tabAcc // the group of the previous row: rows come in runs
	// lastRun and lastTask are the previous row's, interned.
	lastRun, lastTask lastID
	// interner numbers run ids, tasks and error kinds; id 0 is "" (ok).
	interner
}

// runTask names the cells of one run and task within a group (the group
// fixes the arm, and the task too when grouped by task).
type runTask struct{ run, task int32 }

// repIndex finds a cell of one run and task by its rep. Reps count up from
// 0, so a slice indexed by rep finds a cell without hashing; a rep outside
// what a slice should hold (negative, or absurdly large from a foreign
// writer) goes to a map instead.
type repIndex struct {
	dense  []int32 // cell index + 1 by rep; 0 = no cell yet
	sparse map[int]int32
}

// each calls f with every rep that has a cell, and the cell's index.
func (x *repIndex) each(f func(rep int, i int32)) {
	for rep, i := range x.dense {
		if i > 0 {
			f(rep, i-1)
		}
	}
	for rep, i := range x.sparse {
		f(rep, i)
	}
}

// maxDenseRep bounds the slice of a repIndex.
const maxDenseRep = 1 << 16

// find returns the index of the cell with rep, or adds one with next.
func (x *repIndex) find(rep int, next int32) (i int32, seen bool) {
	if rep < 0 || rep >= maxDenseRep {
		if x.sparse == nil {
			x.sparse = map[int]int32{}
		}
		if i, ok := x.sparse[rep]; ok {
			return i, true
		}
		x.sparse[rep] = next
		return next, false
	}
	if rep >= len(x.dense) {
		x.dense = append(x.dense, make([]int32, rep+1-len(x.dense))...)
	}
	if i := x.dense[rep]; i > 0 {
		return i - 1, true
	}
	x.dense[rep] = next + 1
	return next, false
}

// tabCell is a cell's outcome so far. Its values live in its group's
// columns, at the same index, so that a million cells cost a few small
// structs and one float per metric each, not a map entry of every metric.
type tabCell struct {
	out  cellOut
	kind int32 // the final attempt's error kind; 0 when ok
	// partial has bit m set when an attempt of the cell did not measure
	// summed metric m.
	partial uint16
}

type tabAcc struct {
	task, arm     string
	attempts      int
	disagreements int
	unwitnessed   int
	agentOnly     int
	index         map[runTask]*repIndex
	lastRT        runTask
	lastIndex     *repIndex
	cells         chunked[tabCell]
	// values holds, per metric asked for, one value per cell: a summed
	// metric's sum over the measured attempts (NaN until one is), review
	// quality from the final attempt. A column ends after the last cell
	// that has a value: a metric nothing measured (review quality in a
	// bench without reviews) takes no room.
	values     [NumMetrics]numCol
	measured   [NumMetrics]int // attempts that measured each summed metric
	superseded map[int32]int   // superseded attempts by kind id
}

// chunked is a growing column in fixed-size blocks: past the first block,
// appending never copies what is there, so a million cells allocate their
// columns once rather than five times over, as a slice growing by a quarter
// would.
type chunked[T any] struct {
	blocks [][]T
	n      int
}

const chunkSize = 4096

func (c *chunked[T]) len() int { return c.n }

func (c *chunked[T]) add(v T) {
	// The first block grows as a slice does, up to chunkSize: a diff by
	// task and arm holds a column per task and arm, most of them a few
	// cells long.
	switch {
	case c.n == 0:
		c.blocks = append(c.blocks, make([]T, 0, 8))
	case c.n%chunkSize == 0:
		c.blocks = append(c.blocks, make([]T, 0, chunkSize))
	}
	b := &c.blocks[len(c.blocks)-1]
	*b = append(*b, v)
	c.n++
}

func (c *chunked[T]) at(i int) *T { return &c.blocks[i/chunkSize][i%chunkSize] }

// each calls f with every element in order.
func (c *chunked[T]) each(f func(i int, v *T)) {
	for bi, b := range c.blocks {
		for j := range b {
			f(bi*chunkSize+j, &b[j])
		}
	}
}

// NewTabulator returns an empty Tabulator.
func NewTabulator(opts TabulateOptions) *Tabulator {
	return &Tabulator{opts: opts, groups: map[[2]string]*tabAcc{}, interner: interner{names: []string{""}, ids: map[string]int32{"": 0}}}
}

// kindName names a kind id for people and columns.
func (t *Tabulator) kindName(id int32) string {
	if id == 0 {
		return "ok"
	}
	return t.names[id]
}

// intern returns the id of s, looking at the previous one first: rows of
// one run, and often of one task, come together.
func (t *Tabulator) intern(last *lastID, s string) int32 {
	if last.ok && last.s == s {
		return last.id
	}
	*last = lastID{s: s, id: t.id(s), ok: true}
	return last.id
}

type lastID struct {
	s  string
	id int32
	ok bool
}

// cellIndex returns the index of the cells of one run and task.
func (a *tabAcc) cellIndex(rt runTask) *repIndex {
	if a.lastIndex != nil && a.lastRT == rt {
		return a.lastIndex
	}
	x := a.index[rt]
	if x == nil {
		x = &repIndex{}
		a.index[rt] = x
	}
	a.lastRT, a.lastIndex = rt, x
	return x
}

// group returns the accumulator of r's group.
func (t *Tabulator) group(r *Row) *tabAcc {
	task := ""
	if t.opts.ByTask {
		task = r.Task
	}
	if a := t.last; a != nil && a.arm == r.Arm && a.task == task {
		return a
	}
	key := [2]string{task, r.Arm}
	a := t.groups[key]
	if a == nil {
		a = &tabAcc{task: task, arm: r.Arm, index: map[runTask]*repIndex{}, superseded: map[int32]int{}}
		t.groups[key] = a
	}
	t.last = a
	return a
}

// Add counts one attempt. r is not retained.
func (t *Tabulator) Add(r *Row) {
	a := t.group(r)
	a.attempts++
	if r.UsageDisagrees {
		a.disagreements++
	}
	if r.UsageUnwitnessed {
		a.unwitnessed++
	}
	if r.UsageAgentOnly {
		a.agentOnly++
	}
	kind := int32(0)
	if !r.OK {
		k := r.ErrorKind
		if k == "" {
			// The schema forbids this; if a foreign writer managed it,
			// the attempt still counts as failed, under a name that
			// says so.
			k = "unknown"
		}
		kind = t.id(k)
	}
	n, seen := a.cellIndex(runTask{t.intern(&t.lastRun, r.RunID), t.intern(&t.lastTask, r.Task)}).find(r.Rep, int32(a.cells.len()))
	i := int(n)
	if !seen {
		a.cells.add(tabCell{})
	}
	c := a.cells.at(i)
	final := isFinal(r, c.out, seen)
	switch {
	case !seen:
	case final:
		a.superseded[c.kind]++
	default:
		a.superseded[kind]++
	}
	for _, m := range t.opts.Metrics {
		v := r.Values[m]
		col := &a.values[m]
		switch {
		case m.Quality():
			// A cell past the column's end is unmeasured already.
			if final && (i < col.len() || !math.IsNaN(v)) {
				col.extend(i + 1)
				col.set(i, v)
			}
		case math.IsNaN(v):
			c.partial |= 1 << m
		default:
			a.measured[m]++
			col.extend(i + 1)
			col.sum(i, v)
		}
	}
	if final {
		c.out, c.kind = outcomeOf(r), kind
	}
}

// Result summarises what was added. Groups are sorted by task, then arm.
// The Tabulator is left as it was: more rows may be added, and Result
// called again.
func (t *Tabulator) Result() *Tabulation {
	tab := &Tabulation{Options: t.opts}
	tab.Options.Metrics = scoredOnly(t.opts.Metrics, func(m Metric) bool {
		for _, a := range t.groups {
			if a.values[m].measured() > 0 {
				return true
			}
		}
		return false
	})
	kinds, retried := map[string]bool{}, map[string]bool{}
	for _, a := range t.groups {
		g := &Group{Task: a.task, Arm: a.arm, Attempts: a.attempts, Cells: a.cells.len(),
			Failed: map[string]int{}, Superseded: map[string]int{}, UsageDisagreements: a.disagreements,
			UsageUnwitnessed: a.unwitnessed, UsageAgentOnly: a.agentOnly}
		a.cells.each(func(_ int, c *tabCell) {
			switch {
			case c.out.ok:
				g.OK++
			default:
				g.Failed[t.kindName(c.kind)]++
				if c.out.errored {
					g.Errored++
				}
			}
		})
		for k, n := range a.superseded {
			g.Superseded[t.kindName(k)] += n
			g.Retried += n
			retried[t.kindName(k)] = true
		}
		for _, m := range tab.Options.Metrics {
			// spreadOf sorts what it is given: a copy of the measured
			// values, one metric at a time, so the cells keep theirs.
			vs := make([]float64, 0, a.values[m].len())
			partial := 0
			a.values[m].each(func(i int, v float64) {
				if math.IsNaN(v) {
					return
				}
				vs = append(vs, v)
				if !m.Quality() && a.cells.at(i).partial&(1<<m) != 0 {
					partial++
				}
			})
			s := spreadOf(m, vs)
			s.Partial, s.Attempts = partial, a.measured[m]
			if m.Quality() {
				s.Attempts = s.N
			}
			g.Metrics[m] = s
			if slices.Contains(t.opts.Keep, m) {
				g.Values[m] = vs
			}
		}
		keepCells(g, a, t.opts.Keep, tab.Options.Metrics)
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
	tab.RetriedKinds = sortedWithOK(retried)
	outcome, metric := tabulationNotes(tab)
	tab.OutcomeNotes, tab.MetricNotes = singleNotes(outcome), singleNotes(metric)
	tab.outcomeGrouped = groupedNotes(outcome, len(tab.Groups), tab.Options.ByTask)
	tab.metricGrouped = groupedNotes(metric, len(tab.Groups), tab.Options.ByTask)
	return tab
}

// keepCells copies to g, cell by cell, the values of the metrics in keep
// (of those measured) and the cells' outcomes.
func keepCells(g *Group, a *tabAcc, keep, measured []Metric) {
	if len(keep) == 0 {
		return
	}
	for _, m := range keep {
		if !slices.Contains(measured, m) {
			continue
		}
		col := make([]float64, g.Cells)
		for i := range col {
			col[i] = math.NaN() // past the column's end: not measured
		}
		a.values[m].each(func(i int, v float64) { col[i] = v })
		g.CellValues[m] = col
	}
	g.CellOK = make([]bool, 0, g.Cells)
	a.cells.each(func(_ int, c *tabCell) { g.CellOK = append(g.CellOK, c.out.ok) })
}

// sortedWithOK lists the kinds in set, "ok" first, then in documentation
// order.
func sortedWithOK(set map[string]bool) []string {
	var ks []string
	for k := range set {
		if k != "ok" {
			ks = append(ks, k)
		}
	}
	sortKinds(ks)
	if set["ok"] {
		ks = append([]string{"ok"}, ks...)
	}
	return ks
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

// kindCounts spells counts by kind in the order of kinds: "provider-error
// ×3, timeout ×1".
func kindCounts(kinds []string, counts map[string]int, keep func(string) bool) string {
	var parts []string
	for _, k := range kinds {
		if n := counts[k]; n > 0 && keep(k) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	return strings.Join(parts, ", ")
}

// groupNote is one note about one group: what it says of every group it
// is about (head), and this group's figures (detail).
type groupNote struct {
	g            *Group
	head, detail string
	// alone is the note as a sentence about its group alone.
	alone string
}

func (n groupNote) single() string { return n.alone }

// singleNotes are notes each about its own group: every fact where a
// program finds it by group (csv and json).
func singleNotes(notes []groupNote) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.single()
	}
	return out
}

// groupNotesFrom is how many groups a kind of note must be about before
// people get it as one note: two read as well one by one.
const groupNotesFrom = 3

// groupedNotes are notes for people: one per head, in the order heads
// first appear, saying how many of the groups it is about and, for each
// detail, which groups have it. A head about fewer than groupNotesFrom
// groups reads as their single notes. Nothing of singleNotes is lost.
func groupedNotes(notes []groupNote, groups int, byTask bool) []string {
	var heads []string
	byHead := map[string][]groupNote{}
	for _, n := range notes {
		if byHead[n.head] == nil {
			heads = append(heads, n.head)
		}
		byHead[n.head] = append(byHead[n.head], n)
	}
	out := make([]string, 0, len(heads))
	for _, h := range heads {
		ns := byHead[h]
		if len(ns) < groupNotesFrom {
			out = append(out, singleNotes(ns)...)
			continue
		}
		var details []string
		where := map[string][]*Group{}
		for _, n := range ns {
			if where[n.detail] == nil {
				details = append(details, n.detail)
			}
			where[n.detail] = append(where[n.detail], n.g)
		}
		parts := make([]string, len(details))
		for i, d := range details {
			parts[i] = d + " — " + groupList(where[d], byTask)
		}
		out = append(out, fmt.Sprintf("%s, for %d of %d groups: %s.", upperFirst(h), len(ns), groups, strings.Join(parts, "; ")))
	}
	return out
}

// groupList names groups compactly: "arms a, b", or by task "task t1
// (arms a, b), tasks t2, t3 (arm c)" — tasks with the same arms together.
func groupList(gs []*Group, byTask bool) string {
	arms := func(as []string) string {
		if len(as) == 1 {
			return "arm " + as[0]
		}
		return "arms " + strings.Join(as, ", ")
	}
	if !byTask {
		var as []string
		for _, g := range gs {
			as = append(as, g.Arm)
		}
		return arms(as)
	}
	var tasks []string
	armsOf := map[string][]string{}
	for _, g := range gs {
		if armsOf[g.Task] == nil {
			tasks = append(tasks, g.Task)
		}
		armsOf[g.Task] = append(armsOf[g.Task], g.Arm)
	}
	var sets []string
	tasksOf := map[string][]string{}
	for _, t := range tasks {
		k := arms(armsOf[t])
		if tasksOf[k] == nil {
			sets = append(sets, k)
		}
		tasksOf[k] = append(tasksOf[k], t)
	}
	parts := make([]string, len(sets))
	for i, k := range sets {
		ts := tasksOf[k]
		word := "task "
		if len(ts) > 1 {
			word = "tasks "
		}
		parts[i] = word + strings.Join(ts, ", ") + " (" + k + ")"
	}
	return strings.Join(parts, ", ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// tabulationNotes explains, group by group, what the rates and medians left
// out or folded in: retries, errored cells, unmeasured values.
func tabulationNotes(tab *Tabulation) (outcome, metric []groupNote) {
	for _, g := range tab.Groups {
		name := groupName(g.Task, g.Arm)
		note := func(to *[]groupNote, alone, head, detail string, args ...any) {
			*to = append(*to, groupNote{g: g, head: head, detail: fmt.Sprintf(detail, args...), alone: fmt.Sprintf(alone, append([]any{name}, args...)...)})
		}
		if g.Retried > 0 {
			note(&outcome, "%s: %d attempts for %d cells: %d superseded by a retry (%s); each cell counts once, by its final attempt.",
				"attempts superseded by a retry (each cell counts once, by its final attempt)", "%d attempts for %d cells, %d superseded (%s)",
				g.Attempts, g.Cells, g.Retried, kindCounts(tab.RetriedKinds, g.Superseded, func(string) bool { return true }))
		}
		if g.Errored > 0 {
			note(&outcome, "%s: %d of %d cells ended errored (%s): they count as not ok in the strict rate and are left out of the clean rate's denominator.",
				"cells ended errored (not ok in the strict rate, left out of the clean rate's denominator)", "%d of %d cells (%s)",
				g.Errored, g.Cells, kindCounts(tab.Kinds, g.Failed, wfb.IsErrored))
		}
		if c := g.Metrics[CostUSD]; slices.Contains(tab.Options.Metrics, CostUSD) && !g.CostComplete() {
			if c.Attempts == 0 {
				note(&outcome, "%s: cost unmeasured for all %d attempts: the cost total is NULL, not 0.",
					"cost unmeasured for every attempt (the cost total is NULL, not 0)", "%d attempts", g.Attempts)
			} else {
				outcome = append(outcome, groupNote{g: g,
					head:   "cost unmeasured for some attempts (the cost total sums the measured, marked *: a lower bound)",
					detail: fmt.Sprintf("%d of %d attempts unmeasured", g.Attempts-c.Attempts, g.Attempts),
					alone: fmt.Sprintf("%s: cost unmeasured for %d of %d attempts: the cost total is the sum over the %d measured (marked *), a lower bound.",
						name, g.Attempts-c.Attempts, g.Attempts, c.Attempts)})
			}
		}
		if g.UsageDisagreements > 0 {
			note(&metric, "%s: usage disagreed with the provider's wire for %d of %d attempts (usage_check); the token figures are the wire's unless --usage reported.",
				"usage disagreed with the provider's wire (usage_check); the token figures are the wire's unless --usage reported", "%d of %d attempts",
				g.UsageDisagreements, g.Attempts)
		}
		if g.UsageUnwitnessed > 0 {
			note(&metric, "%s: unwitnessed: %d of %d attempts reported usage but made no request through the meter (usage_verdict unwitnessed): their token figures are the agent's alone — it bypassed its base URL or invented them.",
				"unwitnessed: attempts reported usage but made no request through the meter (usage_verdict unwitnessed): their token figures are the agent's alone — it bypassed its base URL or invented them",
				"%d of %d attempts", g.UsageUnwitnessed, g.Attempts)
		}
		if g.UsageAgentOnly > 0 {
			note(&metric, "%s: agent-reported only: %d of %d attempts' usage was not witnessed by the wire (meter off); a CLI's figures may be zero-filled or rounded.",
				"agent-reported only: usage not witnessed by the wire (meter off); a CLI's figures may be zero-filled or rounded", "%d of %d attempts",
				g.UsageAgentOnly, g.Attempts)
		}
		var missing, partial []string
		for _, m := range tab.Options.Metrics {
			s := g.Metrics[m]
			if s.N < g.Cells {
				missing = append(missing, fmt.Sprintf("%s %d", m.Name(), g.Cells-s.N))
			}
			if s.Partial > 0 {
				partial = append(partial, fmt.Sprintf("%s %d", m.Name(), s.Partial))
			}
		}
		if len(missing) > 0 {
			note(&metric, "%s: no measured value (NULL), left out of the medians: %s of %d cells.",
				"no measured value (NULL), left out of the medians", "%s of %d cells", strings.Join(missing, ", "), g.Cells)
		}
		if len(partial) > 0 {
			note(&metric, "%s: measured on only some of a cell's attempts (the others NULL), so its sum is a lower bound: %s of %d cells.",
				"measured on only some of a cell's attempts (the others NULL), so its sum is a lower bound", "%s of %d cells",
				strings.Join(partial, ", "), g.Cells)
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

// SpreadOf summarises the measured values of metric m (sorting them in
// place) as a Group's Metrics do: N, the centre, quartiles, extremes and
// sum, each NaN when nothing was measured.
func SpreadOf(m Metric, values []float64) Spread { return spreadOf(m, values) }
