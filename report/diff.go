package report

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report/stats"
)

// DiffOptions says how `wfb diff` groups and judges a comparison.
type DiffOptions struct {
	// ByTask compares task by task (and arm by arm); otherwise arm by arm.
	ByTask bool
	// Alpha is the significance level; a change with p > Alpha shows "~".
	Alpha float64
	// Metrics are the metrics to compare, usually Columns.Metrics().
	Metrics []Metric
	// Detect is the change each line is sized for (--detect); zero for
	// none. Every line says what it could detect either way.
	Detect Detect
	// OneSided keeps an arm only one side has: its lines carry that side's
	// figures and are not comparable (the note "only in A" still says so).
	// A trend needs it, so that an arm that skipped a bucket keeps the
	// buckets it was measured in.
	OneSided bool
}

// Side names the two sides of a diff.
const (
	SideA = 0
	SideB = 1
)

// Differ accumulates the attempts of side A and side B and compares them.
// It is pure: rows in, a Diff out.
//
// How the sides line up is decided from the data:
//
//   - When the sides share arms (two runs of one bench), each shared arm is
//     compared with itself; an arm on one side only is named in a footnote.
//     When they share none (arm=baseline vs arm=candidate), everything in A
//     is compared with everything in B, as one line "baseline → candidate".
//   - Pass/fail is judged per cell (run, task, arm, rep) on its last attempt.
//     Cells pair up by task and rep — and by arm when arms are compared with
//     themselves, and by run when both sides come from the same runs. When
//     every cell has exactly one partner, the exact McNemar test compares the
//     pairs; otherwise Fisher's exact test compares the two sets of cells, and
//     a footnote says why they did not pair.
//   - Continuous metrics are compared over the cells' measured values with
//     the Mann–Whitney U test. A cell's value is what `wfb report` takes:
//     each side accumulates its cells in a Tabulator grouped by task and
//     arm, so report and diff share one definition (see the package doc).
type Differ struct {
	opts DiffOptions
	interner
	sides [2]*sideAcc
	spent bool // Result has run: the samples are gone
}

type cellKey struct{ run, task, arm, rep int32 }

type cellOut struct {
	attempt int32
	ok      bool
	errored bool // not ok, with an error kind (see wfb.IsErrored)
}

type taskArm struct{ task, arm int32 }

type sideAcc struct {
	// tab holds the side's cells by task and arm: their outcomes and their
	// values of each metric, as `wfb report` computes them.
	tab      *Tabulator
	versions map[int32]bool
	runs     map[int32]bool
	retries  int
	// disagree counts, per arm, the attempts whose usage the agent
	// reported other than the wire.
	disagree map[int32]int
	// labels holds, per task and arm, the label sets its attempts' latest
	// scores were taken against.
	labels map[taskArm]map[int32]bool
	// The ids above are the side's own while its rows are added, so that
	// the sides can load at once; Result turns them into the Differ's
	// (settle), side A's names first, each side's in the order they came,
	// the ids one loop adding both sides in turn would have given them.
	interner
}

// interner numbers strings in the order they come: id(s) is s's number,
// names[id] the string.
type interner struct {
	names []string
	ids   map[string]int32
}

func (n *interner) id(s string) int32 {
	if i, ok := n.ids[s]; ok {
		return i
	}
	i := int32(len(n.names))
	n.names = append(n.names, s)
	n.ids[s] = i
	return i
}

// NewDiffer returns an empty Differ.
func NewDiffer(opts DiffOptions) *Differ {
	d := &Differ{opts: opts, interner: interner{ids: map[string]int32{}}}
	d.id("") // id 0 is the empty string
	for i := range d.sides {
		d.sides[i] = &sideAcc{tab: NewTabulator(TabulateOptions{ByTask: true, Metrics: opts.Metrics}),
			versions: map[int32]bool{}, runs: map[int32]bool{}, disagree: map[int32]int{}, labels: map[taskArm]map[int32]bool{},
			interner: interner{ids: map[string]int32{}}}
	}
	return d
}

// Add counts one attempt on side (SideA or SideB). r is not retained.
// Adds to different sides may run at once; adds to one side may not.
func (d *Differ) Add(side int, r *Row) {
	if d.spent {
		panic("report: Differ.Add after Result")
	}
	s := d.sides[side]
	s.tab.Add(r)
	s.runs[s.id(r.RunID)] = true
	if r.AgentVersion != "" {
		s.versions[s.id(r.AgentVersion)] = true
	}
	if r.Attempt > 1 {
		s.retries++
	}
	if r.UsageDisagrees {
		s.disagree[s.id(r.Arm)]++
	}
	if r.LabelsDigest != "" {
		ta := taskArm{s.id(r.Task), s.id(r.Arm)}
		if s.labels[ta] == nil {
			s.labels[ta] = map[int32]bool{}
		}
		s.labels[ta][s.id(r.LabelsDigest)] = true
	}
}

