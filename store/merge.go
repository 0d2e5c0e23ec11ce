package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
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
	Table   string   // runs, results, evidence, artifacts or scores
	Key     string   // the id column: run_id, attempt_id or score_id
	ID      string   // the id both files hold
	Columns []string // every column that differs, in schema order
	Dst     any      // the destination's value of Columns[0]
	Src     any      // the source's value of Columns[0]
}

func (e *ConflictError) Error() string {
	more := ""
	if len(e.Columns) > 1 {
		more = fmt.Sprintf(" (also differing: %s)", strings.Join(e.Columns[1:], ", "))
	}
	return fmt.Sprintf("merge %s: %s %s=%s is already in the destination with different content: column %s is %s there but %s in the source%s; nothing was merged",
		e.Source, e.Table, e.Key, e.ID, e.Columns[0], showValue(e.Dst), showValue(e.Src), more)
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
	// RunsCombined counts runs already in the destination (another shard of
	// the same run) whose status or times changed by combining; they are
	// also counted in Runs.Present.
	RunsCombined int
}

// mergeTables lists what a merge copies, parents before children so that
// foreign keys hold at every insert.
var mergeTables = []struct{ name, key string }{
	{"runs", "run_id"},
	{"results", "attempt_id"},
	{"evidence", "attempt_id"},
	{"artifacts", "attempt_id"},
	{"scores", "score_id"},
}

// Merge copies the runs, results, evidence, artifacts and scores of the
// results file at srcPath into dst, in one transaction. See MergeFiles.
func Merge(ctx context.Context, dst *DB, srcPath string) (MergeStats, error) {
	stats, err := MergeFiles(ctx, dst, []string{srcPath})
	if err != nil {
		return MergeStats{}, err
	}
	return stats[0], nil
}

// MergeFiles copies every source into dst, all in one transaction: either
// every source is merged or (on any error) nothing is.
//
// Rows are matched by id (run_id, attempt_id, score_id). A row whose id is
// not in dst is copied as it is (its text was redacted when first written).
// A row already in dst with the same content is left alone, so merging a
// file twice adds nothing. A row already in dst with different content is a
// *ConflictError naming the table, the id and the columns.
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
// with ErrSchemaTooOld (open it once with a writing command to upgrade it),
// and a source that is the destination file itself is refused.
func MergeFiles(ctx context.Context, dst *DB, srcPaths []string) ([]MergeStats, error) {
	if dst.readOnly {
		return nil, fmt.Errorf("merge into %s: %w", dst.path, ErrReadOnly)
	}
	dstInfo, err := os.Stat(dst.path)
	if err != nil {
		return nil, fmt.Errorf("merge into %s: %w", dst.path, err)
	}
	var srcs []*DB
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
	stats := make([]MergeStats, len(srcs))
	err = dst.Tx(ctx, func(tx *sql.Tx) error {
		for i, src := range srcs {
			stats[i].Source = src.path
			if err := mergeOne(ctx, tx, src, &stats[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}

func mergeOne(ctx context.Context, tx *sql.Tx, src *DB, st *MergeStats) error {
	counts := map[string]*TableStats{
		"runs": &st.Runs, "results": &st.Results, "evidence": &st.Evidence,
		"artifacts": &st.Artifacts, "scores": &st.Scores,
	}
	for _, t := range mergeTables {
		cols, err := tableColumns(ctx, tx, t.name)
		if err != nil {
			return fmt.Errorf("merge %s: %w", src.path, err)
		}
		if err := mergeTable(ctx, tx, src, t.name, t.key, cols, counts[t.name], st); err != nil {
			return err
		}
	}
	return nil
}

// tableColumns lists a table's columns in schema order. Source and
// destination have the same schema version, so they have the same columns.
func tableColumns(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
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

func mergeTable(ctx context.Context, tx *sql.Tx, src *DB, table, key string, cols []string, ts *TableStats, st *MergeStats) error {
	list := strings.Join(cols, ", ")
	keyAt := -1
	for i, c := range cols {
		if c == key {
			keyAt = i
		}
	}
	rows, err := src.db.QueryContext(ctx, `SELECT `+list+` FROM `+table+` ORDER BY `+key)
	if err != nil {
		return fmt.Errorf("merge %s: read %s: %w", src.path, table, err)
	}
	defer rows.Close()
	insert := `INSERT INTO ` + table + ` (` + list + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	for rows.Next() {
		srcRow, err := scanValues(rows, len(cols))
		if err != nil {
			return fmt.Errorf("merge %s: read %s: %w", src.path, table, err)
		}
		id, _ := srcRow[keyAt].(string)
		dstRow, found, err := readRow(ctx, tx, table, key, list, len(cols), id)
		if err != nil {
			return fmt.Errorf("merge %s: %s %s: %w", src.path, table, id, err)
		}
		if !found {
			if _, err := tx.ExecContext(ctx, insert, srcRow...); err != nil {
				return fmt.Errorf("merge %s: copy %s %s: %w", src.path, table, id, err)
			}
			ts.Added++
			continue
		}
		if table == "runs" {
			changed, err := combineRun(ctx, tx, src.path, cols, id, dstRow, srcRow)
			if err != nil {
				return err
			}
			if changed {
				st.RunsCombined++
			}
			ts.Present++
			continue
		}
		if c := differing(cols, dstRow, srcRow, nil); len(c) > 0 {
			return conflict(src.path, table, key, id, cols, c, dstRow, srcRow)
		}
		ts.Present++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("merge %s: read %s: %w", src.path, table, err)
	}
	return nil
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

func readRow(ctx context.Context, tx *sql.Tx, table, key, list string, n int, id string) ([]any, bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+list+` FROM `+table+` WHERE `+key+` = ?`, id)
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
var statusRank = map[string]int{RunComplete: 0, RunRunning: 1, RunAborted: 2, RunInterrupted: 3}

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
