package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestACellAttemptIsRecordedOnce stops two processes that both think they
// hold a run (the run lock bypassed through a second path to the file)
// from writing one attempt of a cell twice under two attempt ids: the
// schema refuses a second (run_id, task, arm, rep, attempt), through the
// store and through raw SQL alike.
func TestACellAttemptIsRecordedOnce(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	cellAttempt := func(id string, rep, attempt int) *Result {
		r := okResult(id)
		r.Rep, r.Attempt = rep, attempt
		return r
	}
	if err := d.InsertResult(ctx, cellAttempt("att-1", 0, 1)); err != nil {
		t.Fatal(err)
	}
	err := d.InsertResult(ctx, cellAttempt("att-2", 0, 1))
	if !errors.Is(err, ErrDuplicateAttempt) || !strings.Contains(err.Error(), "attempt 1 of t1/a/0") {
		t.Errorf("the same cell attempt again: %v, want ErrDuplicateAttempt naming it", err)
	}
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok)
			VALUES ('run-1', 'raw', 't1', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("raw SQL duplicate: %v, want a UNIQUE failure", err)
	}
	// The next attempt of the cell, and the same attempt of another rep,
	// are new rows.
	next := cellAttempt("att-3", 0, 2)
	next.RetryOf = "att-1"
	other := cellAttempt("att-4", 1, 1)
	for _, r := range []*Result{next, other} {
		if err := d.InsertResult(ctx, r); err != nil {
			t.Errorf("%s: %v", r.AttemptID, err)
		}
	}
	if got := queryOne(t, d, `SELECT count(*) FROM results`); got[0] != int64(3) {
		t.Errorf("rows: %v, want 3", got[0])
	}
}

// TestNegativeCountsAndCostsAreRefusedByTheSchema stops a writer that
// bypasses the store (a merge of a tampered file, raw SQL) from recording a
// negative token count, duration or cost, or an infinite cost: the schema
// itself refuses them, naming the column, as the store's own check does.
func TestNegativeCountsAndCostsAreRefusedByTheSchema(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for i, col := range []string{"duration_ms", "input_tokens", "output_tokens", "cache_read_input_tokens",
		"cache_creation_input_tokens", "num_turns", "findings_count", "cost_usd", "cost_usd"} {
		value := "-1"
		if i == 8 {
			value = "9e999" // +Inf
		}
		err := d.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(fmt.Sprintf(`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, %s)
				VALUES ('run-1', 'raw-%d', 't1', 'a', %d, 1, '2026-01-01T00:00:00.000Z', 1, %s)`, col, i, i, value))
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "results."+col) {
			t.Errorf("raw %s = %s: %v, want a refusal naming results.%s", col, value, err, col)
		}
	}
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('run-2', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'x');
			INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok) VALUES ('run-2', 'att-x', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1);
			INSERT INTO model_usage (attempt_id, model, cost_usd) VALUES ('att-x', 'm', 9e999)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "model_usage.cost_usd") {
		t.Errorf("raw infinite model_usage cost: %v, want a refusal naming model_usage.cost_usd", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Result)
	}{
		{"input_tokens", func(r *Result) { r.InputTokens = ptr(int64(-5)) }},
		{"cost_usd", func(r *Result) { r.CostUSD = ptr(-3.452) }},
		{"duration_ms", func(r *Result) { r.DurationMS = ptr(int64(-1)) }},
	} {
		r := okResult("att-" + tc.name)
		tc.mutate(r)
		if err := d.InsertResult(ctx, r); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("InsertResult with a negative %s: %v, want a refusal naming it", tc.name, err)
		}
	}
	if got := queryOne(t, d, `SELECT count(*) FROM results`); got[0] != int64(0) {
		t.Errorf("rows written: %v, want none", got[0])
	}
}

// fileAtVersion creates a results file under t.TempDir() migrated to
// version only, as an older wfb left it, and returns it open for raw SQL.
func fileAtVersion(t *testing.T, version int) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:version] {
		text, err := m.sql()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(text); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return path, raw
}

// TestAFileHoldingADuplicatedAttemptIsRefusedUnchanged stops the upgrade
// that adds the one-row-per-cell-attempt rule from failing with a bare
// constraint error, or half-applying, on a file the old lock bug already
// wrote a duplicate into: the open is refused, naming the rule, and no
// migration is applied (all pending ones run in one transaction).
func TestAFileHoldingADuplicatedAttemptIsRefusedUnchanged(t *testing.T) {
	ctx := context.Background()
	path, raw := fileAtVersion(t, 3)
	for _, q := range []string{
		`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('run-old', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'old')`,
		`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok) VALUES ('run-old', 'att-1', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1)`,
		`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok) VALUES ('run-old', 'att-2', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	d, err := Open(ctx, path)
	if err == nil {
		d.Close()
		t.Fatal("opened a file holding one cell attempt twice")
	}
	for _, want := range []string{path, "UNIQUE", "results.attempt", "not migrated"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	raw, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var version, rows, tables int
	if err := raw.QueryRow(`SELECT (SELECT max(version) FROM schema_migrations), (SELECT count(*) FROM results),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table')`).Scan(&version, &rows, &tables); err != nil {
		t.Fatal(err)
	}
	if version != 3 || rows != 2 || tables != 7 {
		t.Errorf("after the refusal: version %d, %d results, %d tables; want 3, 2 and 7 as before", version, rows, tables)
	}
}