// settle gives the sides' own ids the Differ's (see sideAcc.interner).
func (d *Differ) settle() {
	for _, s := range d.sides {
		global := make([]int32, len(s.names))
		for i, name := range s.names {
			global[i] = d.id(name)
		}
		s.versions = remapKeys(s.versions, global)
		s.runs = remapKeys(s.runs, global)
		s.disagree = remapKeys(s.disagree, global)
		labels := make(map[taskArm]map[int32]bool, len(s.labels))
		for ta, set := range s.labels {
			labels[taskArm{global[ta.task], global[ta.arm]}] = remapKeys(set, global)
		}
		s.labels = labels
		s.interner = interner{}
	}
}

// remapKeys is m with each key k renumbered global[k].
func remapKeys[V any](m map[int32]V, global []int32) map[int32]V {
	out := make(map[int32]V, len(m))
	for k, v := range m {
		out[global[k]] = v
	}
	return out
}

// DiffLine is one compared metric of one group.
type DiffLine struct {
	Task string // empty unless compared by task
	Arm  string // the arm, or "a → b" when the sides have different arms
	// Key is a stable name for programs ("strict_pass_rate", "cost_usd");
	// Name is for people.
	Key, Name string
	// Metric is the metric compared; meaningless for the pass rates (Rate).
	Metric Metric
	Rate   bool
	Cmp    stats.Comparison
	// Sens says what change the line's test could detect at its n, and
	// the n it needs for the change Options.Detect asks.
	Sens stats.Sensitivity
	// Units is the cells per repetition in the group on side A (tasks ×
	// arms): the needed cells divided by it is the bench's runs:.
	Units int
	// LabelsDiffer marks a review-quality line whose sides were scored
	// against different labels: it is not comparable (LabelsNote names the
	// label sets).
	LabelsDiffer bool
	LabelsNote   string
}

// Diff is what `wfb diff` shows, before rendering.
type Diff struct {
	Options DiffOptions
	// ByArm is false when the sides have no arm in common and were
	// compared as a whole.
	ByArm     bool
	Lines     []DiffLine
	Footnotes []string
	// Tools is each side's tool use (LoadToolUse, by arm), set by
	// DiffSides; its changes are shown beside the lines, descriptive only.
	Tools [2]*ToolUse
}

type groupKey struct{ task, arm int32 }

type pairKey struct{ run, task, arm, rep int32 }

// Result compares the sides. runs describes the runs in the file, for the
// fingerprint warning; runs a side did not touch are ignored. It lets each
// group's samples go once compared, so that a diff of a million attempts
// holds at most one group twice: a Differ gives one Result, and Add or
// Result after it panics.
func (d *Differ) Result(runs []RunInfo) *Diff {
	d.spend()
	d.settle()
	out := &Diff{Options: d.opts}
	out.Options.Metrics = scoredOnly(d.opts.Metrics, d.measured)
	sh, notes := d.shape()
	out.ByArm = sh.byArm
	members := sh.members()
	for _, gk := range d.sortedGroups(members) {
		a := sh.group(members[gk])
		lines, groupNotes := d.compareGroup(gk, a, sh, out.Options.Metrics)
		a.release()
		notes = append(notes, groupNotes...)
		out.Lines = append(out.Lines, lines...)
	}
	notes = append(notes, d.sideWarnings(runs)...)
	out.Footnotes = append([]string{diffNote(d.opts.Alpha) + " " + powerNote(d.opts.Alpha, d.opts.Detect)}, notes...)
	return out
}

func (d *Differ) spend() {
	if d.spent {
		panic("report: Differ.Result called twice; it consumes the samples")
	}
	d.spent = true
}

// measured reports whether either side has a value for m.
func (d *Differ) measured(m Metric) bool {
	for _, s := range d.sides {
		for _, a := range s.tab.groups {
			if a.values[m].measured() > 0 {
				return true
			}
		}
	}
	return false
}

// diffShape says how the sides line up: which groups they are compared in
// and which of their cells are partners.
type diffShape struct {
	d *Differ
	// byArm: the sides share an arm (common), and are compared arm by arm;
	// otherwise as a whole, under acrossLabel ("a → b").
	byArm       bool
	common      map[int32]bool
	acrossLabel string
	// sameRuns: both sides come from the same runs, so cells pair by run
	// too.
	sameRuns bool
}

