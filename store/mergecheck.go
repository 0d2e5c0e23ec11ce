package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrInvalidRow says a merge source holds a row the store would never have
// written. Nothing of the merge was written.
var ErrInvalidRow = errors.New("invalid row")

// InvalidRowError names the source row a merge refused and why. It wraps
// ErrInvalidRow.
type InvalidRowError struct {
	Source  string // source file
	Table   string
	Key     string // the key column(s), as in ConflictError
	ID      string // the row's key values
	Column  string // the offending column(s), comma-separated; "" when the schema refused the row as a whole
	Problem string // what is wrong with it
}

func (e *InvalidRowError) Error() string {
	key := e.Key + "=" + e.ID
	if strings.Contains(e.Key, ",") {
		key = "(" + e.Key + ")=(" + e.ID + ")"
	}
	what := e.Problem
	switch {
	case strings.Contains(e.Column, ","):
		what = "columns " + e.Column + " " + e.Problem
	case e.Column != "":
		what = "column " + e.Column + " " + e.Problem
	}
	return fmt.Sprintf("merge %s: %s %s: %s; nothing was merged", e.Source, e.Table, key, what)
}

func (e *InvalidRowError) Unwrap() error { return ErrInvalidRow }

// redactedBlobs names the BLOB columns that hold text the store redacts
// before writing it; every other BLOB (a compressed body, say) is kept as
// it is, since rewriting its bytes would corrupt it.
var redactedBlobs = map[string]bool{"artifacts.content": true}

// redactRow passes every text value of a row of table through Redact (a
// JSON document through RedactJSON, so that it stays one), in place, and
// says how many it changed.
func redactRow(table string, cols []string, row []any) int {
	n := 0
	for i, v := range row {
		switch x := v.(type) {
		case string:
			if r := redactText(x); r != x {
				row[i] = r
				n++
			}
		case []byte:
			if redactedBlobs[table+"."+cols[i]] {
				if r := redactText(string(x)); r != string(x) {
					row[i] = []byte(r)
					n++
				}
			}
		}
	}
	return n
}

// redactText is s redacted: by RedactJSON when s is a JSON object or
// array, else by Redact.
func redactText(s string) string {
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && (t[0] == '{' || t[0] == '[') {
		if r, ok := wfb.RedactJSON(s); ok {
			return r
		}
	}
	return Redact(s)
}

// nonNegative says whether a column holds a count, a duration, a size or a
// cost — a measurement that is never below zero — by the names the schema
// gives them: *_tokens, *_ms, *_usd, *_bytes, *_size, and the counts named
// below. exit_code is not one (a signal's death is negative).
func nonNegative(col string) bool {
	switch col {
	case "num_turns", "findings_count", "api_retries", "permission_denials", "tool_calls", "calls", "tp", "fp", "fn", "bytes":
		return true
	}
	return slices.ContainsFunc([]string{"_tokens", "_ms", "_usd", "_bytes", "_size"}, func(s string) bool {
		return strings.HasSuffix(col, s)
	})
}

// checkRow holds a source row to the rules InsertResult and its siblings
// write by, which a tampered or hand-made file may break: no negative
// measurement, no infinite number, and an error kind from the vocabulary.
// The destination's schema refuses the rest (see refusedInsert).
func checkRow(source string, t mergeTable, cols []string, id string, row []any) error {
	bad := func(col, problem string) error {
		return &InvalidRowError{Source: source, Table: t.name, Key: strings.Join(t.keys, ", "), ID: id, Column: col, Problem: problem}
	}
	for i, col := range cols {
		switch v := row[i].(type) {
		case int64:
			if v < 0 && nonNegative(col) {
				return bad(col, fmt.Sprintf("is %d, but a count, duration, size or cost is never negative", v))
			}
			if v > wfb.MaxCount && nonNegative(col) {
				return bad(col, fmt.Sprintf("is %d, past wfb's bound on a count, duration or size (%s)", v, wfb.MaxCountText))
			}
		case float64:
			switch {
			case math.IsInf(v, 0) || math.IsNaN(v):
				return bad(col, fmt.Sprintf("is %v, not a finite number", v))
			case v < 0 && nonNegative(col):
				return bad(col, fmt.Sprintf("is %v, but a count, duration, size or cost is never negative", v))
			}
		case string:
			if t.name == "results" && col == "error_kind" && !slices.Contains(wfb.ErrorKinds, v) {
				return bad(col, fmt.Sprintf("is %q, not one of %s", v, strings.Join(wfb.ErrorKinds, ", ")))
			}
		}
	}
	return nil
}

// refusedInsert turns the destination's refusal of a row (a CHECK, a
// trigger, one attempt of a cell recorded twice) into an *InvalidRowError
// in SQLite's words.
func refusedInsert(source string, t mergeTable, id string, err error) error {
	if sqliteCode(err) != sqlite3.SQLITE_CONSTRAINT {
		return fmt.Errorf("merge %s: copy %s %s: %w", source, t.name, id, err)
	}
	e := &InvalidRowError{Source: source, Table: t.name, Key: strings.Join(t.keys, ", "), ID: id,
		Problem: "is refused by the destination's schema (SQLite: " + err.Error() + ")"}
	if t.name == "results" && sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		e.Column = "run_id, task, arm, rep, attempt"
		e.Problem = "name an attempt of a cell the destination already holds under another attempt id"
	}
	return e
}

// CheckSource reads every row a merge would copy from d (opened read-only)
// and holds each to the rules a merge does (see MergeFiles), returning the
// first *InvalidRowError. `wfb merge` runs it on every source before it
// creates or opens the destination, so that a bad source leaves nothing
// behind, not even an empty destination file.
func (d *DB) CheckSource(ctx context.Context) error {
	for _, t := range mergeTables {
		cols, err := tableColumns(ctx, d.db, t.name)
		if err != nil {
			return fmt.Errorf("merge %s: %w", d.path, err)
		}
		err = eachSourceRow(ctx, d, t, cols, func(row []any) error {
			_, id := rowKey(t, cols, row)
			return checkRow(d.path, t, cols, id, row)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
