package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/wfbench/wfb"
)

// A finished run's attempts are also kept as the reports read them
// (migration 0016): run_rows names the query a run's copy is the output
// of, and run_row_chunks holds that output, chunkRows rows a blob. A
// diff, a trend or the viewer decodes the blobs instead of stepping
// through every results row column by column. The copy is made with the
// run's kept figures (countRunTx: the run's end, a merge), again by a
// rescore in its transaction (CopyRunRowsTx), and read only while it
// still describes the run (EachRunRow).

// LatestScoreJoin joins each results row r with its latest score s: the
// latest scored_at, then the greatest score_id (as the latest_scores_v
// view orders them). The correlated lookup uses the (attempt_id,
// scored_at) index, where joining the window-function view would rank
// every score on every chunk.
const LatestScoreJoin = ` LEFT JOIN scores s ON s.score_id = (SELECT score_id FROM scores
	WHERE attempt_id = r.attempt_id ORDER BY scored_at DESC, score_id DESC LIMIT 1)`

// RunRowsColumns is the select list the reports' loader (report.LoadRows)
// sends for one run of a file at this schema, metered usage, scores
// joined: what a run's copy holds, column for column. The report package's
// tests hold the two equal; were they to differ, no copy would ever be read
// (EachRunRow compares them), which costs time and never a wrong figure.
const RunRowsColumns = `SELECT r.task, r.arm, r.rep, r.attempt, r.agent_version, r.ok, ` +
	`COALESCE(r.usage_verdict = 'disagree', 0), CASE WHEN r.usage_verdict = 'unwitnessed' THEN 1
	WHEN r.usage_source = 'reported' AND r.usage_verdict IS NULL AND r.run_id IN (
		SELECT run_id FROM runs WHERE CASE WHEN json_valid(config) THEN json_extract(config, '$.meter') END = 'off') THEN 2
	ELSE 0 END, r.error_kind, ` +
	`CASE WHEN r.usage_source = 'metered' THEN r."metered_input_tokens" ELSE r."input_tokens" END, ` +
	`CASE WHEN r.usage_source = 'metered' THEN r."metered_output_tokens" ELSE r."output_tokens" END, ` +
	`CASE WHEN r.usage_source = 'metered' THEN r."metered_cache_read_input_tokens" ELSE r."cache_read_input_tokens" END, ` +
	`CASE WHEN r.usage_source = 'metered' THEN r."metered_cache_creation_input_tokens" ELSE r."cache_creation_input_tokens" END, ` +
	`CASE WHEN r.usage_source = 'metered' AND r.metered_cost_usd IS NOT NULL THEN r.metered_cost_usd ELSE r.cost_usd END, ` +
	`r."num_turns", r."duration_ms", s."precision", s."recall", s."weighted_f1", s."verdict_correct", s.labels_digest`

// RunRowsSQL is the query a run's copy is the output of: RunRowsColumns
// over run ?1's results rows in rowid order, each with its latest score.
const RunRowsSQL = RunRowsColumns + ` FROM results r` + LatestScoreJoin + ` WHERE r.run_id = ?1 ORDER BY r.rowid`

// runRowsVersion is the schema version that adds the copies.
const runRowsVersion = 16

// chunkRows is how many rows one blob of a copy holds: a reader holds one
// chunk at a time, however large the run.
const chunkRows = 4096