// shape lines the sides up, with a note for each arm only one side has.
func (d *Differ) shape() (*diffShape, []string) {
	A, B := d.sides[SideA], d.sides[SideB]
	sh := &diffShape{d: d, common: map[int32]bool{}, sameRuns: len(A.runs) == len(B.runs)}
	armsA, armsB := d.armsOf(A), d.armsOf(B)
	for a := range armsA {
		if armsB[a] || d.opts.OneSided {
			sh.common[a] = true
		}
	}
	if d.opts.OneSided {
		for a := range armsB {
			sh.common[a] = true
		}
	}
	for r := range A.runs {
		if !B.runs[r] {
			sh.sameRuns = false
		}
	}
	sh.byArm = len(sh.common) > 0
	if !sh.byArm {
		sh.acrossLabel = d.joinNames(armsA) + " → " + d.joinNames(armsB)
		return sh, nil
	}
	var notes []string
	for _, side := range []struct {
		name       string
		arms, peer map[int32]bool
	}{{"A", armsA, armsB}, {"B", armsB, armsA}} {
		var only []string
		for a := range side.arms {
			if !side.peer[a] {
				only = append(only, d.names[a])
			}
		}
		if len(only) > 0 {
			sort.Strings(only)
			notes = append(notes, fmt.Sprintf("arm %s only in %s: not compared.", strings.Join(only, ", "), side.name))
		}
	}
	return sh, notes
}

// groupKey returns the group a task and arm are compared in, and false
// for an arm only one side has when comparing by arm.
func (sh *diffShape) groupKey(task, arm int32) (groupKey, bool) {
	g := groupKey{task: -1, arm: -1}
	if sh.d.opts.ByTask {
		g.task = task
	}
	if sh.byArm {
		if !sh.common[arm] {
			return g, false
		}
		g.arm = arm
	}
	return g, true
}

// pairKey returns what a cell has in common with its partner on the other
// side.
func (sh *diffShape) pairKey(c cellKey) pairKey {
	p := pairKey{run: -1, task: c.task, arm: -1, rep: c.rep}
	if sh.sameRuns {
		p.run = c.run
	}
	if sh.byArm {
		p.arm = c.arm
	}
	return p
}

// fineOf is one task and arm's cells on one side, as a member of a group.
type fineOf struct {
	ta  taskArm
	acc *tabAcc
	tab *Tabulator
}

// members returns each group's fines, per side. A group's pairs and values
// are built from them one group at a time (group) and dropped once
// compared, so at most one group's copy sits beside the accumulated sides.
func (sh *diffShape) members() map[groupKey]*[2][]fineOf {
	members := map[groupKey]*[2][]fineOf{}
	for i, s := range sh.d.sides {
		for _, a := range s.tab.groups {
			ta := taskArm{sh.d.id(a.task), sh.d.id(a.arm)}
			g, ok := sh.groupKey(ta.task, ta.arm)
			if !ok {
				continue
			}
			m := members[g]
			if m == nil {
				m = &[2][]fineOf{}
				members[g] = m
			}
			m[i] = append(m[i], fineOf{ta, a, s.tab})
		}
	}
	return members
}

// groupAcc is one group of both sides, ready to compare.
type groupAcc struct {
	// cells holds each side's cells by pair key: one slot per key, in
	// key order (a sorted slice takes a fifth of a map's room, and two of
	// them pair up by a merge).
	cells [2][]pairSlot
	// n counts each side's cells; kinds counts them by their final
	// attempt's error kind.
	n     [2]int
	kinds [2]map[int32]int
	fines *[2][]fineOf // the cells' values are read from here; see values
}

// group gathers a group's members into its pair slots and kind counts.
func (sh *diffShape) group(members *[2][]fineOf) *groupAcc {
	a := &groupAcc{fines: members}
	for i, fines := range members {
		n := 0
		for _, fo := range fines {
			n += fo.acc.cells.len()
		}
		a.n[i] = n
		cells := make([]pairSlot, 0, n)
		a.kinds[i] = map[int32]int{}
		for _, src := range sh.cellSources(fines) {
			cells = sh.addCells(cells, a.kinds[i], src)
		}
		a.cells[i] = mergeSlots(cells)
	}
	return a
}

// cellSource is the cells of one run in one fine: reps in ascending order
// (the dense ones; repIndex.each).
type cellSource struct {
	fo  fineOf
	run int32
	x   *repIndex
}

