package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report/stats"
)

// Human reports whether f is read by people (table, tsv, markdown) rather
// than by programs (csv, json). People get rounded numbers, units in the
// column names and the long layout; programs get full precision, stable
// snake_case keys and one wide table.
func Human(f Format) bool { return f != FormatCSV && f != FormatJSON }

// RenderAll writes tables to w in format f, a blank line between them.
// Builders return exactly one table for csv and json, so those outputs stay
// one document.
func RenderAll(w io.Writer, tables []*Table, f Format) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := Render(w, t, f); err != nil {
			return err
		}
	}
	return nil
}

// dual builds a table in two spellings at once: for people and for
// programs. Each column has a human name and a machine key; each cell a
// human and a machine value.
type dual struct {
	title          string
	names, keys    []string
	human, machine [][]any
	hrow, mrow     []any
}

func (d *dual) col(name, key string) {
	d.names = append(d.names, name)
	d.keys = append(d.keys, key)
}

// cell appends one cell to the current row.
func (d *dual) cell(h, m any) {
	d.hrow = append(d.hrow, h)
	d.mrow = append(d.mrow, m)
}

// same appends a cell that reads the same for people and programs.
func (d *dual) same(v any) { d.cell(v, v) }

func (d *dual) endRow() {
	d.human = append(d.human, d.hrow)
	d.machine = append(d.machine, d.mrow)
	d.hrow, d.mrow = nil, nil
}

func (d *dual) table(human bool, notes []string) *Table {
	if human {
		return &Table{Title: d.title, Columns: d.names, Rows: d.human, Footnotes: notes}
	}
	return &Table{Title: d.title, Columns: d.keys, Rows: d.machine, Footnotes: notes}
}

// num returns x, or nil (NULL: not measured) when x is NaN.
func num(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}

// percent returns a rate in [0, 1] as a percentage with one decimal.
func percent(r float64) any {
	if math.IsNaN(r) {
		return nil
	}
	return math.Round(r*1000) / 10
}

