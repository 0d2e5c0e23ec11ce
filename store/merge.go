package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wfbench/wfb"
)

// ErrMergeConflict says a source holds a row whose id is already in the
// destination with different content. Nothing of the merge was written.
var ErrMergeConflict = errors.New("merge conflict")

// ErrMergeSelf says a source is the destination file itself.
var ErrMergeSelf = errors.New("a file cannot be merged into itself")

// ConflictError names the row and the columns on which a source and the
// destination disagree. It wraps ErrMergeConflict.
type ConflictError struct {
	Source  string   // source file
	Table   string   // runs, results, evidence, artifacts, scores, model_usage, requests or exchanges
	Key     string   // the key column(s): run_id, attempt_id, score_id, request_id, or "attempt_id, model"
	ID      string   // the key both files hold, its values joined like Key's columns
	Columns []string // every column that differs, in schema order
	Dst     any      // the destination's value of Columns[0]
	Src     any      // the source's value of Columns[0]
}

func (e *ConflictError) Error() string {
	more := ""
	if len(e.Columns) > 1 {
		more = fmt.Sprintf(" (also differing: %s)", strings.Join(e.Columns[1:], ", "))
	}
	key := e.Key + "=" + e.ID
	if strings.Contains(e.Key, ",") {
		key = "(" + e.Key + ")=(" + e.ID + ")"
	}
	return fmt.Sprintf("merge %s: %s %s is already in the destination with different content: column %s is %s there but %s in the source%s; nothing was merged",
		e.Source, e.Table, key, e.Columns[0], showValue(e.Dst), showValue(e.Src), more)
}

func (e *ConflictError) Unwrap() error { return ErrMergeConflict }

// TableStats counts the rows of one table a merge read from a source: Added
// were copied, Present were already in the destination, identical.
type TableStats struct {
	Added, Present int
}

// MergeStats says what merging one source did.
type MergeStats struct {
	Source                                     string
	Runs, Results, Evidence, Artifacts, Scores TableStats
	ModelUsage, ToolUses                       TableStats
	Requests, Exchanges                        TableStats
	Transcripts                                TableStats
	// Redacted counts the values of copied rows that Redact changed: text
	// holding what looks like a secret, in a source written before a
	// redaction rule existed, or by hand.
	Redacted int
	// RunsCombined counts runs already in the destination (another shard of
	// the same run) whose status or times changed by combining; they are
	// also counted in Runs.Present.
	RunsCombined int
}

// mergeTable names a table a merge copies and the columns of its primary
// key, which identify a row across files.
type mergeTable struct {
	name string
	keys []string
}

// mergeTables lists what a merge copies, parents before children so that
// foreign keys hold at every insert.
var mergeTables = []mergeTable{
	{"runs", []string{"run_id"}},
	{"results", []string{"attempt_id"}},
	{"evidence", []string{"attempt_id"}},
	{"transcripts", []string{"attempt_id"}},
	{"artifacts", []string{"attempt_id"}},
	{"scores", []string{"score_id"}},
	{"model_usage", []string{"attempt_id", "model"}},
	{"tool_uses", []string{"attempt_id", "tool"}},
	{"requests", []string{"request_id"}},
	{"exchanges", []string{"request_id"}},
}