// cellSources lists the fines' runs in the order of their pair keys, so
// that their slots usually come out already sorted (one run a side, or runs
// not part of the key) and mergeSlots need not sort them.
func (sh *diffShape) cellSources(fines []fineOf) []cellSource {
	var srcs []cellSource
	for _, fo := range fines {
		for rt, x := range fo.acc.index {
			srcs = append(srcs, cellSource{fo, sh.d.id(fo.tab.names[rt.run]), x})
		}
	}
	slices.SortFunc(srcs, func(a, b cellSource) int { return sh.sourceKey(a).compare(sh.sourceKey(b)) })
	return srcs
}

// sourceKey is the pair key of a source's first possible rep.
func (sh *diffShape) sourceKey(s cellSource) pairKey {
	return sh.pairKey(cellKey{run: s.run, task: s.fo.ta.task, arm: s.fo.ta.arm, rep: math.MinInt32})
}

// addCells appends a slot for each of a source's cells, and counts their
// kinds.
func (sh *diffShape) addCells(cells []pairSlot, kinds map[int32]int, src cellSource) []pairSlot {
	d, fo := sh.d, src.fo
	src.x.each(func(rep int, i int32) {
		c := fo.acc.cells.at(int(i))
		if !c.out.ok {
			kinds[d.id(fo.tab.kindName(c.kind))]++
		}
		slot := pairSlot{key: sh.pairKey(cellKey{run: src.run, task: fo.ta.task, arm: fo.ta.arm, rep: int32(rep)}), first: c.out}
		slot.add(c.out)
		cells = append(cells, slot)
	})
	return cells
}

// mergeSlots sorts one side's slots by key, unless they already are (see
// cellSources), and merges those of one key into the first, which then
// counts all their cells.
func mergeSlots(cells []pairSlot) []pairSlot {
	byKey := func(a, b pairSlot) int { return a.key.compare(b.key) }
	if !slices.IsSortedFunc(cells, byKey) {
		slices.SortFunc(cells, byKey)
	}
	out := cells[:0]
	for _, c := range cells {
		if n := len(out); n > 0 && out[n-1].key == c.key {
			o := &out[n-1]
			o.n, o.pass, o.cleanN, o.cleanOK = o.n+c.n, o.pass+c.pass, o.cleanN+c.cleanN, o.cleanOK+c.cleanOK
			continue
		}
		out = append(out, c)
	}
	return slices.Clip(out)
}

func (p pairKey) compare(q pairKey) int {
	return cmp.Or(cmp.Compare(p.run, q.run), cmp.Compare(p.task, q.task), cmp.Compare(p.arm, q.arm), cmp.Compare(p.rep, q.rep))
}

// values returns side's measured per-cell values of m in the group.
func (a *groupAcc) values(side int, m Metric) []float64 {
	n := 0
	for _, fo := range a.fines[side] {
		n += fo.acc.values[m].measured()
	}
	out := make([]float64, 0, n)
	for _, fo := range a.fines[side] {
		out = fo.acc.values[m].appendMeasured(out)
	}
	return out
}

// strata returns each side's measured values of m in the group, task by
// task in the order of their names (the same index on both sides for the
// same task, whatever order the group's members came in): a bench runs
// every task the same number of times, so their shares are fixed. Each
// side's values share one buffer of exactly their size.
func (a *groupAcc) strata(m Metric) (sa, sb [][]float64) {
	index := map[string]int{}
	var out [2][][]float64
	for side, fines := range a.fines {
		// In task and arm order, not the order the fines were gathered
		// in (a map's): the power figures must not change from one run
		// of the same command to the next.
		fines = slices.Clone(fines)
		slices.SortFunc(fines, func(x, y fineOf) int {
			return cmp.Or(strings.Compare(x.acc.task, y.acc.task), strings.Compare(x.acc.arm, y.acc.arm))
		})
		stratum := make([]int, len(fines))
		var sizes []int
		for f, fo := range fines {
			i, ok := index[fo.acc.task]
			if !ok {
				i = len(index)
				index[fo.acc.task] = i
			}
			for len(sizes) <= i {
				sizes = append(sizes, 0)
			}
			stratum[f] = i
			sizes[i] += fo.acc.values[m].measured()
		}
		buf := make([]float64, 0, sumInts(sizes))
		out[side] = make([][]float64, len(sizes))
		for i, n := range sizes {
			out[side][i] = buf[len(buf) : len(buf) : len(buf)+n]
			buf = buf[:len(buf)+n]
		}
		for f, fo := range fines {
			out[side][stratum[f]] = fo.acc.values[m].appendMeasured(out[side][stratum[f]])
		}
	}
	return out[SideA], out[SideB]
}

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// units counts side A's tasks and arms in the group that measured m (every
// one, for a pass rate): the cells one repetition of the bench adds to the
// comparison.
func (a *groupAcc) units(m Metric, rate bool) int {
	n := 0
	for _, fo := range a.fines[SideA] {
		if rate || fo.acc.values[m].measured() > 0 {
			n++
		}
	}
	return max(n, 1)
}