// roundSig rounds x to digits significant digits.
func roundSig(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// humanName is the metric's name with the unit people read it in.
func humanName(m Metric) string {
	switch m.Unit() {
	case "USD":
		return m.Name() + " (USD)"
	case "ms":
		return m.Name() + " (s)"
	}
	if m.Kind() == Proportion {
		return m.Name() + " (%)"
	}
	return m.Name()
}

// humanValue rounds a metric's value for people, in the unit humanName
// names: whole tokens and turns (a median may end in .5), seconds to three
// significant digits, dollars to four, ratios to three decimals.
func humanValue(m Metric, v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	switch {
	case m.Kind() == Proportion:
		return percent(v)
	case m.Unit() == "tokens" || m.Unit() == "turns":
		return math.Round(v*10) / 10
	case m.Unit() == "ms":
		return roundSig(v/1000, 3)
	case m.Unit() == "USD":
		return roundSig(v, 4)
	}
	return math.Round(v*1000) / 1000
}

// humanCost spells a cost total: NULL when nothing was measured, and a
// trailing * when some attempts' cost was not measured, so that the sum is
// a lower bound.
func humanCost(sum float64, measured, attempts int) any {
	if measured == 0 {
		return nil
	}
	s := strconv.FormatFloat(roundSig(sum, 4), 'f', -1, 64)
	if measured < attempts {
		s += "*"
	}
	return s
}

// machineCost is the cost total for programs: NULL unless every attempt's
// cost was measured. The sum over measured attempts is its own column.
func machineCost(sum float64, measured, attempts int) any {
	if measured == 0 || measured < attempts {
		return nil
	}
	return sum
}

// kindKey turns an error kind into a column key: failed_session_error.
func kindKey(kind string) string {
	return "failed_" + strings.ReplaceAll(kind, "-", "_")
}

// retriedKey names the column of attempts superseded by a retry that ended
// with kind: retried_provider_error, retried_ok.
func retriedKey(kind string) string {
	return "retried_" + strings.ReplaceAll(kind, "-", "_")
}

// RunsTable builds the `wfb runs` table: each run's cells by outcome (by
// their final attempts, as wfb report counts them), its attempts under
// their own name, and its cost by the one rule (wfb.Cost).
func RunsTable(runs []RunInfo, f Format) *Table {
	d := dual{title: "wfb runs"}
	d.col("run", "run_id")
	d.col("label", "label")
	d.col("started", "started_at")
	d.col("status", "status")
	d.col("cells", "cells")
	d.col("ok", "ok")
	d.col("failed", "failed")
	d.col("errored", "errored")
	d.col("attempts", "attempts")
	d.col("cost (USD)", "cost_usd_total")
	d.col("cost n", "cost_usd_n")
	d.col("budget (USD)", "budget_usd")
	if !Human(f) {
		d.col("", "cost_usd_measured_sum")
		d.col("", "cost_usd_metered_n")
		d.col("", "agent_cost_usd_sum")
		d.col("", "agent_cost_usd_n")
		d.col("", "finished_at")
		d.col("", "fingerprint")
	}
	notes := []string{runsNote()}
	for _, r := range runs {
		d.same(r.ID)
		d.same(nullIfEmpty(r.Label))
		if f == FormatTable {
			d.same(boxTime(r.StartedAt))
		} else {
			d.same(r.StartedAt)
		}
		d.same(r.Status)
		d.same(r.Cells)
		d.same(r.OK)
		d.same(r.Failed)
		d.same(r.Errored)
		d.same(r.Attempts)
		d.cell(humanCost(r.Cost.USD, r.Cost.N, r.Attempts), machineCost(r.Cost.USD, r.Cost.N, r.Attempts))
		d.same(r.Cost.N)
		d.cell(humanBudget(r.Budget), machineBudget(r.Budget))
		if !Human(f) {
			d.same(measuredSum(r.Cost.USD, r.Cost.N))
			d.same(r.Cost.Metered)
			d.same(measuredSum(r.Cost.AgentUSD, r.Cost.AgentN))
			d.same(r.Cost.AgentN)
			d.same(nullIfEmpty(r.FinishedAt))
			d.same(nullIfEmpty(r.Fingerprint))
		}
		d.endRow()
		notes = append(notes, CostNotes("run "+r.ID, r.Cost)...)
	}
	t := d.table(Human(f), notes)
	t.Whole = []string{"run", "started"}
	t.Shed = []string{"budget (USD)", "cost n", "attempts", "started", "label", "cost (USD)"}
	return t
}

// boxTime is a stored RFC 3339 time to the second, as a box table shows
// it: the milliseconds matter to programs ordering runs, not to a person
// finding one, and they cost a narrow screen a column. TSV and markdown
// keep them: they are read by programs and diffed too.
func boxTime(rfc3339 string) string {
	if i := strings.LastIndexByte(rfc3339, '.'); i > 0 && strings.HasSuffix(rfc3339, "Z") {
		return rfc3339[:i] + "Z"
	}
	return rfc3339
}

// runsNote says once what the counts of `wfb runs` are.
func runsNote() string {
	return "cells counts each run × task × arm × rep once; ok, failed and errored count cells by their final attempt, as wfb report does (errored: " +
		strings.Join(wfb.ErroredKinds(), ", ") + "). attempts counts every attempt, retries included. cost is the wire's priced figure where the wire measured the attempt, else the agent's; cost n is how many attempts it covers."
}

// CostText is a cost total for people, as every table and page shows it:
// "" when nothing was measured, four significant digits, and * when some
// attempts' cost was not measured (a lower bound).
func CostText(c wfb.CostSum) string {
	s, _ := humanCost(c.USD, c.N, c.Of).(string)
	return s
}

// CostNotes say what a cost total does not cover, and what the agents
// themselves reported where that differs from the figure shown: the one
// wording of every table and page that shows a cost total. who starts each
// note ("run X: "); empty, the notes start with their subject.
func CostNotes(who string, c wfb.CostSum) []string {
	if who != "" {
		who += ": "
	}
	var notes []string
	switch {
	case c.N == 0 && c.Of > 0:
		notes = append(notes, fmt.Sprintf("%scost unmeasured for all %d attempts: NULL, not 0.", who, c.Of))
	case c.N < c.Of:
		notes = append(notes, fmt.Sprintf("%scost unmeasured for %d of %d attempts: the cost shown (marked *) sums the %d measured, a lower bound.",
			who, c.Of-c.N, c.Of, c.N))
	}
	if c.AgentDiffers() {
		shown := fmt.Sprintf("the wire's for the %d attempts it priced, the agent's for %d", c.Metered, c.N-c.Metered)
		switch c.Metered {
		case c.N:
			shown = fmt.Sprintf("the wire's priced figure for all %d", c.N)
		case 0:
			shown = fmt.Sprintf("the agents' own for all %d", c.N)
		}
		notes = append(notes, fmt.Sprintf("%sagent-reported cost $%s over %d attempts; the cost shown is %s.",
			who, wfb.Dollars(c.AgentUSD), c.AgentN, shown))
	}
	return notes
}

// humanBudget spells a run's cost cap: "none" when it had none.
func humanBudget(usd float64) any {
	if !(usd > 0) {
		return "none"
	}
	return usd
}

// machineBudget is a run's cost cap for programs: null when it had none.
func machineBudget(usd float64) any {
	if !(usd > 0) {
		return nil
	}
	return usd
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func measuredSum(sum float64, n int) any {
	if n == 0 {
		return nil
	}
	return sum
}

// rateNote explains the two rates once, under every outcome table.
func rateNote() string {
	return "A cell is one run × task × arm × rep; its outcome is its final attempt's (the end of its retry chain), as in wfb diff. " +
		"strict rate = ok / cells (every cell counts; an error is a failure). clean rate = ok / (cells − errored), where errored cells ended with an error the workflow was never fairly measured on: " +
		strings.Join(wfb.ErroredKinds(), ", ") + ". retried = attempts superseded by a retry."
}

// cellValueNote says what a cell's value of each metric is, once, under
// every metric table.
func cellValueNote() string {
	return "Medians are per cell, over the cells where the metric was measured (n). A cell's tokens, cost, turns and wall time are sums over all its attempts, retries included (what one cell cost); its review quality is its final attempt's."
}

// Tables returns the report as tables in format f. People get two tables
// (outcomes, then metrics with one line per metric); programs get one wide
// table with a line per group.
func (t *Tabulation) Tables(title string, f Format) []*Table {
	if Human(f) {
		tables := []*Table{t.outcomeTable(title), t.metricTable()}
		if t.Tools.Shown() {
			tables = append(tables, t.toolTable())
		}
		return tables
	}
	return []*Table{t.wideTable(title)}
}

func (t *Tabulation) groupCols(d *dual) {
	if t.Options.ByTask {
		d.col("task", "task")
	}
	d.col("arm", "arm")
}

func (t *Tabulation) groupCells(d *dual, g *Group) {
	if t.Options.ByTask {
		d.same(g.Task)
	}
	d.same(g.Arm)
}

func (t *Tabulation) hasCost() bool { return slices.Contains(t.Options.Metrics, CostUSD) }

func (t *Tabulation) outcomeTable(title string) *Table {
	d := dual{title: title}
	t.groupCols(&d)
	d.col("cells", "cells")
	d.col("attempts", "attempts")
	d.col("retried", "retried")
	d.col("ok", "ok")
	for _, k := range t.Kinds {
		d.col(k, kindKey(k))
	}
	d.col("strict %", "strict_rate")
	d.col("clean %", "clean_rate")
	if t.hasCost() {
		d.col("cost total (USD)", "cost_usd_total")
	}
	for _, g := range t.Groups {
		t.groupCells(&d, g)
		d.same(g.Cells)
		d.same(g.Attempts)
		d.same(g.Retried)
		d.same(g.OK)
		for _, k := range t.Kinds {
			d.same(g.Failed[k])
		}
		d.same(percent(g.StrictRate()))
		d.same(percent(g.CleanRate()))
		if t.hasCost() {
			c := g.Metrics[CostUSD]
			d.same(humanCost(c.Sum, c.Attempts, g.Attempts))
		}
		d.endRow()
	}
	tbl := d.table(true, append([]string{rateNote()}, t.outcomeGrouped...))
	// A narrow screen keeps the outcome: cells, ok and each kind.
	tbl.Shed = []string{"attempts", "clean %", "cost total (USD)", "retried", "strict %"}
	return tbl
}

// OutcomeTable is the report's outcomes at a glance, for a screen that
// holds little else (wfb demo): per group its cells, how many ended ok,
// how the others failed (each kind with its count: "session-error ×3"),
// and the attempts superseded by a retry. No notes: wfb report has them.
func (t *Tabulation) OutcomeTable(title string) *Table {
	d := dual{title: title}
	t.groupCols(&d)
	d.col("cells", "cells")
	d.col("ok", "ok")
	d.col("failed (by kind)", "failed")
	d.col("retried", "retried")
	for _, g := range t.Groups {
		t.groupCells(&d, g)
		d.same(g.Cells)
		d.same(g.OK)
		d.same(kindCounts(t.Kinds, g.Failed, func(string) bool { return true }))
		d.same(g.Retried)
		d.endRow()
	}
	return d.table(true, nil)
}

func (t *Tabulation) metricTable() *Table {
	d := dual{title: "medians per cell (n = cells measured)"}
	t.groupCols(&d)
	d.col("metric", "metric")
	d.col("n", "n")
	d.col("median", "median")
	d.col("p25", "p25")
	d.col("p75", "p75")
	for _, g := range t.Groups {
		for _, m := range t.Options.Metrics {
			s := g.Metrics[m]
			t.groupCells(&d, g)
			d.same(humanName(m))
			d.same(s.N)
			d.same(humanValue(m, s.Center))
			d.same(humanValue(m, s.Q1))
			d.same(humanValue(m, s.Q3))
			d.endRow()
		}
	}
	notes := []string{cellValueNote()}
	if hasProportion(t.Options.Metrics) {
		notes = append(notes, "A proportion (verdict accuracy) shows its mean as the median; it has no quartiles.")
	}
	notes = append(notes, t.metricGrouped...)
	return d.table(true, notes)
}

func hasProportion(ms []Metric) bool {
	for _, m := range ms {
		if m.Kind() == Proportion {
			return true
		}
	}
	return false
}

// wideTable is the machine layout: one line per group, every figure in its
// own column at full precision, NULL where nothing was measured.
func (t *Tabulation) wideTable(title string) *Table {
	d := dual{title: title}
	t.groupCols(&d)
	d.col("", "cells")
	d.col("", "attempts")
	d.col("", "retried")
	d.col("", "ok")
	d.col("", "failed")
	d.col("", "errored")
	for _, k := range t.Kinds {
		d.col("", kindKey(k))
	}
	for _, k := range t.RetriedKinds {
		d.col("", retriedKey(k))
	}
	d.col("", "strict_rate")
	d.col("", "clean_rate")
	if t.hasCost() {
		d.col("", "cost_usd_total")
		d.col("", "cost_usd_measured_sum")
	}
	for _, m := range t.Options.Metrics {
		c := m.Column()
		d.col("", c+"_n")
		if !m.Quality() {
			d.col("", c+"_partial_n")
		}
		if m.Kind() == Proportion {
			d.col("", c+"_mean")
			continue
		}
		d.col("", c+"_median")
		d.col("", c+"_p25")
		d.col("", c+"_p75")
	}
	tools := t.Tools.Shown()
	if tools {
		toolCols(&d)
	}
	for _, g := range t.Groups {
		t.groupCells(&d, g)
		d.same(g.Cells)
		d.same(g.Attempts)
		d.same(g.Retried)
		d.same(g.OK)
		d.same(g.Cells - g.OK - g.Errored) // failed: not ok, not errored (wfb.OutcomeFailed)
		d.same(g.Errored)
		for _, k := range t.Kinds {
			d.same(g.Failed[k])
		}
		for _, k := range t.RetriedKinds {
			d.same(g.Superseded[k])
		}
		d.same(num(g.StrictRate()))
		d.same(num(g.CleanRate()))
		if t.hasCost() {
			c := g.Metrics[CostUSD]
			d.same(machineCost(c.Sum, c.Attempts, g.Attempts))
			d.same(measuredSum(c.Sum, c.Attempts))
		}
		for _, m := range t.Options.Metrics {
			s := g.Metrics[m]
			d.same(s.N)
			if !m.Quality() {
				d.same(s.Partial)
			}
			d.same(num(s.Center))
			if m.Kind() == Continuous {
				d.same(num(s.Q1))
				d.same(num(s.Q3))
			}
		}
		if tools {
			toolCells(&d, t.Tools.Group(g.Task, g.Arm))
		}
		d.endRow()
	}
	notes := append([]string{rateNote()}, t.OutcomeNotes...)
	notes = append(append(notes, cellValueNote()), t.MetricNotes...)
	if tools {
		notes = append(notes, toolNotes(t.Tools)...)
	}
	tbl := d.table(false, notes)
	tbl.Notes = true
	return tbl
}

// humanLine rounds a diff line's value for people.
func humanLine(l *DiffLine, v float64) any {
	if l.Rate {
		return percent(v)
	}
	return humanValue(l.Metric, v)
}

// humanInterval spells a confidence interval, "lo – hi", with ∞ where the
// sample was too small to bound it; NULL when there was nothing to bound.
func humanInterval(l *DiffLine, lo, hi float64) any {
	return span(lo, hi, "∞", func(v float64) string { return text(humanLine(l, v)) })
}

// span spells an interval "lo – hi", each end by show, an unbounded end
// as -∞ or up (∞, or +∞ beside signed ends); NULL when there is nothing
// to bound.
func span(lo, hi float64, up string, show func(float64) string) any {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return nil
	}
	end := func(v float64) string {
		switch {
		case math.IsInf(v, -1):
			return "-∞"
		case math.IsInf(v, 1):
			return up
		}
		return show(v)
	}
	return end(lo) + " – " + end(hi)
}

// HumanValue is v as the diff table shows it for people.
func (l *DiffLine) HumanValue(v float64) string { return text(humanLine(l, v)) }

// HumanInterval is an interval as the diff table shows it for people,
// "" when there was nothing to bound.
func (l *DiffLine) HumanInterval(lo, hi float64) string {
	if s, ok := humanInterval(l, lo, hi).(string); ok {
		return s
	}
	return ""
}

// HumanDelta is the line's Δ as the diff table shows it for people: "~",
// "n/c", a signed percentage or, for a pass rate, percentage points.
func (l *DiffLine) HumanDelta() string { return humanDelta(l) }

// NotComparable is the Δ of a line where one side has no values: there is
// nothing to test, which is not the same as a change that is not
// significant ("~").
const NotComparable = "n/c"

// Comparable reports whether both sides of l have values to compare.
// A review-quality line whose sides were scored against different labels
// is not comparable either.
func (l *DiffLine) Comparable() bool { return l.Cmp.A.N > 0 && l.Cmp.B.N > 0 && !l.LabelsDiffer }

// Change is B − A: for a pass rate in percentage points, for a metric in
// its own unit; NaN when not comparable.
func (l *DiffLine) Change() float64 {
	if !l.Comparable() {
		return math.NaN()
	}
	d := l.Cmp.B.Center - l.Cmp.A.Center
	if l.Rate {
		return d * 100
	}
	return d
}

// ChangeInterval bounds Change at the diff's level, in Change's unit: the
// comparison's interval of B − A (see stats.Comparison.Shift), in
// percentage points for a pass rate. NaN when not comparable; ±Inf where
// the sample is too small to bound an end.
func (l *DiffLine) ChangeInterval() (lo, hi float64) {
	if !l.Comparable() {
		return math.NaN(), math.NaN()
	}
	if l.Rate {
		return 100 * l.Cmp.ShiftLo, 100 * l.Cmp.ShiftHi
	}
	return l.Cmp.ShiftLo, l.Cmp.ShiftHi
}

// DeltaInterval bounds Delta, the relative change, at the diff's level:
// ChangeInterval relative to A's centre. NaN when A's centre is 0 or the
// line is not comparable (a relative change from nothing has no size).
func (l *DiffLine) DeltaInterval() (lo, hi float64) {
	a := math.Abs(l.Cmp.A.Center)
	if !l.Comparable() || a == 0 || math.IsNaN(a) {
		return math.NaN(), math.NaN()
	}
	return l.Cmp.ShiftLo / a, l.Cmp.ShiftHi / a
}

// humanDelta spells the change for people, always with its estimate: a
// signed percentage, or for a pass rate (and a proportion) signed
// percentage points, since 50% → 75% is +25pp, not +50% — followed by "~"
// when the change is not significant at alpha (benchstat's mark, beside
// the number, never instead of it); "n/c" when not comparable.
func humanDelta(l *DiffLine) string {
	c := &l.Cmp
	var est string
	switch {
	case !l.Comparable():
		return NotComparable
	case l.isRate():
		est = fmt.Sprintf("%+.1fpp", ruleChange(l, "pp"))
	case math.IsNaN(c.Delta) && c.B.Center == c.A.Center:
		est = "0"
	case math.IsNaN(c.Delta) && c.B.Center > c.A.Center:
		est = "up from 0"
	case math.IsNaN(c.Delta):
		est = "down"
	default:
		est = fmt.Sprintf("%+.1f%%", c.Delta*100)
	}
	if !c.Significant {
		est += " ~"
	}
	return est
}

// humanChangeInterval spells the change's interval in Δ's unit: "−12.0%
// – +3.5%", "−50.0pp – +2.2pp"; NULL when there is nothing to bound.
func humanChangeInterval(l *DiffLine) any {
	unit := naturalUnit(l)
	lo, hi := ruleInterval(l, unit)
	return span(lo, hi, "+∞", func(v float64) string { return fmt.Sprintf("%+.1f%s", v, unit) })
}

var testNames = map[string]string{
	stats.TestMannWhitneyU: "Mann–Whitney U",
	stats.TestFisherExact:  "Fisher exact",
	stats.TestMcNemarExact: "McNemar exact (paired)",
}

// Tables returns the diff as one table in format f, titled with the two
// sides as the user named them.
func (df *Diff) Tables(specA, specB string, f Format) []*Table {
	human := Human(f)
	d := dual{title: fmt.Sprintf("wfb diff: A = %s, B = %s", specA, specB)}
	df.columns(&d, human)
	for i := range df.Lines {
		l := &df.Lines[i]
		c := &l.Cmp
		if df.Options.ByTask {
			d.same(l.Task)
		}
		d.same(l.Arm)
		d.cell(l.Name, l.Key)
		d.cell(humanLine(l, c.A.Center), num(c.A.Center))
		d.cell(humanInterval(l, c.A.Lo, c.A.Hi), num(c.A.Lo))
		if !human {
			d.same(num(c.A.Hi))
		}
		d.cell(humanLine(l, c.B.Center), num(c.B.Center))
		d.cell(humanInterval(l, c.B.Lo, c.B.Hi), num(c.B.Lo))
		if !human {
			d.same(num(c.B.Hi))
		}
		d.cell(humanDelta(l), num(c.Delta))
		dlo, dhi := l.DeltaInterval()
		d.cell(humanChangeInterval(l), num(dlo))
		if !human {
			clo, chi := l.ChangeInterval()
			d.same(num(dhi))
			d.same(num(l.Change()))
			d.same(num(clo))
			d.same(num(chi))
			d.same(changeUnit(l))
		}
		switch {
		case math.IsNaN(c.P):
			d.same(nil)
		case c.P < 0.001:
			// Three decimals are as much as a p-value can say here;
			// below that, only "very small" is honest.
			d.cell("<0.001", c.P)
		default:
			d.cell(roundSig(c.P, 2), c.P)
		}
		if human {
			n := fmt.Sprintf("%d+%d", c.A.N, c.B.N)
			if c.Test == stats.TestMcNemarExact {
				n = fmt.Sprintf("%d pairs", c.A.N)
			}
			d.same(n)
		} else {
			d.same(c.A.N)
			d.same(c.B.N)
			d.same(c.Significant)
		}
		sensitivityCells(&d, l, human, df.Options.Detect.Asked())
		d.cell(testNames[c.Test], c.Test)
		d.endRow()
	}
	changes := ToolChanges(df.Tools)
	if human {
		tbl := d.table(human, df.Footnotes)
		tbl.Notes = true
		// A narrow screen keeps what changed and whether it is real.
		tbl.Shed = []string{"test", "n needed", "detectable", d.names[slices.Index(d.keys, "a_lo")], d.names[slices.Index(d.keys, "b_lo")],
			"n", "p", d.names[slices.Index(d.keys, "delta_lo")]}
		if len(changes) == 0 {
			return []*Table{tbl}
		}
		return []*Table{tbl, toolDiffTable(changes)}
	}
	tbl := d.table(human, append(slices.Clone(df.Footnotes), toolDiffNotes(changes)...))
	tbl.Notes = true
	return []*Table{tbl}
}

// columns declares the diff table's columns, for people or programs.
func (df *Diff) columns(d *dual, human bool) {
	level := int(math.Round((1 - df.Options.Alpha) * 100))
	if df.Options.ByTask {
		d.col("task", "task")
	}
	d.col("arm", "arm")
	d.col("metric", "metric")
	d.col("A", "a")
	d.col(fmt.Sprintf("A %d%% CI", level), "a_lo")
	if !human {
		d.col("", "a_hi")
	}
	d.col("B", "b")
	d.col(fmt.Sprintf("B %d%% CI", level), "b_lo")
	if !human {
		d.col("", "b_hi")
	}
	d.col("Δ", "delta")
	d.col(fmt.Sprintf("Δ %d%% CI", level), "delta_lo")
	if !human {
		d.col("", "delta_hi")
		d.col("", "change")
		d.col("", "change_lo")
		d.col("", "change_hi")
		d.col("", "change_unit")
	}
	d.col("p", "p")
	d.col("n", "n_a")
	if !human {
		d.col("", "n_b")
		d.col("", "significant")
	}
	sensitivityCols(d, human, df.Options.Detect.Asked())
	d.col("test", "test")
}

// sensitivityCols declares the columns that say what a line could detect
// and, when --detect asked, what it needs. Programs always get every one,
// so that their schema does not depend on the flags.
func sensitivityCols(d *dual, human, asked bool) {
	d.col("detectable", "detectable_change")
	if !human {
		d.col("", "detectable_delta")
	}
	if asked || !human {
		d.col("n needed", "needed_n")
	}
	if !human {
		d.col("", "needed_runs")
	}
}

// sensitivityCells writes the cells sensitivityCols declares; l nil (a
// trend's first bucket) gives NULLs.
func sensitivityCells(d *dual, l *DiffLine, human, asked bool) {
	if l == nil {
		d.same(nil)
		if !human {
			d.same(nil)
		}
		if asked || !human {
			d.same(nil)
		}
		if !human {
			d.same(nil)
		}
		return
	}
	d.cell(humanDetectable(l), finite(l.DetectableChange()))
	if !human {
		d.same(num(l.DetectableDelta()))
	}
	if asked || !human {
		d.cell(humanNeed(l), machineNeed(l.Sens.Need))
	}
	if !human {
		d.same(machineNeed(l.NeededRuns()))
	}
}

// changeUnit names the unit of DiffLine.Change for programs.
func changeUnit(l *DiffLine) string {
	if l.Rate {
		return "pp"
	}
	return l.Metric.Unit()
}

// HumanName is the metric's name with the unit people read it in, as the
// tables head its columns: "cost (USD)", "wall time (s)", "… (%)".
func HumanName(m Metric) string { return humanName(m) }

// RoundSig rounds x to digits significant digits; NaN, ±Inf and 0 stay.
func RoundSig(x float64, digits int) float64 { return roundSig(x, digits) }
