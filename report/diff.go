package report

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"

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
//   - Continuous metrics are compared over every attempt's measured values
//     with the Mann–Whitney U test.
type Differ struct {
	opts  DiffOptions
	names []string
	ids   map[string]int32
	sides [2]*sideAcc
	spent bool // Result has run: the samples are gone
}

type cellKey struct{ run, task, arm, rep int32 }

// runRep names a cell within its task and arm.
type runRep struct{ run, rep int32 }

type cellOut struct {
	attempt int32
	ok      bool
	errored bool // not ok, with an error kind (see IsError)
}

type taskArm struct{ task, arm int32 }

// fineAcc accumulates one task and arm of one side. Its cells are kept here
// rather than in one map per side, so that Result can build each group's
// pairs from the group's own cells and let them go before the next group.
type fineAcc struct {
	attempts int
	kinds    map[int32]int
	// cells has an entry per attempt, in the order added; a cell's outcome
	// is its final attempt's (see finalCells).
	cells []cellAttempt
}

// cellAttempt is one attempt's outcome, with the cell it belongs to.
type cellAttempt struct {
	cell runRep
	out  cellOut
}

type sideAcc struct {
	fine map[taskArm]*fineAcc
	// values are kept by the group they will most likely be compared in,
	// the arm (and the task with ByTask), so that comparing by arm takes
	// each sample as it is, without a copy; see groupValues.
	values   map[taskArm]*samples
	versions map[int32]bool
	runs     map[int32]bool
	retries  int
	// disagree counts, per arm, the attempts whose usage the agent
	// reported other than the wire.
	disagree map[int32]int
}

// NewDiffer returns an empty Differ.
func NewDiffer(opts DiffOptions) *Differ {
	d := &Differ{opts: opts, ids: map[string]int32{}}
	d.id("") // id 0 is the empty string
	for i := range d.sides {
		d.sides[i] = &sideAcc{fine: map[taskArm]*fineAcc{}, values: map[taskArm]*samples{},
			versions: map[int32]bool{}, runs: map[int32]bool{}, disagree: map[int32]int{}}
	}
	return d
}

func (d *Differ) id(s string) int32 {
	if i, ok := d.ids[s]; ok {
		return i
	}
	i := int32(len(d.names))
	d.names = append(d.names, s)
	d.ids[s] = i
	return i
}

// Add counts one attempt on side (SideA or SideB). r is not retained.
func (d *Differ) Add(side int, r *Row) {
	if d.spent {
		panic("report: Differ.Add after Result")
	}
	s := d.sides[side]
	run, task, arm := d.id(r.RunID), d.id(r.Task), d.id(r.Arm)
	s.runs[run] = true
	if r.AgentVersion != "" {
		s.versions[d.id(r.AgentVersion)] = true
	}
	if r.Attempt > 1 {
		s.retries++
	}
	if r.UsageDisagrees {
		s.disagree[arm]++
	}
	kind := int32(0)
	if !r.OK {
		k := r.ErrorKind
		if k == "" {
			k = "unknown"
		}
		kind = d.id(k)
	}
	ta := taskArm{task, arm}
	f := s.fine[ta]
	if f == nil {
		f = &fineAcc{kinds: map[int32]int{}}
		s.fine[ta] = f
	}
	f.cells = append(f.cells, cellAttempt{runRep{run, int32(r.Rep)}, outcomeOf(r)})
	f.attempts++
	if !r.OK {
		f.kinds[kind]++
	}
	vk := taskArm{task: -1, arm: arm}
	if d.opts.ByTask {
		vk.task = task
	}
	vs := s.values[vk]
	if vs == nil {
		vs = &samples{}
		s.values[vk] = vs
	}
	for _, m := range d.opts.Metrics {
		if v := r.Values[m]; !math.IsNaN(v) {
			vs[m].add(v)
		}
	}
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
}