// copyRunRowsTx makes run id's copy agree with its kept figures: it drops
// the copy, and makes it anew when the run has kept figures (run_stats:
// the run is finished).
func copyRunRowsTx(ctx context.Context, tx *sql.Tx, id string) error {
	if err := dropRunRowsTx(ctx, tx, id); err != nil {
		return err
	}
	var kept bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM run_stats WHERE run_id = ?)`, id).Scan(&kept); err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	if !kept {
		return nil
	}
	var attempts, first, last, scores int64
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(min(rowid), 0), COALESCE(max(rowid), 0),
		(SELECT COALESCE(max(rowid), 0) FROM scores) FROM results WHERE run_id = ?`, id).Scan(&attempts, &first, &last, &scores)
	if err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_rows (run_id, query, attempts, first_rowid, last_rowid, scores_rowid)
		VALUES (?, ?, ?, ?, ?, ?)`, id, RunRowsColumns, attempts, first, last, scores); err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, RunRowsSQL, id)
	if err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	enc := newChunkEncoder(len(cols))
	var chunks, n int64
	flush := func() error {
		if enc.rows == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO run_row_chunks (run_id, chunk, rows, data) VALUES (?, ?, ?, ?)`,
			id, chunks, enc.rows, enc.buf)
		chunks++
		enc.reset()
		return err
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("copy the rows of run %s: %w", id, err)
		}
		if err := enc.add(vals); err != nil {
			return fmt.Errorf("copy the rows of run %s: %w", id, err)
		}
		n++
		if enc.rows == chunkRows {
			if err := flush(); err != nil {
				return fmt.Errorf("copy the rows of run %s: %w", id, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("copy the rows of run %s: %w", id, err)
	}
	if n != attempts {
		return fmt.Errorf("copy the rows of run %s: the query read %d rows of its %d attempts", id, n, attempts)
	}
	return nil
}

// dropRunRowsTx drops run id's copy.
func dropRunRowsTx(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{`DELETE FROM run_row_chunks WHERE run_id = ?`, `DELETE FROM run_rows WHERE run_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("drop the copied rows of run %s: %w", id, err)
		}
	}
	return nil
}

// CopyRunRowsTx makes run id's copy anew inside tx, when the run is
// finished: a rescore calls it in the transaction that adds its scores,
// so that the copy holds each attempt's new latest score.
func (d *DB) CopyRunRowsTx(ctx context.Context, tx *sql.Tx, id string) error {
	return copyRunRowsTx(ctx, tx, id)
}

// copyAllRunRowsTx copies every finished run's rows: the upgrade that
// adds the copies (migration 0016) makes those of the runs the file holds.
func copyAllRunRowsTx(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT run_id FROM run_stats ORDER BY run_id`)
	if err != nil {
		return fmt.Errorf("copy the finished runs' rows: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("copy the finished runs' rows: %w", err)
	}
	for _, id := range ids {
		if err := copyRunRowsTx(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// freshRunRowsSQL is true when run ?1's copy is the output of query ?2
// and still describes the run: the run finished and its kept figures
// current (FreshRunStatsSQL's rule), the copy made after the run's last
// results row, every row in its chunks, and no score of the run's
// attempts recorded since it was made. The scores drive that last look
// (CROSS JOIN fixes the loop order): those recorded since are few or none,
// where walking the run's attempts would probe the scores for each.
const freshRunRowsSQL = `SELECT 1 FROM run_rows c
	JOIN run_stats s ON s.run_id = c.run_id JOIN runs u ON u.run_id = c.run_id
	WHERE c.run_id = ?1 AND c.query = ?2
	  AND u.status IN ('` + wfb.RunComplete + `', '` + wfb.RunAborted + `')
	  AND s.results_rowid = COALESCE((SELECT max(rowid) FROM results WHERE run_id = ?1), 0)
	  AND c.last_rowid = s.results_rowid
	  AND c.attempts = (SELECT COALESCE(SUM(rows), 0) FROM run_row_chunks WHERE run_id = ?1)
	  AND NOT EXISTS (SELECT 1 FROM scores x CROSS JOIN results r ON r.attempt_id = x.attempt_id
	                  WHERE x.rowid > c.scores_rowid AND r.run_id = ?1)`

// RunRowsCopy is what a reader learns of a run's current copy.
type RunRowsCopy struct {
	Attempts              int64
	FirstRowid, LastRowid int64 // the run's first and last results rowids
}

// RunRows reports whether run id has a current copy of query (a select
// list as RunRowsColumns spells it) holding at least one row, and what it
// covers: a reader reading several runs learns from it in which order
// their rows were written.
func (d *DB) RunRows(ctx context.Context, id, query string) (RunRowsCopy, bool, error) {
	var c RunRowsCopy
	err := d.db.QueryRowContext(ctx, `SELECT attempts, first_rowid, last_rowid FROM run_rows WHERE run_id = ?1 AND attempts > 0
		AND EXISTS (`+freshRunRowsSQL+`)`, id, query).Scan(&c.Attempts, &c.FirstRowid, &c.LastRowid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return c, false, nil
	case err != nil && !d.hasRunRows(ctx):
		return c, false, nil // a file from before the copies, read as it is
	case err != nil:
		return c, false, fmt.Errorf("look for the copied rows of run %s: %w", id, d.classify(err))
	}
	return c, true, nil
}

// hasRunRows reports whether the file has the copies' tables.
func (d *DB) hasRunRows(ctx context.Context) bool {
	var ok bool
	err := d.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'run_rows')`).Scan(&ok)
	return err == nil && ok
}

// EachRunRow calls fn once per row of run id's copy of query (a select
// list as RunRowsColumns spells it), in the run's rowid order, as the copy
// is decoded a chunk at a time: the rows RunRowsSQL would return. It
// reports false, calling fn for nothing, when the run has no current copy
// of that query holding a row (see freshRunRowsSQL): the check and the
// read are one statement, so a writer changing the run in between cannot
// leave a copy half read. Values scan as the engine's would (see Scanner),
// and without boxing into a ValueDest. A chunk that does not decode is an
// error naming the run and the chunk, never a row skipped.
func (d *DB) EachRunRow(ctx context.Context, id, query string, fn func(Scanner) error) (bool, error) {
	var row copiedRow
	var next int64
	err := d.Each(ctx, `SELECT chunk, rows, data FROM run_row_chunks WHERE run_id = ?1
		AND EXISTS (`+freshRunRowsSQL+`) ORDER BY chunk`, []any{id, query},
		func(s Scanner) error {
			var chunk, rows int64
			var data []byte
			if err := s.Scan(&chunk, &rows, &data); err != nil {
				return err
			}
			dec, err := newChunkDecoder(data, &row)
			if err == nil && chunk != next {
				err = fmt.Errorf("chunk %d where %d was due", chunk, next)
			}
			next++
			for i := int64(0); i < rows && err == nil; i++ {
				if err = dec.next(); err == nil {
					if err := fn(&row); err != nil {
						return err
					}
				}
			}
			if err == nil && !dec.done() {
				err = fmt.Errorf("%d bytes after its %d rows", dec.left(), rows)
			}
			if err != nil {
				return fmt.Errorf("copied rows of run %s, chunk %d: %w: %w", id, chunk, err, ErrCorrupt)
			}
			return nil
		})
	switch {
	case err != nil && next == 0 && !d.hasRunRows(ctx):
		return false, nil // a file from before the copies, read as it is
	case err != nil:
		return next > 0, fmt.Errorf("read the copied rows of run %s: %w", id, err)
	}
	return next > 0, nil
}

// ValueDest takes one value of a copied row without boxing it into an
// interface: a destination that implements it is handed the value by type.
// What it is handed is what the engine would have returned for the column:
// NULL, an INTEGER, a REAL or TEXT.
type ValueDest interface {
	ScanNull() error
	ScanInt(int64) error
	ScanFloat(float64) error
	ScanText(string) error
}

// The kinds of value a copy holds, one tag byte each.
const (
	tagNull    = 0 // nothing follows
	tagInt     = 1 // a zig-zag varint
	tagFloat   = 2 // 8 bytes, the IEEE 754 bits little-endian
	tagText    = 3 // a uvarint index into the chunk's texts so far
	tagNewText = 4 // a uvarint length and the bytes, added to the chunk's texts
	tagBlob    = 5 // a uvarint length and the bytes
)

// chunkVersion is the first byte of every chunk: the encoding below.
const chunkVersion = 1

// chunkEncoder encodes rows of a fixed number of columns into one chunk:
// a version byte, the column count, then each row's values in order, each
// a tag byte and its payload. A text seen before in the chunk is an index.
type chunkEncoder struct {
	cols  int
	rows  int
	buf   []byte
	texts map[string]uint64
}

func newChunkEncoder(cols int) *chunkEncoder {
	e := &chunkEncoder{cols: cols}
	e.reset()
	return e
}

func (e *chunkEncoder) reset() {
	e.rows = 0
	e.buf = binary.AppendUvarint(append(e.buf[:0], chunkVersion), uint64(e.cols))
	e.texts = map[string]uint64{}
}

func (e *chunkEncoder) add(vals []any) error {
	for i, v := range vals {
		switch x := normalize(v).(type) {
		case nil:
			e.buf = append(e.buf, tagNull)
		case int64:
			e.buf = binary.AppendVarint(append(e.buf, tagInt), x)
		case float64:
			e.buf = binary.LittleEndian.AppendUint64(append(e.buf, tagFloat), math.Float64bits(x))
		case string:
			if j, ok := e.texts[x]; ok {
				e.buf = binary.AppendUvarint(append(e.buf, tagText), j)
				continue
			}
			e.texts[x] = uint64(len(e.texts))
			e.buf = append(binary.AppendUvarint(append(e.buf, tagNewText), uint64(len(x))), x...)
		case []byte:
			e.buf = append(binary.AppendUvarint(append(e.buf, tagBlob), uint64(len(x))), x...)
		default:
			return fmt.Errorf("column %d: a %T value has no encoding", i+1, v)
		}
	}
	e.rows++
	return nil
}

// copiedRow is one decoded row of a copy.
type copiedRow struct {
	vals []copiedValue
}

type copiedValue struct {
	tag  byte
	i    int64
	f    float64
	s    string
	blob []byte
}

// chunkDecoder reads a chunk's rows into a copiedRow, one at a time.
type chunkDecoder struct {
	data  []byte
	off   int
	row   *copiedRow
	texts []string
}

func newChunkDecoder(data []byte, row *copiedRow) (*chunkDecoder, error) {
	if len(data) == 0 || data[0] != chunkVersion {
		return nil, errors.New("not a chunk of version 1")
	}
	cols, n := binary.Uvarint(data[1:])
	if n <= 0 || cols == 0 || cols > 1000 {
		return nil, errors.New("bad column count")
	}
	if cap(row.vals) < int(cols) {
		row.vals = make([]copiedValue, cols)
	}
	row.vals = row.vals[:cols]
	return &chunkDecoder{data: data, off: 1 + n, row: row}, nil
}

func (d *chunkDecoder) done() bool { return d.off == len(d.data) }
func (d *chunkDecoder) left() int  { return len(d.data) - d.off }

// next decodes the next row into d.row.
func (d *chunkDecoder) next() error {
	for i := range d.row.vals {
		if d.off >= len(d.data) {
			return fmt.Errorf("row ends at column %d", i+1)
		}
		v := &d.row.vals[i]
		v.tag = d.data[d.off]
		d.off++
		switch v.tag {
		case tagNull:
		case tagInt:
			x, n := binary.Varint(d.data[d.off:])
			if n <= 0 {
				return fmt.Errorf("column %d: bad integer", i+1)
			}
			v.i, d.off = x, d.off+n
		case tagFloat:
			if d.off+8 > len(d.data) {
				return fmt.Errorf("column %d: short real", i+1)
			}
			v.f, d.off = math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.off:])), d.off+8
		case tagText:
			j, n := binary.Uvarint(d.data[d.off:])
			if n <= 0 || j >= uint64(len(d.texts)) {
				return fmt.Errorf("column %d: bad text index", i+1)
			}
			v.s, d.off = d.texts[j], d.off+n
		case tagNewText, tagBlob:
			l, n := binary.Uvarint(d.data[d.off:])
			if n <= 0 || l > uint64(len(d.data)-d.off-n) {
				return fmt.Errorf("column %d: bad length", i+1)
			}
			b := d.data[d.off+n : d.off+n+int(l)]
			d.off += n + int(l)
			if v.tag == tagBlob {
				v.blob = b
				continue
			}
			v.s, v.tag = string(b), tagText
			d.texts = append(d.texts, v.s)
		default:
			return fmt.Errorf("column %d: unknown tag %d", i+1, v.tag)
		}
	}
	return nil
}

// Scan reads the row into dest as Each's rows would: a ValueDest is handed
// the value by type; a sql.Scanner, *any, *int64, *float64, *string or
// *[]byte gets what the engine's row would give it (a NULL into a plain
// type is an error, never a zero).
func (r *copiedRow) Scan(dest ...any) error {
	if len(dest) != len(r.vals) {
		return fmt.Errorf("scan a copied row: %d destinations for %d columns", len(dest), len(r.vals))
	}
	for i, d := range dest {
		if err := r.vals[i].scanInto(d); err != nil {
			return fmt.Errorf("scan a copied row, column %d: %w", i+1, err)
		}
	}
	return nil
}

func (v *copiedValue) scanInto(dest any) error {
	if vd, ok := dest.(ValueDest); ok {
		switch v.tag {
		case tagNull:
			return vd.ScanNull()
		case tagInt:
			return vd.ScanInt(v.i)
		case tagFloat:
			return vd.ScanFloat(v.f)
		case tagText:
			return vd.ScanText(v.s)
		}
		return fmt.Errorf("a blob for a %T", dest)
	}
	var val any
	switch v.tag {
	case tagInt:
		val = v.i
	case tagFloat:
		val = v.f
	case tagText:
		val = v.s
	case tagBlob:
		val = v.blob
	}
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(val)
	case *any:
		*d = val
		return nil
	}
	if val == nil {
		return fmt.Errorf("NULL into %T", dest)
	}
	switch d := dest.(type) {
	case *int64:
		if x, ok := val.(int64); ok {
			*d = x
			return nil
		}
	case *float64:
		switch x := val.(type) {
		case float64:
			*d = x
			return nil
		case int64:
			*d = float64(x)
			return nil
		}
	case *string:
		if x, ok := val.(string); ok {
			*d = x
			return nil
		}
	case *[]byte:
		switch x := val.(type) {
		case []byte:
			*d = append((*d)[:0], x...)
			return nil
		case string:
			*d = []byte(x)
			return nil
		}
	}
	return fmt.Errorf("a %T value into %T", val, dest)
}
