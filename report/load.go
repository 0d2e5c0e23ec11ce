package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Source is the results file as the loaders read it. *store.DB satisfies it
// (open it with store.OpenReadOnly: reports never write).
type Source interface {
	Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error)
	Each(ctx context.Context, query string, args []any, fn func(store.Scanner) error) error
}

// ErrSelection marks a selection (run id, label or filter) that names
// nothing or cannot be understood: the user's input, not the file, is wrong.
var ErrSelection = errors.New("bad selection")

// chunkRows is how many results rows one query of Export fetches: it walks
// the table in rowid order a chunk at a time, so memory holds one chunk of
// raw values however large the file is.
var chunkRows = 20000

// Columns is what this file's schema holds: the results table's columns
// in schema order, and the review-quality columns of the scores table
// when the file has one. Newer schemas add columns; reports show what the
// file has and nothing it does not.
type Columns struct {
	Names []string
	set   map[string]bool
	// Scores lists, in schema order, the columns of the scores table (one
	// row per scoring of an attempt; the latest one counts) other than its
	// ids; empty when the file has no scores table.
	Scores []string
	scores map[string]bool
	// Reported makes the token metrics and cost the agent's own report
	// even where the wire measured them (`--usage reported`); by default a
	// report uses the wire's figures (and their cost, where priced) where
	// usage_source is 'metered'.
	Reported bool
}

// Usage settings of `wfb report` and `wfb diff`.
const (
	UsageMetered  = "metered"
	UsageReported = "reported"
)

// ParseUsage reads --usage: metered (the wire's usage where the session
// was metered, the agent's elsewhere; "" too) or reported (the agent's
// always).
func ParseUsage(s string) (reported bool, err error) {
	switch s {
	case UsageMetered, "":
		return false, nil
	case UsageReported:
		return true, nil
	}
	return false, fmt.Errorf("--usage %q: want %s or %s", s, UsageMetered, UsageReported)
}

// metricExpr is the SQL a usage metric is read with: the wire's column
// where usage_source says the wire measured it, unless Reported. Cost is
// the wire's usage priced (metered_cost_usd) where the wire measured it and
// wfb's price table priced it, else the agent's: a metered attempt of an
// unpriced model keeps the agent's cost, and one with neither stays NULL.
func (c Columns) metricExpr(m Metric) string {
	col := `r."` + m.Column() + `"`
	switch {
	case c.Reported || !c.Has("usage_source"):
		return col
	case m == CostUSD && c.Has("metered_cost_usd"):
		return store.UsageCostSQL("r")
	case !m.Token():
		return col
	}
	return `CASE WHEN r.usage_source = 'metered' THEN r."metered_` + m.Column() + `" ELSE ` + col + ` END`
}

// Has reports whether the results table has column name.
func (c Columns) Has(name string) bool { return c.set[name] }

// Metrics returns the metrics the file can measure, in report order: the
// usage metrics whose results column exists, and the review-quality ones
// whose scores column exists.
func (c Columns) Metrics() []Metric {
	var ms []Metric
	for m := Metric(0); m < NumMetrics; m++ {
		if (m.Quality() && c.scores[m.Column()]) || (!m.Quality() && c.Has(m.Column())) {
			ms = append(ms, m)
		}
	}
	return ms
}

// hasScores reports whether any quality metric comes from the scores table.
func (c Columns) hasScores() bool { return len(c.scores) > 0 }

// NewColumns returns a Columns holding the results columns names, in the
// order given, and the scores columns in scores.
func NewColumns(names []string, scores ...string) Columns {
	c := Columns{Names: slices.Clone(names), set: make(map[string]bool, len(names)), scores: map[string]bool{}}
	for _, n := range names {
		c.set[n] = true
	}
	for _, n := range scores {
		if !slices.Contains([]string{"score_id", "attempt_id"}, n) {
			c.scores[n] = true
			c.Scores = append(c.Scores, n)
		}
	}
	return c
}