// release lets the group's cells go once compared: each fine belongs to
// one group.
func (a *groupAcc) release() {
	for _, fines := range a.fines {
		for _, fo := range fines {
			delete(fo.tab.groups, [2]string{fo.acc.task, fo.acc.arm})
			fo.tab.last = nil
		}
	}
}

// name is the name of id; "" for -1, a group that spans every task or arm.
func (d *Differ) name(id int32) string {
	if id < 0 {
		return ""
	}
	return d.names[id]
}

// sortedGroups orders the groups by task, then arm, by name.
func (d *Differ) sortedGroups(members map[groupKey]*[2][]fineOf) []groupKey {
	keys := make([]groupKey, 0, len(members))
	for g := range members {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if d.name(a.task) != d.name(b.task) {
			return d.name(a.task) < d.name(b.task)
		}
		return d.name(a.arm) < d.name(b.arm)
	})
	return keys
}

// compareGroup compares one group's pass rates and metrics, with the
// group's warnings.
func (d *Differ) compareGroup(gk groupKey, a *groupAcc, sh *diffShape, metrics []Metric) ([]DiffLine, []string) {
	alpha := d.opts.Alpha
	task, arm := d.name(gk.task), d.name(gk.arm)
	if !sh.byArm {
		arm = sh.acrossLabel
	}
	where := groupName(task, arm)
	var lines []DiffLine
	var notes []string
	line := func(key, nm string, m Metric, rate bool, c stats.Comparison, s stats.Sensitivity) {
		lines = append(lines, DiffLine{Task: task, Arm: arm, Key: key, Name: nm, Metric: m, Rate: rate, Cmp: c, Sens: s, Units: a.units(m, rate)})
	}

	pf := comparePassFail(a.cells, alpha, rateTarget(d.opts.Detect))
	if pf.why != "" {
		notes = append(notes, where+": "+pf.why)
	}
	line("strict_pass_rate", "strict pass rate (%)", 0, true, pf.strict, pf.strictSens)
	line("clean_pass_rate", "clean pass rate (%)", 0, true, pf.clean, pf.cleanSens)
	// The metrics are compared side by side, one per CPU (each sorts its
	// sides' values: most of a large diff's statistics), and listed in
	// their order.
	type compared struct {
		c stats.Comparison
		s stats.Sensitivity
	}
	results := make([]compared, len(metrics))
	eachInParallel(len(metrics), func(i int) {
		m := metrics[i]
		if m.Kind() == Proportion {
			va, vb := a.values(SideA, m), a.values(SideB, m)
			pa := countOnes(va)
			results[i] = compared{stats.CompareRates(pa, len(va), countOnes(vb), len(vb), alpha),
				stats.RateSensitivity(pa, len(va), len(vb), alpha, stats.Power, rateTarget(d.opts.Detect))}
			return
		}
		// Each side's values are sorted once, for the comparison and the
		// power model alike.
		sa, sb := a.strata(m)
		A, B := stats.NewSample(sa...), stats.NewSample(sb...)
		c := stats.CompareSamples(A, B, alpha)
		if m.Bounded() {
			c = clipToRange(c)
		}
		results[i] = compared{c, shiftSensitivity(A, B, c.A.Center, alpha, d.opts.Detect)}
	})
	for i, m := range metrics {
		line(m.Column(), humanName(m), m, false, results[i].c, results[i].s)
	}
	if why := d.labelsDiffer(a); why != "" {
		for i := range lines {
			if lines[i].Metric.Quality() && !lines[i].Rate {
				lines[i].LabelsDiffer, lines[i].LabelsNote = true, why
			}
		}
		notes = append(notes, where+": review quality not compared: the sides were scored against different labels ("+why+"); rescore one side with the other's bench: wfb rescore RUN --bench FILE.")
	}
	notes = append(notes, lineWarnings(where, lines)...)
	notes = append(notes, d.kindShift(where, a.n, a.kinds, alpha)...)
	return lines, notes
}