// Diff is what `wfb diff` shows, before rendering.
type Diff struct {
	Options DiffOptions
	// ByArm is false when the sides have no arm in common and were
	// compared as a whole.
	ByArm     bool
	Lines     []DiffLine
	Footnotes []string
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
	out := &Diff{Options: d.opts}
	out.Options.Metrics = scoredOnly(d.opts.Metrics, d.measured)
	sh, notes := d.shape()
	out.ByArm = sh.byArm
	members := sh.members()
	for _, gk := range d.sortedGroups(members) {
		lines, groupNotes := d.compareGroup(gk, sh.group(gk, members[gk]), sh, out.Options.Metrics)
		notes = append(notes, groupNotes...)
		out.Lines = append(out.Lines, lines...)
	}
	notes = append(notes, d.sideWarnings(runs)...)
	out.Footnotes = append([]string{diffNote(d.opts.Alpha)}, notes...)
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
		for _, vs := range s.values {
			if vs[m].len() > 0 {
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
		if armsB[a] {
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

// fineOf is one task and arm's accumulator, as a member of a group.
type fineOf struct {
	ta taskArm
	f  *fineAcc
}

// members returns each group's fines, per side. A group's pairs and values
// are built from them one group at a time (group) and dropped once
// compared, so at most one group's copy sits beside the accumulated sides.
func (sh *diffShape) members() map[groupKey]*[2][]fineOf {
	members := map[groupKey]*[2][]fineOf{}
	for i, s := range sh.d.sides {
		for ta, f := range s.fine {
			g, ok := sh.groupKey(ta.task, ta.arm)
			if !ok {
				continue
			}
			m := members[g]
			if m == nil {
				m = &[2][]fineOf{}
				members[g] = m
			}
			m[i] = append(m[i], fineOf{ta, f})
		}
	}
	return members
}

// groupAcc is one group of both sides, ready to compare.
type groupAcc struct {
	cells    [2]map[pairKey]pairSlot
	attempts [2]int
	kinds    [2]map[int32]int
	values   [2][]*samples // the parts of each side's samples; see values
}

// group gathers a group's members into its cells, counts and values.
func (sh *diffShape) group(gk groupKey, members *[2][]fineOf) *groupAcc {
	a := &groupAcc{}
	for i, fines := range members {
		n := 0
		for _, fo := range fines {
			n += len(fo.f.cells)
		}
		a.cells[i] = make(map[pairKey]pairSlot, n)
		a.kinds[i] = map[int32]int{}
		for _, fo := range fines {
			sh.addCells(a.cells[i], fo)
			a.attempts[i] += fo.f.attempts
			for k, c := range fo.f.kinds {
				a.kinds[i][k] += c
			}
		}
		a.values[i] = sh.groupValues(sh.d.sides[i], gk)
		// Each fine belongs to one group, so its cells are not needed
		// again: let them go before the next group is built.
		for _, fo := range fines {
			fo.f.cells = nil
		}
	}
	return a
}

// addCells adds fo's cells to their pair slots.
func (sh *diffShape) addCells(cells map[pairKey]pairSlot, fo fineOf) {
	for rr, o := range finalCells(fo.f.cells) {
		p := sh.pairKey(cellKey{run: rr.run, task: fo.ta.task, arm: fo.ta.arm, rep: rr.rep})
		slot, seen := cells[p]
		if !seen {
			slot.first = o
		}
		slot.add(o)
		cells[p] = slot
	}
}

// finalCells yields each cell of attempts with its final attempt's
// outcome: the highest attempt number, and of equal numbers the one added
// last (as isFinal decides for a map of cells). It sorts attempts in place.
func finalCells(attempts []cellAttempt) iter.Seq2[runRep, cellOut] {
	slices.SortStableFunc(attempts, func(x, y cellAttempt) int {
		return cmp.Or(cmp.Compare(x.cell.run, y.cell.run), cmp.Compare(x.cell.rep, y.cell.rep),
			cmp.Compare(x.out.attempt, y.out.attempt))
	})
	return func(yield func(runRep, cellOut) bool) {
		for i, a := range attempts {
			if i+1 < len(attempts) && attempts[i+1].cell == a.cell {
				continue
			}
			if !yield(a.cell, a.out) {
				return
			}
		}
	}
}

// groupValues takes the side's samples of group gk out of the side: one
// part when they were kept under gk (comparing by arm), several when
// several arms make up the group (comparing the sides as a whole).
func (sh *diffShape) groupValues(s *sideAcc, gk groupKey) []*samples {
	var parts []*samples
	for vk, vs := range s.values {
		if g, ok := sh.groupKey(vk.task, vk.arm); ok && g == gk {
			parts = append(parts, vs)
			delete(s.values, vk)
		}
	}
	return parts
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
	line := func(key, nm string, m Metric, rate bool, c stats.Comparison) {
		lines = append(lines, DiffLine{Task: task, Arm: arm, Key: key, Name: nm, Metric: m, Rate: rate, Cmp: c})
	}

	strict, clean, why := comparePassFail(a.cells, alpha)
	if why != "" {
		notes = append(notes, where+": "+why)
	}
	line("strict_pass_rate", "strict pass rate (%)", 0, true, strict)
	line("clean_pass_rate", "clean pass rate (%)", 0, true, clean)
	for _, m := range metrics {
		va, vb := values(a.values[SideA], m), values(a.values[SideB], m)
		if m.Kind() == Proportion {
			line(m.Column(), humanName(m), m, false, stats.CompareRates(countOnes(va), len(va), countOnes(vb), len(vb), alpha))
			continue
		}
		line(m.Column(), humanName(m), m, false, stats.CompareContinuous(va, vb, alpha))
	}
	notes = append(notes, lineWarnings(where, lines)...)
	notes = append(notes, d.kindShift(where, a.attempts, a.kinds, alpha)...)
	return lines, notes
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

// comparePassFail compares the strict and clean pass rates of a group's
// cells, paired when every cell has exactly one partner; why says, when not
// paired, what kept the cells from pairing.
// pairSlot holds the cells of one side that share a pair key: normally
// one, whose outcome is first; several when a side spans runs that repeat
// a task and rep, and then only the counts are usable.
type pairSlot struct {
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

func comparePassFail(cells [2]map[pairKey]pairSlot, alpha float64) (strict, clean stats.Comparison, why string) {
	dupA, dupB, onlyA, onlyB := 0, 0, 0, 0
	for k, s := range cells[SideA] {
		if s.n > 1 {
			dupA++
		}
		if _, ok := cells[SideB][k]; !ok {
			onlyA++
		}
	}
	for k, s := range cells[SideB] {
		if s.n > 1 {
			dupB++
		}
		if _, ok := cells[SideA][k]; !ok {
			onlyB++
		}
	}
	paired := dupA == 0 && dupB == 0 && onlyA == 0 && onlyB == 0 && len(cells[SideA]) > 0
	if paired {
		sp := make([]stats.Pair, 0, len(cells[SideA]))
		cp := make([]stats.Pair, 0, len(cells[SideA]))
		for k, s := range cells[SideA] {
			oa, ob := s.first, cells[SideB][k].first
			p := stats.Pair{A: oa.ok, B: ob.ok}
			sp = append(sp, p)
			if !oa.errored && !ob.errored {
				cp = append(cp, p)
			}
		}
		return stats.CompareRatesPaired(sp, alpha), stats.CompareRatesPaired(cp, alpha), ""
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
	switch {
	case dupA > 0 || dupB > 0:
		why = fmt.Sprintf("pass rates compared unpaired (Fisher): %d cells of A and %d of B share a task and rep with another cell on their own side (several runs per side), so cells do not pair one to one.", dupA, dupB)
	case onlyA > 0 || onlyB > 0:
		why = fmt.Sprintf("pass rates compared unpaired (Fisher): %d cells of A have no partner in B and %d of B none in A.", onlyA, onlyB)
	}
	return stats.CompareRates(pass[0], n[0], pass[1], n[1], alpha), stats.CompareRates(cpass[0], cn[0], cpass[1], cn[1], alpha), why
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

// kindShift warns when an error kind's share of attempts differs between
// the sides significantly (Fisher's exact test at alpha): a change in pass
// rate may then come from the environment (an outage, a refused sandbox)
// rather than from the workflow.
func (d *Differ) kindShift(where string, attempts [2]int, kinds [2]map[int32]int, alpha float64) []string {
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
	var shifted []string
	for _, k := range ks {
		id := d.ids[k]
		a, b := kinds[SideA][id], kinds[SideB][id]
		c := stats.CompareRates(a, attempts[SideA], b, attempts[SideB], alpha)
		if c.Significant {
			shifted = append(shifted, fmt.Sprintf("%s %d of %d → %d of %d (p=%.3g)", k, a, attempts[SideA], b, attempts[SideB], c.P))
		}
	}
	if len(shifted) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: the error-kind mix shifted: %s; a change in pass rate may come from the environment, not the workflow.",
		where, strings.Join(shifted, "; "))}
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
			notes = append(notes, fmt.Sprintf("%s has %d retried attempts: pass rates use each cell's last attempt; continuous metrics use every attempt.",
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
	for ta := range s.fine {
		arms[ta.arm] = true
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
	return fmt.Sprintf("Δ = (B − A) / A; ~ = not significant at alpha %v. Pass rates count each cell's last attempt (clean leaves out errored cells: %s); paired cells use the exact McNemar test, unpaired Fisher's exact test; continuous metrics compare medians over measured values with the Mann–Whitney U test.",
		alpha, strings.Join(ErrorKindsExcluded(), ", "))
}