// LoadColumns reads the results table's columns, and the scores table's,
// from the file's schema.
func LoadColumns(ctx context.Context, src Source) (Columns, error) {
	names, err := tableColumns(ctx, src, "results")
	if err != nil {
		return Columns{}, err
	}
	if len(names) == 0 {
		return Columns{}, fmt.Errorf("read results columns: the file has no results table")
	}
	scores, err := tableColumns(ctx, src, "scores")
	if err != nil {
		return Columns{}, err
	}
	if !slices.Contains(scores, "attempt_id") || !slices.Contains(scores, "scored_at") || !slices.Contains(scores, "score_id") {
		scores = nil
	}
	return NewColumns(names, scores...), nil
}

func tableColumns(ctx context.Context, src Source, table string) ([]string, error) {
	_, rows, err := src.Query(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, fmt.Errorf("read %s columns: %w", table, err)
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, asString(r[0]))
	}
	return names, nil
}

// latestScore joins each results row r with its latest score s
// (store.LatestScoreJoin).
const latestScore = store.LatestScoreJoin

// RunInfo is one run with what `wfb runs` shows about it; the counts are
// aggregated by SQLite over the run's attempts (LoadRunStats).
type RunInfo struct {
	ID          string
	Label       string
	Kind        string // "run" (a bench's sweep: wfb run, wfb demo) or "session" (wfb session)
	StartedAt   string // RFC 3339 UTC text as stored
	FinishedAt  string // empty while running or when the process died
	Status      string
	Fingerprint string
	// Tally counts the run's cells by outcome, each by its final attempt
	// (wfb.Cell), and its attempts apart.
	wfb.Tally
	// Cost is the run's cost by the one rule (wfb.Cost), with how many
	// attempts it covers and the agents' own figures beside it.
	Cost wfb.CostSum
	// Budget is the cost cap in US dollars the run last ran under, from
	// runs.config (wfb run --max-cost or the bench's budget); 0 for none.
	Budget float64
}

// LoadRuns returns every run in start order, as the runs table describes
// it; the counts are left zero (see LoadRunStats). Resolving a selection
// needs only this, and it costs nothing however many attempts the file
// holds.
func LoadRuns(ctx context.Context, src Source) ([]RunInfo, error) {
	_, rows, err := src.Query(ctx, `
		SELECT run_id, label, started_at, finished_at, status, fingerprint,
		       CASE WHEN json_valid(config) THEN json_extract(config, '$.budget.usd') END, kind
		FROM runs ORDER BY started_at, run_id`)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := make([]RunInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, RunInfo{
			ID: asString(r[0]), Label: asString(r[1]), StartedAt: asString(r[2]), FinishedAt: asString(r[3]),
			Status: asString(r[4]), Fingerprint: asString(r[5]), Budget: budgetOf(r[6]), Kind: asString(r[7]),
		})
	}
	return out, nil
}

// LoadRunStats returns every run in start order with its counts: what
// `wfb runs` shows.
func LoadRunStats(ctx context.Context, src Source) ([]RunInfo, error) {
	runs, err := LoadRuns(ctx, src)
	if err != nil {
		return nil, err
	}
	return runs, FillRunStats(ctx, src, runs, true)
}