// labelsDiffer says how the label sets of a group's two sides differ, ""
// when they are the same (or a side was never scored): quality scores are
// comparable only against the same labels.
func (d *Differ) labelsDiffer(a *groupAcc) string {
	var sets [2][]string
	for side, fines := range a.fines {
		seen := map[int32]bool{}
		for _, fo := range fines {
			for id := range d.sides[side].labels[fo.ta] {
				if !seen[id] {
					seen[id] = true
					sets[side] = append(sets[side], shortDigest(d.names[id]))
				}
			}
		}
		slices.Sort(sets[side])
	}
	if len(sets[SideA]) == 0 || len(sets[SideB]) == 0 || slices.Equal(sets[SideA], sets[SideB]) {
		return ""
	}
	return "A: " + strings.Join(sets[SideA], ", ") + "; B: " + strings.Join(sets[SideB], ", ")
}

// shortDigest is a labels digest cut to what tells sets apart in a note.
func shortDigest(s string) string {
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// clipToRange bounds a [0, 1] metric's intervals by its range: a median's
// interval from too few values is unbounded (±Inf), but a precision is never
// below 0 nor above 1, and a change of one never beyond ±1.
func clipToRange(c stats.Comparison) stats.Comparison {
	clip := func(v, lo, hi float64) float64 {
		if math.IsNaN(v) {
			return v
		}
		return math.Max(lo, math.Min(hi, v))
	}
	for _, s := range []*stats.Summary{&c.A, &c.B} {
		s.Lo, s.Hi = clip(s.Lo, 0, 1), clip(s.Hi, 0, 1)
	}
	c.ShiftLo, c.ShiftHi = clip(c.ShiftLo, -1, 1), clip(c.ShiftHi, -1, 1)
	return c
}

func groupName(task, arm string) string {
	if task != "" {
		return fmt.Sprintf("task %s, arm %s", task, arm)
	}
	return "arm " + arm
}

func countOnes(xs []float64) int {
	n := 0
	for _, x := range xs {
		if x == 1 {
			n++
		}
	}
	return n
}

// pairSlot holds the cells of one side that share a pair key: normally
// one, whose outcome is first; several when a side spans runs that repeat
// a task and rep, and then only the counts are usable.
type pairSlot struct {
	key                      pairKey
	first                    cellOut
	n, pass, cleanN, cleanOK int32
}

func (s *pairSlot) add(o cellOut) {
	s.n++
	if o.ok {
		s.pass++
	}
	if !o.errored {
		s.cleanN++
		if o.ok {
			s.cleanOK++
		}
	}
}

// passFail is the comparison of a group's strict and clean pass rates,
// with what each could detect; why says, when not paired, what kept the
// cells from pairing, or what pairing left out of the clean rate.
type passFail struct {
	strict, clean         stats.Comparison
	strictSens, cleanSens stats.Sensitivity
	why                   string
}

// comparePaired compares the pass rates of cells that pair one to one. A
// pair leaves the clean rate when either of its cells errored, so each
// side's clean rate there is over fewer cells than its own: why says so,
// with each side's clean rate over all its cells (the report's figure).
// target is the rate change to size for, NaN for none.
func comparePaired(cells [2][]pairSlot, alpha, target float64) passFail {
	var why string
	sp := make([]stats.Pair, 0, len(cells[SideA]))
	cp := make([]stats.Pair, 0, len(cells[SideA]))
	var lost, own [2]int // pairs lost to the partner's error; own clean cells
	var ownOK [2]int
	for k, s := range cells[SideA] {
		oa, ob := s.first, cells[SideB][k].first // the same key: the sides pair one to one
		p := stats.Pair{A: oa.ok, B: ob.ok}
		sp = append(sp, p)
		for i, o := range [2]cellOut{oa, ob} {
			if !o.errored {
				own[i]++
				if o.ok {
					ownOK[i]++
				}
			}
		}
		switch {
		case !oa.errored && !ob.errored:
			cp = append(cp, p)
		case oa.errored && !ob.errored:
			lost[SideB]++
		case ob.errored && !oa.errored:
			lost[SideA]++
		}
	}
	if lost[SideA] > 0 || lost[SideB] > 0 {
		why = fmt.Sprintf("clean pass rate paired over %d of %d pairs: %d of A's clean cells and %d of B's left out because their partner errored; over all their own clean cells A is %s (%d of %d) and B %s (%d of %d), as wfb report counts them.",
			len(cp), len(sp), lost[SideA], lost[SideB], pct(ownOK[SideA], own[SideA]), ownOK[SideA], own[SideA], pct(ownOK[SideB], own[SideB]), ownOK[SideB], own[SideB])
	}
	return passFail{
		strict: stats.CompareRatesPaired(sp, alpha), clean: stats.CompareRatesPaired(cp, alpha),
		strictSens: stats.PairedSensitivity(sp, alpha, stats.Power, target),
		cleanSens:  stats.PairedSensitivity(cp, alpha, stats.Power, target),
		why:        why,
	}
}

// pct spells a/b as a percentage, "NULL" when b is 0.
func pct(a, b int) string {
	if b == 0 {
		return "NULL"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// comparePassFail compares the strict and clean pass rates of a group's
// cells, paired when every cell has exactly one partner.
func comparePassFail(cells [2][]pairSlot, alpha, target float64) passFail {
	dupA, dupB, onlyA, onlyB := 0, 0, 0, 0
	A, B := cells[SideA], cells[SideB]
	for i, j := 0, 0; i < len(A) || j < len(B); {
		switch c := cmpSlots(A, B, i, j); {
		case c < 0:
			onlyA, dupA, i = onlyA+1, dupA+dup(A[i]), i+1
		case c > 0:
			onlyB, dupB, j = onlyB+1, dupB+dup(B[j]), j+1
		default:
			dupA, dupB, i, j = dupA+dup(A[i]), dupB+dup(B[j]), i+1, j+1
		}
	}
	paired := dupA == 0 && dupB == 0 && onlyA == 0 && onlyB == 0 && len(cells[SideA]) > 0
	if paired {
		return comparePaired(cells, alpha, target)
	}
	var pass, n, cpass, cn [2]int
	for i := range 2 {
		for _, s := range cells[i] {
			n[i] += int(s.n)
			pass[i] += int(s.pass)
			cn[i] += int(s.cleanN)
			cpass[i] += int(s.cleanOK)
		}
	}
	var why string
	switch {
	case dupA > 0 || dupB > 0:
		why = fmt.Sprintf("pass rates compared unpaired (Fisher): %d cells of A and %d of B share a task and rep with another cell on their own side (several runs per side), so cells do not pair one to one.", dupA, dupB)
	case onlyA > 0 || onlyB > 0:
		why = fmt.Sprintf("pass rates compared unpaired (Fisher): %d cells of A have no partner in B and %d of B none in A.", onlyA, onlyB)
	}
	return passFail{
		strict: stats.CompareRates(pass[0], n[0], pass[1], n[1], alpha), clean: stats.CompareRates(cpass[0], cn[0], cpass[1], cn[1], alpha),
		strictSens: stats.RateSensitivity(pass[0], n[0], n[1], alpha, stats.Power, target),
		cleanSens:  stats.RateSensitivity(cpass[0], cn[0], cn[1], alpha, stats.Power, target),
		why:        why,
	}
}

// cmpSlots compares the keys of A[i] and B[j] of two sorted sides, an end
// coming after every key.
func cmpSlots(A, B []pairSlot, i, j int) int {
	switch {
	case j == len(B):
		return -1
	case i == len(A):
		return 1
	}
	return A[i].key.compare(B[j].key)
}

// dup is 1 for a slot of several cells, else 0.
func dup(s pairSlot) int {
	if s.n > 1 {
		return 1
	}
	return 0
}

// lineWarnings turns the statistics' warnings into footnotes, one per
// distinct warning per group, naming the metrics it applies to.
func lineWarnings(where string, lines []DiffLine) []string {
	var order []string
	metricsOf := map[string][]string{}
	add := func(w, metric string) {
		if _, seen := metricsOf[w]; !seen {
			order = append(order, w)
		}
		if !slices.Contains(metricsOf[w], metric) {
			metricsOf[w] = append(metricsOf[w], metric)
		}
	}
	for _, l := range lines {
		nm := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(l.Name, " (%)"), " (USD)"), " (s)")
		for _, w := range l.Cmp.Warnings {
			add(w, nm)
		}
		for _, w := range l.Cmp.A.Warnings {
			add("A: "+w, nm)
		}
		for _, w := range l.Cmp.B.Warnings {
			add("B: "+w, nm)
		}
	}
	notes := make([]string, 0, len(order))
	for _, w := range order {
		notes = append(notes, fmt.Sprintf("%s (%s): %s.", where, strings.Join(metricsOf[w], ", "), strings.TrimSuffix(w, ".")))
	}
	return notes
}

// kindShift describes any change in the error-kind mix between the sides,
// kind by kind, each with its Fisher exact p-value as a qualifier: a change
// in pass rate may come from the environment (an outage, a refused
// sandbox) rather than from the workflow, and at small n a real swap of
// kinds is never significant, so it is described whatever the test says.
func (d *Differ) kindShift(where string, cells [2]int, kinds [2]map[int32]int, alpha float64) []string {
	var ks []string
	seen := map[int32]bool{}
	for i := range 2 {
		for k := range kinds[i] {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, d.names[k])
			}
		}
	}
	sortKinds(ks)
	var changed []string
	significant := false
	for _, k := range ks {
		id := d.ids[k]
		a, b := kinds[SideA][id], kinds[SideB][id]
		if a*cells[SideB] == b*cells[SideA] {
			continue // the same share on both sides
		}
		c := stats.CompareRates(a, cells[SideA], b, cells[SideB], alpha)
		q := "not significant"
		if c.Significant {
			q, significant = "significant", true
		}
		changed = append(changed, fmt.Sprintf("%s %d of %d → %d of %d (%s, p=%.3g)", k, a, cells[SideA], b, cells[SideB], q, c.P))
	}
	if len(changed) == 0 {
		return nil
	}
	tail := "no kind's change is significant at this n, but a change in pass rate may still come from the environment, not the workflow."
	if significant {
		tail = "a change in pass rate may come from the environment, not the workflow."
	}
	return []string{fmt.Sprintf("%s: the error-kind mix changed (cells by their final attempt's kind, Fisher exact test): %s; %s",
		where, strings.Join(changed, "; "), tail)}
}

