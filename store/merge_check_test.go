package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// tamper runs statements on a results file behind the store's back, as a
// hand-edited or forged file would have been written: the append-only and
// CHECK rules are switched off first.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The forger puts the guards back after: the schema is wfb's again
	// (a file with its triggers gone is refused at open, ErrTampered), and
	// only merge's row checks stand between these rows and the destination.
	triggers := []string{"results_no_update", "evidence_no_update", "model_usage_no_update", "scores_no_update"}
	defs := make([]string, len(triggers))
	drops := []string{`PRAGMA ignore_check_constraints = 1`}
	for i, name := range triggers {
		if err := conn.QueryRowContext(context.Background(), `SELECT sql FROM sqlite_schema WHERE name = ?`, name).Scan(&defs[i]); err != nil {
			t.Fatal(err)
		}
		drops = append(drops, "DROP TRIGGER "+name)
	}
	for _, q := range append(append(drops, stmts...), defs...) {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMergeRefusesAnInvalidSourceNamingTableIDAndColumn stops `wfb merge`
// from copying what the store would never write: a negative token count, a
// negative cost ("cost total -3.452" in the report), an error kind outside
// the vocabulary. The source is refused naming the table, the row's id and
// the column, and nothing reaches the destination.
func TestMergeRefusesAnInvalidSourceNamingTableIDAndColumn(t *testing.T) {
	ctx := context.Background()
	id := cells()[1].attemptID()
	tests := []struct {
		name   string
		stmt   string
		table  string
		column string
	}{
		{"negative tokens", `UPDATE results SET input_tokens = -5 WHERE attempt_id = '` + id + `'`, "results", "input_tokens"},
		{"negative cost", `UPDATE results SET cost_usd = -3.452 WHERE attempt_id = '` + id + `'`, "results", "cost_usd"},
		{"unknown error kind", `UPDATE results SET ok = 0, error_kind = 'fine-really' WHERE attempt_id = '` + id + `'`, "results", "error_kind"},
		{"negative model usage", `UPDATE model_usage SET output_tokens = -1 WHERE attempt_id = '` + id + `'`, "model_usage", "output_tokens"},
		{"negative score count", `UPDATE scores SET fp = -2 WHERE attempt_id = '` + id + `'`, "scores", "fp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			good, bad := filepath.Join(dir, "good.db"), filepath.Join(dir, "bad.db")
			writeFile(t, good, baseRun("run-g"), []cell{{"t9", "other", 0}})
			writeFile(t, bad, baseRun("run-a"), cells()[:3])
			tamper(t, bad, tc.stmt)
			dst := openDst(t, filepath.Join(dir, "dst.db"))
			_, err := MergeFiles(ctx, dst, []string{good, bad})
			var invalid *InvalidRowError
			if !errors.As(err, &invalid) || !errors.Is(err, ErrInvalidRow) {
				t.Fatalf("error %v, want an *InvalidRowError", err)
			}
			if invalid.Source != bad || invalid.Table != tc.table || !strings.Contains(invalid.ID, id) || invalid.Column != tc.column {
				t.Errorf("refusal names %s %s %s %s, want %s %s %s %s", invalid.Source, invalid.Table, invalid.ID, invalid.Column, bad, tc.table, id, tc.column)
			}
			for _, want := range []string{bad, tc.table, id, tc.column, "nothing was merged"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not name %q", err, want)
				}
			}
			if got := queryOne(t, dst, `SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM results)`); got[0] != int64(0) {
				t.Errorf("rows in the destination after a refused merge: %v", got[0])
			}
			// CheckSource finds the same row before a destination exists.
			src, err := OpenReadOnly(ctx, bad)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if err := src.CheckSource(ctx); !errors.As(err, &invalid) || invalid.Column != tc.column {
				t.Errorf("CheckSource: %v, want the same refusal", err)
			}
		})
	}
}

// TestMergeRedactsWhatItCopies stops a key in a source's free text (an
// error detail, a session id, an evidence tail) from reaching the merged
// file: every text value is passed through Redact as it is copied, the
// count is reported, and a second merge of the same source adds nothing.
func TestMergeRedactsWhatItCopies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeFile(t, src, baseRun("run-a"), cells()[:2])
	const key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	id := cells()[0].attemptID()
	tamper(t, src,
		`UPDATE results SET ok = 0, error_kind = 'provider-error', error_detail = 'upstream said: bad key `+key+`', session_id = '`+key+`' WHERE attempt_id = '`+id+`'`,
		`UPDATE evidence SET stdout_tail = 'ANTHROPIC_API_KEY=`+key+`' WHERE attempt_id = '`+id+`'`,
	)
	dst := openDst(t, filepath.Join(dir, "dst.db"))
	stats, err := MergeFiles(ctx, dst, []string{src})
	if err != nil {
		t.Fatal(err)
	}
	if stats[0].Redacted != 3 {
		t.Errorf("Redacted = %d, want 3 (error_detail, session_id, stdout_tail)", stats[0].Redacted)
	}
	for table, rows := range dump(t, dst.Path()) {
		for _, row := range rows {
			for _, v := range row {
				if s, ok := v.(string); ok && strings.Contains(s, key) {
					t.Errorf("%s holds the key: %q", table, s)
				}
			}
		}
	}
	got := queryOne(t, dst, `SELECT error_detail, session_id FROM results WHERE attempt_id = ?`, id)
	if diff := cmp.Diff([]any{"upstream said: bad key " + Redacted, Redacted}, got); diff != "" {
		t.Errorf("redacted columns (-want +got):\n%s", diff)
	}
	again, err := MergeFiles(ctx, dst, []string{src})
	if err != nil {
		t.Fatalf("second merge: %v", err)
	}
	if again[0].Results.Added != 0 || again[0].Evidence.Added != 0 {
		t.Errorf("second merge added %+v", again[0])
	}
}

// TestMergeRefusesASecondRowForOneCellAttempt stops a merge from adding
// attempt 1 of a cell the destination already holds under another attempt
// id (two files that each ran the same shard): the duplicate the run lock
// exists to prevent, refused as an invalid row naming the cell's columns.
func TestMergeRefusesASecondRowForOneCellAttempt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	writeFile(t, a, baseRun("run-a"), cells()[:1])
	d, err := Open(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	c := cells()[0]
	if err := d.CreateRun(ctx, baseRun("run-a")); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertResult(ctx, &Result{RunID: "run-a", AttemptID: "att-again", Task: c.task, Arm: c.arm, Rep: c.rep, Attempt: 1,
		StartedAt: t0, OK: true, ProcessState: wfb.StateExited}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	dst := openDst(t, filepath.Join(dir, "dst.db"))
	_, err = MergeFiles(ctx, dst, []string{a, b})
	var invalid *InvalidRowError
	if !errors.As(err, &invalid) || invalid.Table != "results" || invalid.ID != "att-again" || invalid.Column != "run_id, task, arm, rep, attempt" {
		t.Fatalf("error %v, want an *InvalidRowError for results att-again naming the cell's columns", err)
	}
	if got := queryOne(t, dst, `SELECT count(*) FROM results`); got[0] != int64(0) {
		t.Errorf("rows in the destination after a refused merge: %v", got[0])
	}
}