// FillRunStats fills in the counts of runs — cells by outcome, attempts,
// the one cost — as run_summary_v defines them: every run's when all is
// set, else only those named. A finished run's figures are read from the
// copy the file keeps of its run_summary_v row (run_stats, when it still
// describes the run); the others are aggregated by SQLite over their
// attempts (store.RunStatsSQL, run by run).
func FillRunStats(ctx context.Context, src Source, runs []RunInfo, all bool) error {
	if len(runs) == 0 {
		return nil
	}
	byID := map[string]int{}
	for i, r := range runs {
		byID[r.ID] = i
	}
	fill := func(rows [][]any) {
		for _, r := range rows {
			i, ok := byID[asString(r[0])]
			if !ok {
				continue
			}
			n := func(j int) int { return int(asFloat(r[j])) }
			runs[i].Tally = wfb.Tally{Cells: n(1), OK: n(2), Failed: n(3), Errored: n(4), Attempts: n(5)}
			runs[i].Cost = wfb.CostSum{N: n(6), USD: asFloat(r[7]), Metered: n(8), AgentN: n(9), AgentUSD: asFloat(r[10]), Of: n(5)}
			delete(byID, asString(r[0]))
		}
	}
	fresh, err := freshRunStats(ctx, src)
	if err != nil {
		return err
	}
	fill(fresh)
	if len(byID) == 0 {
		return nil
	}
	if all && len(fresh) == 0 {
		// Every run: one pass of the view over the file.
		_, rows, err := src.Query(ctx, `SELECT run_id, `+store.RunStatsColumns+` FROM run_summary_v`)
		if err != nil {
			return fmt.Errorf("count the runs' cells and attempts: %w", err)
		}
		fill(rows)
		return nil
	}
	// The others one by one, each over its own attempts (the view,
	// selected by run, would aggregate every run first).
	for _, r := range runs {
		if _, left := byID[r.ID]; !left {
			continue
		}
		_, rows, err := src.Query(ctx, store.RunStatsSQL, r.ID)
		if err != nil {
			return fmt.Errorf("count the cells and attempts of run %s: %w", r.ID, err)
		}
		fill(rows)
	}
	return nil
}

// freshRunStats reads the kept figures of the runs they still describe
// (store.FreshRunStatsSQL); none from a file written before they were
// kept.
func freshRunStats(ctx context.Context, src Source) ([][]any, error) {
	kept, err := hasTable(ctx, src, "run_stats")
	if err != nil || !kept {
		return nil, err
	}
	_, rows, err := src.Query(ctx, store.FreshRunStatsSQL)
	if err != nil {
		return nil, fmt.Errorf("read the runs' kept counts: %w", err)
	}
	return rows, nil
}