// sideWarnings compares what the two sides ran: bench fingerprints, agent
// versions, retries.
func (d *Differ) sideWarnings(runs []RunInfo) []string {
	var notes []string
	fp := [2][]string{}
	for i, s := range d.sides {
		for _, r := range runs {
			if id, ok := d.ids[r.ID]; ok && s.runs[id] && r.Fingerprint != "" && !slices.Contains(fp[i], r.Fingerprint) {
				fp[i] = append(fp[i], r.Fingerprint)
			}
		}
		sort.Strings(fp[i])
	}
	if !slices.Equal(fp[0], fp[1]) {
		notes = append(notes, fmt.Sprintf("the sides ran different bench fingerprints (A: %s; B: %s): the bench changed, not only the workflow.",
			orNone(fp[0]), orNone(fp[1])))
	}
	ver := [2][]string{}
	for i, s := range d.sides {
		for v := range s.versions {
			ver[i] = append(ver[i], d.names[v])
		}
		sort.Strings(ver[i])
	}
	if !slices.Equal(ver[0], ver[1]) {
		notes = append(notes, fmt.Sprintf("the sides ran different agent versions (A: %s; B: %s).", orNone(ver[0]), orNone(ver[1])))
	}
	for i, s := range d.sides {
		if s.retries > 0 {
			notes = append(notes, fmt.Sprintf("%s has %d retried attempts: a cell counts once, its outcome by its last attempt, its tokens, cost, turns and wall time summed over its attempts, as in wfb report.",
				[]string{"A", "B"}[i], s.retries))
		}
	}
	return append(notes, d.disagreementNotes()...)
}