// MergeFiles copies every source into dst, all in one transaction: either
// every source is merged or (on any error) nothing is.
//
// Rows are matched by their primary key (run_id, attempt_id, score_id,
// request_id; attempt_id and model for model_usage, and tool for tool_uses). Every source row is first passed
// through Redact (each text value, and an artifact's content) and checked
// against the rules the store writes by (see checkRow): a row that breaks
// one is an *InvalidRowError naming the table, the row and the column, and
// nothing is merged. A row whose key is not in dst is then copied. A row
// already in dst with the same content is left alone, so merging a file
// twice adds nothing. A row already in dst with different content is a
// *ConflictError naming the table, the key and the columns.
//
// Runs are the one exception, because the shards of one sharded `wfb run`
// share a run id: a run in both files must agree on label, kind,
// fingerprint, harness and config, and its status, started_at and
// finished_at are combined — the worst status (interrupted > aborted >
// running > complete), the earliest start, and the latest finish (NULL, not
// finished, when either side has not finished). A run whose shards are
// still running should be merged again once they end; note that a
// "running" copy merged earlier keeps the combined run "running".
//
// Sources are opened read-only (the engine refuses writes), a source
// written by a newer wfb is refused with ErrSchemaTooNew and an older one
// with ErrSchemaTooOld (wfb upgrade migrates it; see Upgrade),
// and a source that is the destination file itself is refused. A run that
// another process is recording in dst is refused with ErrInUse, before
// anything is written: the merge holds every run it would write (see
// DB.HoldRun) until it ends.
func MergeFiles(ctx context.Context, dst *DB, srcPaths []string) ([]MergeStats, error) {
	if dst.readOnly {
		return nil, fmt.Errorf("merge into %s: %w", dst.path, ErrReadOnly)
	}
	dstInfo, err := os.Stat(dst.path)
	if err != nil {
		return nil, fmt.Errorf("merge into %s: %w", dst.path, err)
	}
	var srcs []*DB
	var heldRuns []string
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	for _, p := range srcPaths {
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, dstInfo) {
			return nil, fmt.Errorf("merge %s: it is the destination file itself: %w", p, ErrMergeSelf)
		}
		s, err := OpenReadOnly(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		srcs = append(srcs, s)
	}
	defer func() {
		for _, id := range heldRuns {
			dst.ReleaseRun(id)
		}
	}()
	if heldRuns, err = holdSourceRuns(ctx, dst, srcs); err != nil {
		return nil, err
	}
	stats := make([]MergeStats, len(srcs))
	err = dst.Tx(ctx, func(tx *sql.Tx) error {
		for i, src := range srcs {
			stats[i].Source = src.path
			if err := mergeOne(ctx, tx, src, &stats[i]); err != nil {
				return err
			}
		}
		// Rows and statuses of the merged runs may have changed: their
		// kept figures are counted again, in the same transaction.
		for _, id := range heldRuns {
			if err := countRunTx(ctx, tx, id); err != nil {
				return fmt.Errorf("merge into %s: %w", dst.path, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}

// holdSourceRuns holds in dst every run of the sources, and returns those
// it holds (those held before a refusal included) to be released.
func holdSourceRuns(ctx context.Context, dst *DB, srcs []*DB) ([]string, error) {
	seen := map[string]bool{}
	var held []string
	for _, src := range srcs {
		_, rows, err := src.Query(ctx, `SELECT run_id FROM runs ORDER BY run_id`)
		if err != nil {
			return held, fmt.Errorf("merge %s: %w", src.path, err)
		}
		for _, r := range rows {
			id, _ := r[0].(string)
			if seen[id] {
				continue
			}
			if err := dst.HoldRun(id); err != nil {
				return held, fmt.Errorf("merge %s into %s: %w", src.path, dst.path, err)
			}
			seen[id] = true
			held = append(held, id)
		}
	}
	return held, nil
}

func mergeOne(ctx context.Context, tx *sql.Tx, src *DB, st *MergeStats) error {
	counts := map[string]*TableStats{
		"runs": &st.Runs, "results": &st.Results, "evidence": &st.Evidence,
		"artifacts": &st.Artifacts, "scores": &st.Scores, "model_usage": &st.ModelUsage,
		"tool_uses": &st.ToolUses, "requests": &st.Requests, "exchanges": &st.Exchanges,
		"transcripts": &st.Transcripts,
	}
	for _, t := range mergeTables {
		cols, err := tableColumns(ctx, tx, t.name)
		if err != nil {
			return fmt.Errorf("merge %s: %w", src.path, err)
		}
		if err := copyTable(ctx, tx, src, t, cols, counts[t.name], st); err != nil {
			return err
		}
	}
	return nil
}

// querier is what tableColumns reads through: a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// tableColumns lists a table's columns in schema order. Source and
// destination have the same schema version, so they have the same columns.
func tableColumns(ctx context.Context, q querier, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("table %s does not exist", table)
	}
	return cols, nil
}

// eachSourceRow reads table t of src, in key order, and calls fn with each
// row's values (in the order of cols).
func eachSourceRow(ctx context.Context, src *DB, t mergeTable, cols []string, fn func(row []any) error) error {
	for _, k := range t.keys {
		if !slices.Contains(cols, k) {
			return fmt.Errorf("merge %s: table %s has no key column %s", src.path, t.name, k)
		}
	}
	rows, err := src.db.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+t.name+` ORDER BY `+strings.Join(t.keys, ", "))
	if err != nil {
		return fmt.Errorf("merge %s: read %s: %w", src.path, t.name, src.classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		row, err := scanValues(rows, len(cols))
		if err != nil {
			return fmt.Errorf("merge %s: read %s: %w", src.path, t.name, src.classify(err))
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("merge %s: read %s: %w", src.path, t.name, src.classify(err))
	}
	return nil
}

// rowKey returns the values of t's key columns in row, and the id they
// make in messages (joined like the key's columns).
func rowKey(t mergeTable, cols []string, row []any) ([]any, string) {
	vals := make([]any, len(t.keys))
	parts := make([]string, len(t.keys))
	for i, k := range t.keys {
		vals[i] = row[slices.Index(cols, k)]
		parts[i] = fmt.Sprint(vals[i])
	}
	return vals, strings.Join(parts, ", ")
}

// copyTable merges one table of src into the destination, row by row in
// key order. Each row is redacted, then checked (see checkRow), before it
// is compared or copied.
func copyTable(ctx context.Context, tx *sql.Tx, src *DB, t mergeTable, cols []string, ts *TableStats, st *MergeStats) error {
	list := strings.Join(cols, ", ")
	insert := `INSERT INTO ` + t.name + ` (` + list + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	lookup := `SELECT ` + list + ` FROM ` + t.name + ` WHERE ` + strings.Join(t.keys, " = ? AND ") + ` = ?`
	return eachSourceRow(ctx, src, t, cols, func(srcRow []any) error {
		redacted := redactRow(t.name, cols, srcRow)
		keyVals, id := rowKey(t, cols, srcRow)
		if err := checkRow(src.path, t, cols, id, srcRow); err != nil {
			return err
		}
		dstRow, found, err := readRow(ctx, tx, lookup, len(cols), keyVals)
		if err != nil {
			return fmt.Errorf("merge %s: %s %s: %w", src.path, t.name, id, err)
		}
		switch {
		case !found:
			if _, err := tx.ExecContext(ctx, insert, srcRow...); err != nil {
				return refusedInsert(src.path, t, id, err)
			}
			ts.Added++
			st.Redacted += redacted
		case t.name == "runs":
			changed, err := combineRun(ctx, tx, src.path, cols, id, dstRow, srcRow)
			if err != nil {
				return err
			}
			if changed {
				st.RunsCombined++
			}
			ts.Present++
		default:
			if c := differing(cols, dstRow, srcRow, nil); len(c) > 0 {
				return conflict(src.path, t.name, strings.Join(t.keys, ", "), id, cols, c, dstRow, srcRow)
			}
			ts.Present++
		}
		return nil
	})
}

func scanValues(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, v := range vals {
		vals[i] = normalize(v)
	}
	return vals, nil
}

// readRow returns the destination's row that lookup (a SELECT of n columns
// by key) finds for the key values, if any.
func readRow(ctx context.Context, tx *sql.Tx, lookup string, n int, key []any) ([]any, bool, error) {
	rows, err := tx.QueryContext(ctx, lookup, key...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	vals, err := scanValues(rows, n)
	if err != nil {
		return nil, false, err
	}
	return vals, true, rows.Err()
}

// runCombined names the run columns that shards of one run may disagree on.
var runCombined = map[string]bool{"status": true, "started_at": true, "finished_at": true}

// statusRank orders run statuses from best to worst.
var statusRank = map[string]int{wfb.RunComplete: 0, wfb.RunRunning: 1, wfb.RunAborted: 2, wfb.RunInterrupted: 3}

// combineRun merges two copies of one run (two shards of it) and writes the
// combination when it differs from the destination's row.
func combineRun(ctx context.Context, tx *sql.Tx, srcPath string, cols []string, id string, dstRow, srcRow []any) (bool, error) {
	if c := differing(cols, dstRow, srcRow, runCombined); len(c) > 0 {
		return false, conflict(srcPath, "runs", "run_id", id, cols, c, dstRow, srcRow)
	}
	at := func(row []any, col string) any {
		for i, c := range cols {
			if c == col {
				return row[i]
			}
		}
		return nil
	}
	dStatus, _ := at(dstRow, "status").(string)
	sStatus, _ := at(srcRow, "status").(string)
	status := dStatus
	if statusRank[sStatus] > statusRank[dStatus] {
		status = sStatus
	}
	dStart, _ := at(dstRow, "started_at").(string)
	sStart, _ := at(srcRow, "started_at").(string)
	// Times are fixed-width UTC text: text order is time order.
	start := min(dStart, sStart)
	var finish any
	dFin, dOK := at(dstRow, "finished_at").(string)
	sFin, sOK := at(srcRow, "finished_at").(string)
	if dOK && sOK {
		finish = max(dFin, sFin)
	}
	if status == dStatus && start == dStart && equalValue(finish, at(dstRow, "finished_at")) {
		return false, nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, started_at = ?, finished_at = ? WHERE run_id = ?`,
		status, start, finish, id)
	if err != nil {
		return false, fmt.Errorf("merge %s: combine run %s: %w", srcPath, id, err)
	}
	return true, nil
}

// differing returns the columns (other than those in skip) whose values
// differ.
func differing(cols []string, a, b []any, skip map[string]bool) []string {
	var out []string
	for i, c := range cols {
		if !skip[c] && !equalValue(a[i], b[i]) {
			out = append(out, c)
		}
	}
	return out
}

func conflict(src, table, key, id string, cols, diff []string, dstRow, srcRow []any) error {
	i := 0
	for i < len(cols) && cols[i] != diff[0] {
		i++
	}
	return &ConflictError{Source: src, Table: table, Key: key, ID: id, Columns: diff, Dst: dstRow[i], Src: srcRow[i]}
}

func equalValue(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	if _, ok := b.([]byte); ok {
		return false
	}
	return a == b
}

// showValue prints a value for a conflict message, bounded.
func showValue(v any) string {
	const limit = 60
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return fmt.Sprintf("<%d bytes>", len(x))
	case string:
		if len(x) > limit {
			cut := limit
			for cut > 0 && !utf8.RuneStart(x[cut]) {
				cut--
			}
			x = x[:cut] + "…"
		}
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}