// hasTable reports whether the file has table name: a file written by an
// older wfb lacks the newer ones.
func hasTable(ctx context.Context, src Source, name string) (bool, error) {
	_, rows, err := src.Query(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?)`, name)
	if err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return asInt(rows[0][0]) == 1, nil
}

// CellCount is the cells of one task and arm of a run, and how many of
// them ended ok, by the cell rule.
type CellCount struct {
	Task, Arm string
	Cells, OK int
}

// LoadCellCounts counts run id's cells per task and arm (store.CellStatsSQL,
// the cell rule as the file spells it): from the copy the file keeps when
// the run is finished and nothing landed since, else over its attempts.
func LoadCellCounts(ctx context.Context, src Source, id string) ([]CellCount, error) {
	q := store.CellStatsSQL
	fresh, err := freshRunStats(ctx, src)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(fresh, func(r []any) bool { return asString(r[0]) == id }) {
		q = `SELECT task, arm, cells, ok FROM run_cell_stats WHERE run_id = ?1`
	}
	var out []CellCount
	err = src.Each(ctx, q, []any{id}, func(sc store.Scanner) error {
		var c CellCount
		err := sc.Scan(&c.Task, &c.Arm, &c.Cells, &c.OK)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cells of run %s: %w", id, err)
	}
	return out, nil
}

// Selection picks attempts out of the file: whole runs, or a filter over
// results columns (optionally narrowed to runs). Spec is what the user
// typed, kept for headings and messages.
type Selection struct {
	Spec   string
	RunIDs []string // nil: every run
	Conds  []Cond
}

// Cond is one filter condition: Key is a results column or "day" (the UTC
// date of started_at), and a row matches when its value is any of Values.
type Cond struct {
	Key    string
	Values []string
}

// IsFilter reports whether the selection came from key=value conditions
// rather than naming runs.
func (s Selection) IsFilter() bool { return strings.Contains(s.Spec, "=") }

// ResolveSelection turns what the user typed into a Selection:
//
//   - "key=value[,key=value...]" is a filter over results columns. Different
//     keys must all match; a key given twice matches either value
//     (arm=a,arm=b). "day=2026-11-29" matches started_at's UTC date, and
//     "run=X" / "label=X" narrow to the runs with that id or label. Without
//     run or label the filter spans every run in the file.
//   - anything else is a run id or, failing that, a label (every run with
//     that label).
//
// Errors wrap ErrSelection and say what was wrong and what exists.
func ResolveSelection(ctx context.Context, src Source, cols Columns, runs []RunInfo, spec string) (Selection, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Selection{}, fmt.Errorf("%w: empty run, label or filter", ErrSelection)
	}
	if !strings.Contains(spec, "=") {
		ids, err := runsNamed(runs, spec)
		if err != nil {
			return Selection{}, err
		}
		return Selection{Spec: spec, RunIDs: ids}, nil
	}
	sel := Selection{Spec: spec}
	byKey := map[string]int{}
	for i, part := range strings.Split(spec, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return Selection{}, fmt.Errorf("%w: filter %q, condition %d %q: want key=value", ErrSelection, spec, i+1, part)
		}
		switch {
		case key == "run" || key == "label" || key == "run_id":
			ids, err := runsNamed(runs, val)
			if err != nil {
				return Selection{}, fmt.Errorf("filter %q: %w", spec, err)
			}
			if sel.RunIDs == nil {
				sel.RunIDs = []string{}
			}
			for _, id := range ids {
				if !slices.Contains(sel.RunIDs, id) {
					sel.RunIDs = append(sel.RunIDs, id)
				}
			}
			continue
		case key == "day":
		case !cols.Has(key):
			return Selection{}, fmt.Errorf("%w: filter %q: unknown key %q; use day, run, label or a results column (%s)",
				ErrSelection, spec, key, strings.Join(cols.Names, ", "))
		}
		if j, seen := byKey[key]; seen {
			sel.Conds[j].Values = append(sel.Conds[j].Values, val)
			continue
		}
		byKey[key] = len(sel.Conds)
		sel.Conds = append(sel.Conds, Cond{Key: key, Values: []string{val}})
	}
	return sel, nil
}

// runsNamed returns the runs whose id is name, or else whose label is name.
func runsNamed(runs []RunInfo, name string) ([]string, error) {
	for _, r := range runs {
		if r.ID == name {
			return []string{r.ID}, nil
		}
	}
	var ids []string
	for _, r := range runs {
		if r.Label == name {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) > 0 {
		return ids, nil
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%w: no run or label %q: the file has no runs", ErrSelection, name)
	}
	var known []string
	for i := len(runs) - 1; i >= 0 && len(known) < 5; i-- {
		k := runs[i].ID
		if runs[i].Label != "" {
			k += " (" + runs[i].Label + ")"
		}
		known = append(known, k)
	}
	return nil, fmt.Errorf("%w: no run or label %q; latest runs: %s (see wfb runs)", ErrSelection, name, strings.Join(known, ", "))
}

// LatestRun returns the selection of the most recently started bench run
// (kind "run": wfb run, wfb demo), and of the most recently started run of
// any kind where the file holds only sessions: a one-cell ad-hoc wfb
// session started since is rarely what a bare `wfb report` is after. runs
// are in start order (LoadRuns).
func LatestRun(runs []RunInfo) (Selection, error) {
	if len(runs) == 0 {
		return Selection{}, fmt.Errorf("%w: the file has no runs yet", ErrSelection)
	}
	last := runs[len(runs)-1]
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Kind == "run" {
			last = runs[i]
			break
		}
	}
	return Selection{Spec: last.ID, RunIDs: []string{last.ID}}, nil
}

// where returns the SQL condition and arguments for the selection's
// filter conditions (not its runs). Keys were checked against the schema,
// so quoting them as identifiers is safe.
func (s Selection) where() (string, []any) {
	var parts []string
	var args []any
	for _, c := range s.Conds {
		col := `r."` + c.Key + `"`
		if c.Key == "day" {
			col = "substr(r.started_at, 1, 10)"
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(c.Values)), ", ")
		parts = append(parts, col+" IN ("+marks+")")
		for _, v := range c.Values {
			args = append(args, v)
		}
	}
	if len(parts) == 0 {
		return "1", nil
	}
	return strings.Join(parts, " AND "), args
}

// RunsWithRows returns the runs that have an attempt the selection picks:
// one DISTINCT query, not a pass over the attempts (a trend's buckets are
// the runs its selection touches).
func RunsWithRows(ctx context.Context, src Source, sel Selection) (map[string]bool, error) {
	cond, args := sel.where()
	q := "SELECT DISTINCT r.run_id FROM results r WHERE (" + cond + ")"
	if len(sel.Conds) == 0 {
		// Without a filter, a run has rows when its first index entry
		// exists: one seek a run, where DISTINCT walks every entry.
		q = "SELECT r.run_id FROM runs r WHERE EXISTS (SELECT 1 FROM results WHERE run_id = r.run_id)"
	}
	if sel.RunIDs != nil {
		q += " AND r.run_id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(sel.RunIDs)), ", ") + ")"
		for _, id := range sel.RunIDs {
			args = append(args, id)
		}
	}
	present := map[string]bool{}
	err := src.Each(ctx, q, args, func(sc store.Scanner) error {
		var id string
		err := sc.Scan(&id)
		present[id] = true
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the runs with attempts: %w", err)
	}
	return present, nil
}

// LoadRows streams the attempts the selection picks to fn, in each run's
// insertion order, as SQLite reads them: one query per run (one in all for
// a filter spanning every run), scanned into typed destinations that write
// straight into a reused Row, so memory holds one row however large the
// file is. The *Row is reused between calls: fn must copy what it keeps.
// Strings are interned, so keeping them costs nothing per row.
//
// A finished run's rows are decoded from the copy the file keeps of them
// (store.EachRunRow) when it is the output of the very query the loader
// would send and still describes the run; a filter, a run without one,
// and a file without copies are read from the results table.
//
// With more than one CPU, the rows are read and decoded on a goroutine of
// their own while fn takes them on the caller's, a batch behind: reading
// (SQLite's steps, or a copy's decoding) is about half of a large report's
// time, what fn does with the rows the other half.
func LoadRows(ctx context.Context, src Source, cols Columns, sel Selection, fn func(*Row)) error {
	if runtime.GOMAXPROCS(0) < 2 {
		return loadRows(ctx, src, cols, sel, fn)
	}
	const batchRows, batches = 1024, 3
	ctx, cancel := context.WithCancel(ctx)
	full := make(chan []Row, batches-1)
	free := make(chan []Row, batches)
	for range batches {
		free <- make([]Row, 0, batchRows)
	}
	var err error
	go func() {
		defer close(full)
		cur := <-free
		err = loadRows(ctx, src, cols, sel, func(r *Row) {
			cur = append(cur, *r)
			if len(cur) == batchRows {
				full <- cur
				cur = (<-free)[:0]
			}
		})
		if len(cur) > 0 {
			full <- cur
		}
	}()
	// However fn ends (a panic included), the reader is stopped and gone
	// before LoadRows returns: nothing keeps reading the file behind it.
	defer func() {
		cancel()
		for b := range full {
			free <- b
		}
	}()
	for b := range full {
		for i := range b {
			fn(&b[i])
		}
		free <- b
	}
	return err
}

// loadRows is LoadRows on one goroutine: fn is called from the scan.
func loadRows(ctx context.Context, src Source, cols Columns, sel Selection, fn func(*Row)) error {
	l := newLoader(cols, fn)
	cond, condArgs := sel.where()
	if sel.RunIDs == nil && len(sel.Conds) == 0 {
		ids, err := l.copiedRuns(ctx, src)
		if err != nil {
			return err
		}
		sel.RunIDs = ids // nil unless every run's rows are copied
	}
	if sel.RunIDs == nil {
		// Every run at once: a scan of the table in rowid order (NOT
		// INDEXED keeps an index on a filtered column from making SQLite
		// sort every match before the first row comes back).
		scored, err := hasScores(ctx, src, cols, "")
		if err != nil {
			return err
		}
		q, dests := l.query(true, scored)
		q += " FROM results r NOT INDEXED"
		if scored {
			q += latestScore
		}
		q += " WHERE " + cond + " ORDER BY r.rowid"
		if err := src.Each(ctx, q, condArgs, l.scan(dests)); err != nil {
			return fmt.Errorf("load results: %w", err)
		}
		return nil
	}
	// One run at a time: the (run_id) index holds each run's rowids in
	// order, so the run is read in insertion order without a sort, and its
	// id need not be read back from every row.
	for _, id := range sel.RunIDs {
		l.row.RunID = l.str(id)
		if len(sel.Conds) == 0 {
			copied, err := l.fromCopy(ctx, src, id)
			if err != nil {
				return fmt.Errorf("load results of run %s: %w", id, err)
			}
			if copied {
				continue
			}
		}
		scored, err := hasScores(ctx, src, cols, id)
		if err != nil {
			return err
		}
		q, dests := l.query(false, scored)
		q += " FROM results r"
		if scored {
			q += latestScore
		}
		q += " WHERE r.run_id = ? AND (" + cond + ") ORDER BY r.rowid"
		if err := src.Each(ctx, q, append([]any{id}, condArgs...), l.scan(dests)); err != nil {
			return fmt.Errorf("load results of run %s: %w", id, err)
		}
	}
	return nil
}

// rowCopies is a results file that keeps copies of its finished runs'
// rows as the loader reads them (*store.DB).
type rowCopies interface {
	RunRows(ctx context.Context, id, query string) (store.RunRowsCopy, bool, error)
	EachRunRow(ctx context.Context, id, query string, fn func(store.Scanner) error) (bool, error)
}

// copyQuery is the select list a run's copy must be the output of for the
// loader to read it: the one it sends for a run, its scores joined.
func (l *loader) copyQuery() (string, []any) { return l.query(false, true) }

// fromCopy streams run id's rows from the file's copy of them, and
// reports whether it did: false (nothing read) when src keeps none that
// is the output of this loader's query and still describes the run.
func (l *loader) fromCopy(ctx context.Context, src Source, id string) (bool, error) {
	c, ok := src.(rowCopies)
	if !ok {
		return false, nil
	}
	q, dests := l.copyQuery()
	return c.EachRunRow(ctx, id, q, l.scan(dests))
}

// copiedRuns returns every run with attempts in the order their rows were
// written, when each keeps a current copy of them and no two runs' rows
// interleave: reading them run by run is then reading the table in rowid
// order, as the scan of every run would. Otherwise nil.
func (l *loader) copiedRuns(ctx context.Context, src Source) ([]string, error) {
	c, ok := src.(rowCopies)
	if !ok {
		return nil, nil
	}
	present, err := RunsWithRows(ctx, src, Selection{})
	if err != nil || len(present) == 0 {
		return nil, err
	}
	q, _ := l.copyQuery()
	type span struct {
		id          string
		first, last int64
	}
	spans := make([]span, 0, len(present))
	for id := range present {
		cp, ok, err := c.RunRows(ctx, id, q)
		if err != nil || !ok {
			return nil, err
		}
		spans = append(spans, span{id, cp.FirstRowid, cp.LastRowid})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.first, b.first) })
	ids := make([]string, len(spans))
	for i, s := range spans {
		if i > 0 && s.first <= spans[i-1].last {
			return nil, nil
		}
		ids[i] = s.id
	}
	return ids, nil
}

// hasScores reports whether any attempt of the run (of every run, for "")
// has a score. The quality columns of a run without one are NULL on every
// row, so its query need not join scores nor read them.
func hasScores(ctx context.Context, src Source, cols Columns, runID string) (bool, error) {
	if !cols.hasScores() {
		return false, nil
	}
	// Scores drive the join (CROSS JOIN fixes the loop order): a file
	// holds far fewer scores than attempts, and one with none answers at
	// once, where walking the run's attempts would probe every one.
	queries := []string{`SELECT EXISTS (SELECT 1 FROM scores)`}
	if runID != "" {
		queries = append(queries, `SELECT EXISTS (SELECT 1 FROM scores s CROSS JOIN results r
			ON r.attempt_id = s.attempt_id WHERE r.run_id = ?)`)
	}
	for i, q := range queries {
		var args []any
		if i > 0 {
			args = []any{runID}
		}
		_, rows, err := src.Query(ctx, q, args...)
		if err != nil {
			return false, fmt.Errorf("look for scores: %w", err)
		}
		if asInt(rows[0][0]) != 1 {
			return false, nil
		}
	}
	return true, nil
}

// loader scans results rows into one reused Row.
type loader struct {
	cols      Columns
	fn        func(*Row)
	row       Row
	intern    map[string]string
	rep       int64
	attempt   int64
	ok        int64
	disagrees int64
	witness   int64 // witnessUnwitnessed, witnessAgentOnly or 0
}

// How an attempt's usage was witnessed, as the loader reads it (see
// witnessExpr).
const (
	witnessUnwitnessed = 1
	witnessAgentOnly   = 2
)

// witnessExpr says, per attempt, whether only its agent witnessed its
// usage: unwitnessed (metered, no model request reached the meter), or
// agent-reported only (usage_source reported, no verdict, in a run
// recorded with --meter=off). The runs are read once, not per attempt.
const witnessExpr = `CASE WHEN r.usage_verdict = '` + string(wfb.VerdictUnwitnessed) + `' THEN 1
	WHEN r.usage_source = '` + wfb.UsageReported + `' AND r.usage_verdict IS NULL AND r.run_id IN (
		SELECT run_id FROM runs WHERE CASE WHEN json_valid(config) THEN json_extract(config, '$.meter') END = 'off') THEN 2
	ELSE 0 END`

func newLoader(cols Columns, fn func(*Row)) *loader {
	return &loader{cols: cols, fn: fn, intern: map[string]string{}}
}

func (l *loader) str(s string) string { return intern1(l.intern, s) }

// query returns the select list of a load (run_id first when withRun; the
// quality metrics only when scored) and the destinations its columns scan
// into, in the same order.
func (l *loader) query(withRun, scored bool) (string, []any) {
	var b strings.Builder
	var dests []any
	col := func(expr string, dest any) {
		if len(dests) == 0 {
			b.WriteString("SELECT ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(expr)
		dests = append(dests, dest)
	}
	if withRun {
		col("r.run_id", textDest{&l.row.RunID, l.intern})
	}
	col("r.task", textDest{&l.row.Task, l.intern})
	col("r.arm", textDest{&l.row.Arm, l.intern})
	col("r.rep", intDest{&l.rep, "rep"})
	col("r.attempt", intDest{&l.attempt, "attempt"})
	if l.cols.Has("agent_version") {
		col("r.agent_version", textDest{&l.row.AgentVersion, l.intern})
	}
	col("r.ok", intDest{&l.ok, "ok"})
	if l.cols.Has("usage_verdict") {
		col("COALESCE(r.usage_verdict = '"+string(wfb.VerdictDisagree)+"', 0)", intDest{&l.disagrees, "usage_verdict"})
		col(witnessExpr, intDest{&l.witness, "usage_verdict"})
	}
	col("r.error_kind", textDest{&l.row.ErrorKind, l.intern})
	for _, m := range l.cols.Metrics() {
		switch {
		case !m.Quality():
			col(l.cols.metricExpr(m), metricDest{&l.row.Values[m], m.Column()})
		case scored:
			col(`s."`+m.Column()+`"`, metricDest{&l.row.Values[m], m.Column()})
		}
	}
	if scored && l.cols.scores["labels_digest"] {
		col("s.labels_digest", textDest{&l.row.LabelsDigest, l.intern})
	}
	return b.String(), dests
}

// scan returns the per-row callback for a query whose columns scan into
// dests. A metric not read (a quality metric of an unscored run) stays NaN.
func (l *loader) scan(dests []any) func(store.Scanner) error {
	return func(s store.Scanner) error {
		l.row.Values, l.row.LabelsDigest = Unmeasured(), ""
		if err := s.Scan(dests...); err != nil {
			return err
		}
		l.row.Rep, l.row.Attempt, l.row.OK = int(l.rep), int(l.attempt), l.ok == 1
		l.row.UsageDisagrees = l.disagrees == 1
		l.row.UsageUnwitnessed, l.row.UsageAgentOnly = l.witness == witnessUnwitnessed, l.witness == witnessAgentOnly
		l.fn(&l.row)
		return nil
	}
}

func intern1(intern map[string]string, s string) string {
	if t, ok := intern[s]; ok {
		return t
	}
	intern[s] = s
	return s
}

// textDest scans a TEXT column into *dst, interned (a report's rows repeat
// a few task, arm and kind names a million times); NULL is "".
type textDest struct {
	dst    *string
	intern map[string]string
}

func (d textDest) Scan(src any) error {
	switch x := src.(type) {
	case nil:
		*d.dst = ""
	case string:
		*d.dst = intern1(d.intern, x)
	case []byte:
		if t, ok := d.intern[string(x)]; ok {
			*d.dst = t
			return nil
		}
		*d.dst = intern1(d.intern, string(x))
	default:
		*d.dst = intern1(d.intern, asString(x))
	}
	return nil
}

// textDest, intDest and metricDest take a copied row's values by type
// (store.ValueDest), as Scan takes the engine's.
func (d textDest) ScanNull() error           { *d.dst = ""; return nil }
func (d textDest) ScanText(s string) error   { *d.dst = intern1(d.intern, s); return nil }
func (d textDest) ScanInt(x int64) error     { return d.Scan(x) }
func (d textDest) ScanFloat(x float64) error { return d.Scan(x) }

func (d intDest) ScanNull() error           { return d.Scan(nil) }
func (d intDest) ScanInt(x int64) error     { *d.dst = x; return nil }
func (d intDest) ScanFloat(x float64) error { return d.Scan(x) }
func (d intDest) ScanText(s string) error   { return d.Scan(s) }

func (d metricDest) ScanNull() error           { *d.dst = math.NaN(); return nil }
func (d metricDest) ScanInt(x int64) error     { *d.dst = float64(x); return nil }
func (d metricDest) ScanFloat(x float64) error { *d.dst = x; return nil }
func (d metricDest) ScanText(s string) error   { return d.Scan(s) }

// intDest scans an INTEGER NOT NULL column into *dst.
type intDest struct {
	dst *int64
	col string
}

func (d intDest) Scan(src any) error {
	x, ok := src.(int64)
	if !ok {
		return fmt.Errorf("column %s: %s, want an integer", d.col, describe(src))
	}
	*d.dst = x
	return nil
}

// metricDest scans a metric column into *dst: NaN for NULL (not measured),
// the number otherwise, so a measured 0 stays 0. Anything but a number is
// an error naming the column, never a silent NaN or 0.
type metricDest struct {
	dst *float64
	col string
}

func (d metricDest) Scan(src any) error {
	switch x := src.(type) {
	case nil:
		*d.dst = math.NaN()
	case int64:
		*d.dst = float64(x)
	case float64:
		*d.dst = x
	default:
		return fmt.Errorf("column %s: %s, want a number or NULL", d.col, describe(src))
	}
	return nil
}

func describe(v any) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprintf("%T value %q", v, asString(v))
}

// RunsOf returns the runs among all whose ids are in ids, in start order;
// for a selection spanning every run (ids nil), all of them.
func RunsOf(all []RunInfo, ids []string) []RunInfo {
	if ids == nil {
		return all
	}
	var out []RunInfo
	for _, r := range all {
		if slices.Contains(ids, r.ID) {
			out = append(out, r)
		}
	}
	return out
}

func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// budgetOf reads a run's budget from its config: 0 for none.
func budgetOf(v any) float64 {
	if f := asFloat(v); f > 0 {
		return f
	}
	return 0
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}