// disagreementNotes counts, per side and arm, the attempts whose usage the
// agent reported other than the provider's wire.
func (d *Differ) disagreementNotes() []string {
	var notes []string
	for i, s := range d.sides {
		arms := make([]string, 0, len(s.disagree))
		for arm, n := range s.disagree {
			arms = append(arms, fmt.Sprintf("%s %d", d.names[arm], n))
		}
		if len(arms) > 0 {
			sort.Strings(arms)
			notes = append(notes, fmt.Sprintf("%s: usage disagreed with the provider's wire (usage_check) for attempts of arm %s; token figures are the wire's unless --usage reported.",
				[]string{"A", "B"}[i], strings.Join(arms, ", arm ")))
		}
	}
	return notes
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none recorded"
	}
	return strings.Join(xs, ", ")
}

func (d *Differ) armsOf(s *sideAcc) map[int32]bool {
	arms := map[int32]bool{}
	for _, a := range s.tab.groups {
		arms[d.id(a.arm)] = true
	}
	return arms
}

func (d *Differ) joinNames(set map[int32]bool) string {
	var ns []string
	for id := range set {
		ns = append(ns, d.names[id])
	}
	sort.Strings(ns)
	return strings.Join(ns, "+")
}

// diffNote explains how to read a diff, once, under every diff table.
func diffNote(alpha float64) string {
	return fmt.Sprintf("Δ = (B − A) / A, and for pass rates B − A in percentage points (pp); ~ = not significant at alpha %v; n/c = not comparable (one side has no values). Pass rates count each cell's last attempt (clean leaves out errored cells: %s); paired cells use the exact McNemar test, unpaired Fisher's exact test; continuous metrics compare medians per cell (retries summed, as wfb report) over measured values with the Mann–Whitney U test.",
		alpha, strings.Join(wfb.ErroredKinds(), ", "))
}

// eachInParallel calls f(0) ... f(n-1), as many at a time as Go may run
// threads (GOMAXPROCS), and returns once every call has.
func eachInParallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
