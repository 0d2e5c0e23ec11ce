package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Source is the results file as the loaders read it. *store.DB satisfies it
// (open it with store.OpenReadOnly: reports never write).
type Source interface {
	Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error)
}

// ErrSelection marks a selection (run id, label or filter) that names
// nothing or cannot be understood: the user's input, not the file, is wrong.
var ErrSelection = errors.New("bad selection")

// chunkRows is how many results rows one query fetches. Loading walks the
// table in rowid order a chunk at a time, so memory holds one chunk of raw
// values however large the file is.
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

// latestScore joins each results row r with its latest score s: the latest
// scored_at, then the greatest score_id (as the latest_scores_v view
// orders them). The correlated lookup uses the (attempt_id, scored_at)
// index, where joining the window-function view would rank every score on
// every chunk.
const latestScore = ` LEFT JOIN scores s ON s.score_id = (SELECT score_id FROM scores
	WHERE attempt_id = r.attempt_id ORDER BY scored_at DESC, score_id DESC LIMIT 1)`

// RunInfo is one run with what `wfb runs` shows about it; the counts are
// aggregated by SQLite over the run's attempts (LoadRunStats).
type RunInfo struct {
	ID          string
	Label       string
	StartedAt   string // RFC 3339 UTC text as stored
	FinishedAt  string // empty while running or when the process died
	Status      string
	Fingerprint string
	Cells       int // distinct (task, arm, rep)
	Attempts    int
	OK          int
	CostN       int     // attempts whose cost was measured
	CostSum     float64 // sum of the measured costs
}

// LoadRuns returns every run in start order, as the runs table describes
// it; the counts are left zero (see LoadRunStats). Resolving a selection
// needs only this, and it costs nothing however many attempts the file
// holds.
func LoadRuns(ctx context.Context, src Source) ([]RunInfo, error) {
	_, rows, err := src.Query(ctx, `
		SELECT run_id, label, started_at, finished_at, status, fingerprint
		FROM runs ORDER BY started_at, run_id`)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := make([]RunInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, RunInfo{
			ID: asString(r[0]), Label: asString(r[1]), StartedAt: asString(r[2]), FinishedAt: asString(r[3]),
			Status: asString(r[4]), Fingerprint: asString(r[5]),
		})
	}
	return out, nil
}

// LoadRunStats returns every run in start order with its counts, which
// SQLite aggregates over the run's attempts: what `wfb runs` shows.
func LoadRunStats(ctx context.Context, src Source) ([]RunInfo, error) {
	runs, err := LoadRuns(ctx, src)
	if err != nil {
		return nil, err
	}
	_, rows, err := src.Query(ctx, `
		SELECT run_id, count(*), total(ok), count(cost_usd), total(cost_usd),
		       (SELECT count(*) FROM (SELECT DISTINCT task, arm, rep FROM results c WHERE c.run_id = r.run_id))
		FROM results r GROUP BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("count attempts per run: %w", err)
	}
	byID := map[string]int{}
	for i, r := range runs {
		byID[r.ID] = i
	}
	for _, r := range rows {
		i, ok := byID[asString(r[0])]
		if !ok {
			continue
		}
		runs[i].Attempts, runs[i].OK = int(asFloat(r[1])), int(asFloat(r[2]))
		runs[i].CostN, runs[i].CostSum = int(asFloat(r[3])), asFloat(r[4])
		runs[i].Cells = int(asFloat(r[5]))
	}
	return runs, nil
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

// LatestRun returns the selection of the most recently started run.
func LatestRun(runs []RunInfo) (Selection, error) {
	if len(runs) == 0 {
		return Selection{}, fmt.Errorf("%w: the file has no runs yet", ErrSelection)
	}
	last := runs[len(runs)-1]
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

// LoadRows streams the attempts the selection picks to fn, one chunk of
// rows at a time, in each run's insertion order. The *Row is reused between
// calls: fn must copy what it keeps. Strings are interned, so keeping them
// costs nothing per row.
func LoadRows(ctx context.Context, src Source, cols Columns, sel Selection, fn func(*Row)) error {
	ms := cols.Metrics()
	var b strings.Builder
	b.WriteString("SELECT r.rowid, r.run_id, r.task, r.arm, r.rep, r.attempt, ")
	if cols.Has("agent_version") {
		b.WriteString("r.agent_version")
	} else {
		b.WriteString("NULL")
	}
	b.WriteString(", r.ok, r.error_kind")
	for _, m := range ms {
		if m.Quality() {
			b.WriteString(`, s."` + m.Column() + `"`)
		} else {
			b.WriteString(`, r."` + m.Column() + `"`)
		}
	}
	cond, condArgs := sel.where()
	intern := map[string]string{}
	str := func(v any) string {
		s := asString(v)
		if t, ok := intern[s]; ok {
			return t
		}
		intern[s] = s
		return s
	}
	row := Row{}
	scan := func(query string, fixed []any) error {
		last := int64(-1 << 62)
		for {
			args := append(append([]any{last}, fixed...), condArgs...)
			_, rows, err := src.Query(ctx, query, args...)
			if err != nil {
				return fmt.Errorf("load results: %w", err)
			}
			for _, r := range rows {
				last = asInt(r[0])
				row.RunID, row.Task, row.Arm = str(r[1]), str(r[2]), str(r[3])
				row.Rep, row.Attempt = int(asInt(r[4])), int(asInt(r[5]))
				row.AgentVersion = str(r[6])
				row.OK = asInt(r[7]) == 1
				row.ErrorKind = str(r[8])
				row.Values = Unmeasured()
				for i, m := range ms {
					if v := r[9+i]; v != nil {
						row.Values[m] = asFloat(v)
					}
				}
				fn(&row)
			}
			if len(rows) < chunkRows {
				return ctx.Err()
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	from := " FROM results r"
	if cols.hasScores() {
		from += latestScore
	}
	limit := " ORDER BY r.rowid LIMIT " + strconv.Itoa(chunkRows)
	if sel.RunIDs == nil {
		// NOT INDEXED keeps SQLite on the rowid range: an index on a
		// filtered column would make every chunk re-sort its matches.
		return scan(b.String()+strings.Replace(from, "results r", "results r NOT INDEXED", 1)+
			" WHERE r.rowid > ? AND ("+cond+")"+limit, nil)
	}
	// One run at a time: the (run_id) index holds rowids in order, so each
	// chunk is a range seek rather than a scan of the run.
	q := b.String() + from + " WHERE r.rowid > ? AND r.run_id = ? AND (" + cond + ")" + limit
	for _, id := range sel.RunIDs {
		if err := scan(q, []any{id}); err != nil {
			return err
		}
	}
	return nil
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
