package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

var t0 = time.Date(2026, 11, 30, 2, 40, 31, 123_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

// newDB opens a fresh results file under t.TempDir() with one run recorded.
func newDB(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wfb.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.CreateRun(context.Background(), Run{ID: "run-1", Label: "baseline", Kind: "run", StartedAt: t0, Status: wfb.RunRunning, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	return d, path
}

// okResult is an ok attempt of run-1 with the given id, in a cell of its
// own: its rep is derived from the id, since one attempt of a cell is
// recorded once (see TestACellAttemptIsRecordedOnce).
func okResult(id string) *Result {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &Result{
		RunID: "run-1", AttemptID: id, Task: "t1", Arm: "a", Rep: int(h.Sum32() % 1_000_000), Attempt: 1,
		Agent: "stand-in", Model: "m", Sandbox: "host-unsafe", StartedAt: t0,
		OK: true, ProcessState: wfb.StateExited,
	}
}

// queryOne runs a single-row query and returns its values.
func queryOne(t *testing.T, d *DB, q string, args ...any) []any {
	t.Helper()
	_, rows, err := d.Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(rows) != 1 {
		t.Fatalf("%s: got %d rows, want 1", q, len(rows))
	}
	return rows[0]
}

// TestNullStaysNullAndZeroStaysZero stops the bug where an unmeasured value
// was stored as 0 (or a measured 0 as NULL), making "not measured"
// indistinguishable from "measured zero".
func TestNullStaysNullAndZeroStaysZero(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)

	unmeasured := &Result{
		RunID: "run-1", AttemptID: "att-nil", Task: "t1", Arm: "a", Rep: 0, Attempt: 1,
		StartedAt: t0, OK: false, ErrorKind: wfb.KindSessionError, ErrorDetail: "usage field input_tokens missing",
		ProcessState: wfb.StateExited,
	}
	zero := &Result{
		RunID: "run-1", AttemptID: "att-zero", Task: "t1", Arm: "a", Rep: 1, Attempt: 2, RetryOf: "att-nil",
		Agent: "stand-in", AgentVersion: "1.0", Model: "m", Sandbox: "host-unsafe",
		StartedAt: t0.Add(time.Second), DurationMS: ptr(int64(0)),
		OK: true, ProcessState: wfb.StateExited, ExitCode: ptr(int64(0)),
		InputTokens: ptr(int64(0)), OutputTokens: ptr(int64(0)),
		CacheReadInputTokens: ptr(int64(0)), CacheCreationInputTokens: ptr(int64(0)),
		CostUSD: ptr(0.0), CostSource: "reported", NumTurns: ptr(int64(0)), SessionID: "s-1",
		Verdict: "approve", FindingsCount: ptr(int64(0)),
		ResultEvent: `{"type":"result"}`, StdoutTail: "out", StderrTail: "err",
	}
	for _, r := range []*Result{unmeasured, zero} {
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	got, err := d.Results(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Result{*unmeasured, *zero}, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	nullable := []string{"retry_of", "agent", "agent_version", "model", "sandbox", "duration_ms",
		"exit_code", "input_tokens", "output_tokens", "cache_read_input_tokens",
		"cache_creation_input_tokens", "cost_usd", "cost_source", "num_turns", "session_id",
		"verdict", "findings_count"}
	for _, col := range nullable {
		t.Run(col, func(t *testing.T) {
			v := queryOne(t, d, `SELECT `+col+` IS NULL FROM results WHERE attempt_id = 'att-nil'`)
			if diff := cmp.Diff([]any{int64(1)}, v); diff != "" {
				t.Errorf("nil %s is not NULL (-want +got):\n%s", col, diff)
			}
			v = queryOne(t, d, `SELECT `+col+` IS NULL FROM results WHERE attempt_id = 'att-zero'`)
			if diff := cmp.Diff([]any{int64(0)}, v); diff != "" {
				t.Errorf("zero %s is NULL (-want +got):\n%s", col, diff)
			}
		})
	}
	v := queryOne(t, d, `SELECT input_tokens, cost_usd, error_kind IS NULL, ok FROM results WHERE attempt_id = 'att-zero'`)
	if diff := cmp.Diff([]any{int64(0), 0.0, int64(1), int64(1)}, v); diff != "" {
		t.Errorf("measured zero (-want +got):\n%s", diff)
	}
	// The unmeasured attempt has no evidence at all: no empty-string row.
	v = queryOne(t, d, `SELECT count(*) FROM evidence WHERE attempt_id = 'att-nil'`)
	if diff := cmp.Diff([]any{int64(0)}, v); diff != "" {
		t.Errorf("evidence rows for an attempt without evidence (-want +got):\n%s", diff)
	}
}

// TestTimesAreStoredAsFixedWidthUTC stops Go's default time formatting (or a
// local zone) leaking into the file, which breaks text ordering and the
// sqlite3 CLI's date functions.
func TestTimesAreStoredAsFixedWidthUTC(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	r := okResult("att-1")
	r.StartedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	v := queryOne(t, d, `SELECT started_at FROM results`)
	if diff := cmp.Diff([]any{"2026-01-02T02:04:05.000Z"}, v); diff != "" {
		t.Errorf("started_at (-want +got):\n%s", diff)
	}
	v = queryOne(t, d, `SELECT started_at FROM runs`)
	if diff := cmp.Diff([]any{"2026-11-30T02:40:31.123Z"}, v); diff != "" {
		t.Errorf("runs.started_at (-want +got):\n%s", diff)
	}
}

// TestANewerFileIsRefusedAndLeftByteIdentical stops an older binary from
// "upgrading" (or switching the journal mode of) a file a newer wfb wrote.
func TestANewerFileIsRefusedAndLeftByteIdentical(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	// A newer wfb: records version 999 and uses the rollback journal, so a
	// careless open that sets WAL would change the header bytes.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`PRAGMA journal_mode=DELETE`,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '0999_future', '2030-01-01T00:00:00.000Z')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	for name, open := range map[string]func(context.Context, string) (*DB, error){
		"Open": Open, "OpenExisting": OpenExisting, "OpenReadOnly": OpenReadOnly,
	} {
		t.Run(name, func(t *testing.T) {
			d, err := open(ctx, path)
			if err == nil {
				d.Close()
				t.Fatal("opened a file with schema version 999")
			}
			if !errors.Is(err, ErrSchemaTooNew) {
				t.Errorf("error %v is not ErrSchemaTooNew", err)
			}
			for _, want := range []string{path, "999", strconv.Itoa(SchemaVersion())} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the refused file was changed")
			}
		})
	}
}

// TestANewerFileWithChangesInItsWALIsRefusedAndLeftByteIdentical stops
// the writer's open, which reads the version on its own connection, from
// changing a newer wfb's file whose writer was killed with changes still
// in its -wal: the last connection to close checkpoints them into the
// file and removes the -wal, so such a file is inspected read-only first.
func TestANewerFileWithChangesInItsWALIsRefusedAndLeftByteIdentical(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	d, err := Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	// The newer wfb, still running: its commit stays in the -wal.
	raw, err := sql.Open("sqlite", live)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA wal_autocheckpoint=0`,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '0999_future', '2030-01-01T00:00:00.000Z')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// What it leaves when it is killed: the file and its -wal, copied.
	path := filepath.Join(dir, "killed.db")
	before := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(live + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" && len(b) == 0 {
			t.Fatal("the newer wfb's change is not in its -wal")
		}
		if err := os.WriteFile(path+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
		before[suffix] = b
	}
	for name, open := range map[string]func(context.Context, string) (*DB, error){"Open": Open, "OpenExisting": OpenExisting} {
		t.Run(name, func(t *testing.T) {
			d, err := open(ctx, path)
			if err == nil {
				d.Close()
				t.Fatal("opened a file with schema version 999")
			}
			if !errors.Is(err, ErrSchemaTooNew) {
				t.Errorf("error %v is not ErrSchemaTooNew", err)
			}
			for suffix, b := range before {
				after, err := os.ReadFile(path + suffix)
				if err != nil || !bytes.Equal(b, after) {
					t.Errorf("the refused file's %q was changed (%v)", "killed.db"+suffix, err)
				}
			}
		})
	}
}

// TestAFileWfbDidNotWriteIsRefused stops wfb from adding its tables to some
// other application's database, or failing with a cryptic driver error on a
// text file.
func TestAFileWfbDidNotWriteIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("this is not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE customers (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	for _, tc := range []struct{ name, path, want string }{
		{"text file", text, "not a SQLite database"},
		{"other sqlite db", other, "not one wfb wrote"},
	} {
		before, _ := os.ReadFile(tc.path)
		for name, open := range map[string]func(context.Context, string) (*DB, error){
			"Open": Open, "OpenExisting": OpenExisting, "OpenReadOnly": OpenReadOnly,
		} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				d, err := open(ctx, tc.path)
				if err == nil {
					d.Close()
					t.Fatal("opened a file wfb did not write")
				}
				if !errors.Is(err, ErrNotResultsFile) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q: want ErrNotResultsFile naming %s and saying %q", err, tc.path, tc.want)
				}
				after, _ := os.ReadFile(tc.path)
				if !bytes.Equal(before, after) {
					t.Error("the refused file was changed")
				}
			})
		}
	}
}

// TestOpenReadOnlyNeverCreatesTheFile stops `wfb sql` with a mistyped path
// from leaving an empty database behind and reporting "no such table".
func TestOpenReadOnlyNeverCreatesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := OpenReadOnly(context.Background(), path)
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v: want one wrapping os.ErrNotExist and naming %s", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s (stat: %v)", path, err)
	}
}

// TestOpenExistingNeverCreatesTheFile stops `wfb rescore --db typo.db`
// from writing scores into a fresh, empty file instead of refusing: a
// missing file is ErrNoSuchFile (and fs.ErrNotExist), named, and not
// created — not even when it vanishes between the check and the open.
func TestOpenExistingNeverCreatesTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := OpenExisting(ctx, path)
	if !errors.Is(err, ErrNoSuchFile) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v: want ErrNoSuchFile wrapping os.ErrNotExist and naming %s", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting created %s (stat: %v)", path, err)
	}
	// Past the check, as if the file were removed in between: the engine
	// itself must refuse to create it.
	if d, err := openWriter(ctx, path, slices.Concat([]string{"mode=rw"}, writerParams)); err == nil {
		d.Close()
		t.Error("a mode=rw writer opened a missing file")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a mode=rw writer created %s (stat: %v)", path, err)
	}
}

// TestOpenExistingWritesAndUpgradesAnExistingFile stops OpenExisting from
// being a read-only open in disguise: an older file is migrated, and a
// recorded run can be added to.
func TestOpenExistingWritesAndUpgradesAnExistingFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateRun(ctx, Run{ID: "run-1", Kind: "run", StartedAt: t0, Status: wfb.RunRunning, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertResult(ctx, okResult("att-1")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("after OpenExisting: %v", err)
	}
	defer d.Close()
	if got := queryOne(t, d, `SELECT count(*) FROM results`); got[0] != int64(1) {
		t.Errorf("results = %v, want the one written", got[0])
	}
}

// TestOpenReadOnlyDoesNotMigrateAnOlderFile stops a read-only command from
// silently writing a schema upgrade.
func TestOpenReadOnlyDoesNotMigrateAnOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenReadOnly(context.Background(), path)
	if !errors.Is(err, ErrSchemaTooOld) || !strings.Contains(err.Error(), "wfb upgrade --db "+path) {
		t.Errorf("error %v: want ErrSchemaTooOld telling how to upgrade", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("the older file was changed: %v, %v", fi, err)
	}
	// A write open upgrades it.
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatalf("after upgrade: %v", err)
	}
	d.Close()
}

// TestMigrationsAreRecordedOnceWithTheirTime stops a reopen from re-running
// a migration, and an unrecorded schema from looking like version 0.
func TestMigrationsAreRecordedOnceWithTheirTime(t *testing.T) {
	ctx := context.Background()
	_, path := newDB(t)
	for i := 0; i < 2; i++ {
		d, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		_, rows, err := d.Query(ctx, `SELECT version, name, length(applied_at) FROM schema_migrations ORDER BY version`)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		ms, err := migrations()
		if err != nil {
			t.Fatal(err)
		}
		var want [][]any
		for _, m := range ms {
			want = append(want, []any{int64(m.version), m.name, int64(len(TimeLayout))})
		}
		if len(want) == 0 || want[0][1] != "0001_init" {
			t.Fatalf("embedded migrations %v do not start with 0001_init", want)
		}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("schema_migrations after reopen %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestReadOnlyWritesAreRefusedByTheEngine stops `wfb sql` from modifying the
// results file, including through tricks a string filter would miss:
// switching query_only off, ATTACHing a writable file, VACUUM INTO.
func TestReadOnlyWritesAreRefusedByTheEngine(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	if err := d.InsertResult(ctx, okResult("att-1")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	dir := filepath.Dir(path)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, tc := range []struct {
		name  string
		setup string // run first on the same connection
		query string
	}{
		{name: "insert", query: `INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('x', 'run', 'x', 'running', 'x')`},
		{name: "update", query: `UPDATE runs SET label = 'changed'`},
		{name: "delete", query: `DELETE FROM runs`},
		{name: "drop", query: `DROP TABLE evidence`},
		{name: "create", query: `CREATE TABLE t (x)`},
		{name: "create temp", query: `CREATE TEMP TABLE t (x)`},
		{name: "user_version", query: `PRAGMA user_version = 7`},
		{name: "query_only off", query: `PRAGMA query_only = 0`},
		{name: "query_only off, mixed case", query: `PRAGMA Query_Only = false`},
		{name: "query_only off then insert", setup: `PRAGMA query_only = 0`, query: `INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('x', 'run', 'x', 'running', 'x')`},
		{name: "attach", query: `ATTACH '` + filepath.Join(dir, "attached.db") + `' AS a`},
		{name: "attach uri rwc", query: `ATTACH 'file:` + filepath.Join(dir, "attached2.db") + `?mode=rwc' AS a`},
		{name: "vacuum into", query: `VACUUM INTO '` + filepath.Join(dir, "copy.db") + `'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := ro.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tc.setup != "" {
				_, _ = conn.ExecContext(ctx, tc.setup)
			}
			rows, err := conn.QueryContext(ctx, tc.query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatalf("%s: the engine allowed it", tc.query)
			}
			if !errors.Is(ro.classify(err), ErrReadOnly) {
				t.Errorf("%s: error %v is not classified as ErrReadOnly", tc.query, err)
			}
		})
	}
	// The same refusal through the public Query.
	if _, _, err := ro.Query(ctx, `DELETE FROM results`); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Query DELETE: error %v, want ErrReadOnly", err)
	}
	ro.Close()

	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the read-only handle changed the file")
	}
	for _, name := range []string{"attached.db", "attached2.db", "copy.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was created through the read-only handle", name)
		}
	}
}

// TestQueryReportsSyntaxErrorsAsBadQuery stops a typo from being reported as
// an internal failure.
func TestQueryReportsSyntaxErrorsAsBadQuery(t *testing.T) {
	d, _ := newDB(t)
	_, _, err := d.Query(context.Background(), `SELEC 1`)
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("error %v: want ErrBadQuery with SQLite's message", err)
	}
}

// TestQueryReturnsTypedValues stops numbers from reaching renderers as
// strings (or NULL as an empty string).
func TestQueryReturnsTypedValues(t *testing.T) {
	d, _ := newDB(t)
	cols, rows, err := d.Query(context.Background(), `SELECT NULL AS n, 42 AS i, 0.5 AS f, 'x' AS s, x'00ff' AS b, ? AS arg`, int64(7))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"n", "i", "f", "s", "b", "arg"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := [][]any{{nil, int64(42), 0.5, "x", []byte{0, 0xff}, int64(7)}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestEachScansTypedRowsNullStayingNull stops the streaming query from
// turning NULL into a zero (or a zero into NULL), losing or reordering rows,
// carrying on after the caller said stop, or reporting an engine refusal as
// an internal failure.
func TestEachScansTypedRowsNullStayingNull(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	for i, r := range []*Result{
		{AttemptID: "att-measured", InputTokens: ptr(int64(0)), CostUSD: ptr(0.25)},
		{AttemptID: "att-unmeasured"},
		{AttemptID: "att-third", InputTokens: ptr(int64(1200)), CostUSD: ptr(0.0)},
	} {
		full := okResult(r.AttemptID)
		full.StartedAt = t0.Add(time.Duration(i) * time.Second)
		full.InputTokens, full.CostUSD = r.InputTokens, r.CostUSD
		if err := d.InsertResult(ctx, full); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		ID     string
		Tokens sql.NullInt64
		Cost   sql.NullFloat64
		Error  sql.NullString
	}
	const q = `SELECT attempt_id, input_tokens, cost_usd, error_kind FROM results WHERE run_id = ? ORDER BY started_at`
	read := func(limit int) ([]row, error) {
		var got []row
		err := d.Each(ctx, q, []any{"run-1"}, func(s Scanner) error {
			if len(got) == limit {
				return errStop
			}
			var r row
			if err := s.Scan(&r.ID, &r.Tokens, &r.Cost, &r.Error); err != nil {
				return err
			}
			got = append(got, r)
			return nil
		})
		return got, err
	}
	got, err := read(-1)
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{ID: "att-measured", Tokens: sql.NullInt64{Int64: 0, Valid: true}, Cost: sql.NullFloat64{Float64: 0.25, Valid: true}},
		{ID: "att-unmeasured"},
		{ID: "att-third", Tokens: sql.NullInt64{Int64: 1200, Valid: true}, Cost: sql.NullFloat64{Float64: 0, Valid: true}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	got, err = read(1)
	if !errors.Is(err, errStop) || len(got) != 1 {
		t.Errorf("stopping after one row: %d rows, error %v; want 1 row and the caller's error", len(got), err)
	}

	err = d.Each(ctx, `SELEC 1`, nil, func(Scanner) error { return nil })
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("bad query: error %v, want ErrBadQuery with SQLite's message", err)
	}
	d.Close()
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = ro.Each(ctx, `UPDATE runs SET label = 'x' RETURNING run_id`, nil, func(Scanner) error { return nil })
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("write through a read-only Each: error %v, want ErrReadOnly", err)
	}
}

var errStop = errors.New("stop")

// TestADuplicateAttemptIsRefusedNotOverwritten stops a resume or retry from
// replacing a recorded attempt.
func TestADuplicateAttemptIsRefusedNotOverwritten(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	first := okResult("att-1")
	if err := d.InsertResult(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := okResult("att-1")
	second.OK, second.ErrorKind, second.StdoutTail = false, wfb.KindTimeout, "second"
	if err := d.InsertResult(ctx, second); !errors.Is(err, ErrDuplicateAttempt) {
		t.Fatalf("second insert: error %v, want ErrDuplicateAttempt", err)
	}
	got, err := d.Results(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Result{*first}, got); diff != "" {
		t.Errorf("after duplicate (-want +got):\n%s", diff)
	}
	// Nor can SQL through the writer change or remove a row.
	for _, q := range []string{`UPDATE results SET ok = 0, error_kind = 'timeout'`, `DELETE FROM results`} {
		if err := d.Tx(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(q); return err }); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v, want append-only refusal", q, err)
		}
	}
}

// TestInvalidResultsAreRefusedNamingTheField stops rows that misstate what
// happened: an ok row with an error kind, a failure with no reason.
func TestInvalidResultsAreRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, tc := range []struct {
		name   string
		mutate func(*Result)
		want   string
	}{
		{"ok with error kind", func(r *Result) { r.ErrorKind = wfb.KindTimeout }, "error_kind"},
		{"failure without kind", func(r *Result) { r.OK = false }, "error_kind is empty"},
		{"unknown kind", func(r *Result) { r.OK, r.ErrorKind = false, "oops" }, `"oops"`},
		{"no task", func(r *Result) { r.Task = "" }, "task"},
		{"attempt 0", func(r *Result) { r.Attempt = 0 }, "attempt"},
		{"no start", func(r *Result) { r.StartedAt = time.Time{} }, "started_at"},
		{"unknown run", func(r *Result) { r.RunID = "run-x" }, `run "run-x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := okResult("att-" + strings.ReplaceAll(tc.name, " ", "-"))
			tc.mutate(r)
			err := d.InsertResult(ctx, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %s", err, tc.want)
			}
		})
	}
	// The CHECK constraint holds the same line for writers that bypass Go.
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, error_kind)
			VALUES ('run-1', 'raw', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 0, NULL)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "CHECK") {
		t.Errorf("raw failed row without error_kind: error %v, want CHECK failure", err)
	}
}

// TestPragmasHoldOnEveryPooledConnection stops the classic bug of setting
// WAL or busy_timeout with one Exec, which reaches only the connection that
// ran it.
func TestPragmasHoldOnEveryPooledConnection(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	d.Close()

	check := func(t *testing.T, db *sql.DB, want map[string]any) {
		t.Helper()
		var conns []*sql.Conn
		for i := 0; i < 3; i++ {
			c, err := db.Conn(ctx) // held, so each is a distinct connection
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
		for i, c := range conns {
			got := map[string]any{}
			for name := range want {
				var v any
				if err := c.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
					t.Fatal(err)
				}
				got[name] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("connection %d (-want +got):\n%s", i, diff)
			}
		}
	}
	t.Run("writer DSN", func(t *testing.T) {
		// The writer pool holds one connection; open its DSN with a larger
		// pool to see what every new connection gets.
		dsn, err := fileURI(path, writerParams)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, db, map[string]any{"journal_mode": "wal", "busy_timeout": int64(busyTimeoutMS), "foreign_keys": int64(1), "synchronous": int64(1)})
	})
	t.Run("reader pool", func(t *testing.T) {
		ro, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		check(t, ro.db, map[string]any{"journal_mode": "wal", "busy_timeout": int64(busyTimeoutMS), "query_only": int64(1)})
	})
	t.Run("writer pool", func(t *testing.T) {
		w, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if got := w.db.Stats().MaxOpenConnections; got != 1 {
			t.Errorf("writer MaxOpenConnections = %d, want 1", got)
		}
	})
}

// TestTxRollsBackOnErrorAndPanic stops a half-written attempt (a result row
// without its evidence, say) from surviving a failure.
func TestTxRollsBackOnErrorAndPanic(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	boom := errors.New("boom")
	insert := func(tx *sql.Tx, id string) {
		if err := d.InsertResultTx(ctx, tx, okResult(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Tx(ctx, func(tx *sql.Tx) error { insert(tx, "att-err"); return boom }); !errors.Is(err, boom) {
		t.Errorf("Tx error = %v, want boom", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "panic in tx" {
				t.Errorf("recovered %v, want the re-raised panic", p)
			}
		}()
		_ = d.Tx(ctx, func(tx *sql.Tx) error { insert(tx, "att-panic"); panic("panic in tx") })
	}()
	if err := d.Tx(ctx, func(tx *sql.Tx) error { insert(tx, "att-ok"); return nil }); err != nil {
		t.Fatal(err)
	}
	_, rows, err := d.Query(ctx, `SELECT attempt_id FROM results ORDER BY attempt_id`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]any{{"att-ok"}}, rows); diff != "" {
		t.Errorf("rows after rollbacks (-want +got):\n%s", diff)
	}
}

// TestConcurrentWritersLoseNothing stops lost rows (or SQLITE_BUSY failures)
// when workers, and a second process's handle, write at once.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	other, err := Open(ctx, path) // a second handle, as another process would have
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			db := d
			if w%2 == 1 {
				db = other
			}
			for i := 0; i < each; i++ {
				r := okResult(fmt.Sprintf("att-%d-%d", w, i))
				r.Arm, r.Rep = fmt.Sprintf("a%d", w), i
				if err := db.InsertResult(ctx, r); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	v := queryOne(t, d, `SELECT count(*), count(DISTINCT attempt_id) FROM results`)
	if diff := cmp.Diff([]any{int64(workers * each), int64(workers * each)}, v); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestSecretsNeverReachTheFile stops an API key in an error message, the
// agent's output or the run config from being written to disk.
func TestSecretsNeverReachTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "wfb.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{
		"sk-ant-api03-AAAAbbbbCCCCdddd1111",
		"sk-proj-ZZZZyyyyXXXXwwww2222",
		"tok3nValue987654",
		"hunter2hunter2",
		"xkeyvalue55555",
	}
	err = d.CreateRun(ctx, Run{ID: "run-1", Kind: "session", StartedAt: t0, Harness: "test",
		Label:  "ANTHROPIC_API_KEY=" + secrets[0],
		Config: `{"env":{"ANTHROPIC_API_KEY":"` + secrets[0] + `","GITHUB_TOKEN":"` + secrets[2] + `"}}`})
	if err != nil {
		t.Fatal(err)
	}
	r := okResult("att-1")
	r.OK, r.ErrorKind = false, wfb.KindProviderError
	r.ErrorDetail = "upstream said 401 for key " + secrets[1]
	r.ResultEvent = `{"type":"result","is_error":true,"headers":{"x-api-key":"` + secrets[4] + `","authorization":"Bearer ` + secrets[2] + `"}}`
	r.StdoutTail = "calling with DB_PASSWORD=" + secrets[3] + "\n"
	r.StderrTail = "error: request failed\nAuthorization: Bearer " + secrets[2] + "\nkey " + secrets[0] + "\n"
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	// The caller's copy is redacted too: whatever it prints next (a
	// progress line, `wfb session`'s row) is as clean as the file.
	for _, field := range []string{r.ErrorDetail, r.ResultEvent, r.StdoutTail, r.StderrTail} {
		for _, sec := range secrets {
			if strings.Contains(field, sec) {
				t.Errorf("secret %q is still in the caller's row after InsertResult", sec)
			}
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, e := range entries { // the db and any -wal/-shm left behind
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, s := range secrets {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("secret %q reached the file", s)
		}
	}
	if !bytes.Contains(all, []byte(Redacted)) {
		t.Error("no [REDACTED] marker in the file: the evidence was dropped rather than redacted")
	}
}

// TestEvidenceIsBoundedKeepingTheTail stops a runaway agent's output from
// bloating the file, while keeping the end, where the error usually is.
func TestEvidenceIsBoundedKeepingTheTail(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	r := okResult("att-1")
	r.StdoutTail = strings.Repeat("é", MaxEvidenceBytes) + "THE END"
	r.StderrTail = "short"
	r.ResultEvent = `{"type":"result"` + strings.Repeat(" ", 2*MaxEvidenceBytes) + `}`
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := d.Results(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	e := got[0]
	for name, s := range map[string]string{"stdout": e.StdoutTail, "result_event": e.ResultEvent} {
		if len(s) > MaxEvidenceBytes+100 {
			t.Errorf("%s: %d bytes stored, bound is %d", name, len(s), MaxEvidenceBytes)
		}
		if !strings.Contains(s, "truncated") {
			t.Errorf("%s: truncation not stated", name)
		}
	}
	if !strings.HasSuffix(e.StdoutTail, "THE END") || !strings.HasPrefix(e.StdoutTail, "[wfb: truncated") {
		t.Errorf("stdout tail does not keep the end: %q...%q", e.StdoutTail[:40], e.StdoutTail[len(e.StdoutTail)-20:])
	}
	if !strings.HasPrefix(e.ResultEvent, `{"type":"result"`) {
		t.Errorf("result event does not keep its head: %q", e.ResultEvent[:40])
	}
	if e.StderrTail != "short" {
		t.Errorf("short stderr changed: %q", e.StderrTail)
	}
}

// TestArmSummaryIsHonestAboutUnmeasured stops the view from averaging NULL
// as 0 or hiding how many values stand behind an average.
func TestArmSummaryIsHonestAboutUnmeasured(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	measured := okResult("att-1")
	measured.CostUSD, measured.InputTokens = ptr(0.5), ptr(int64(100))
	failed := okResult("att-2")
	failed.OK, failed.ErrorKind = false, wfb.KindSessionError
	blind := okResult("att-3")
	blind.Arm = "b"
	for _, r := range []*Result{measured, failed, blind} {
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	_, rows, err := d.Query(ctx, `SELECT arm, cells, ok, failed, errored, attempts, cost_usd_n, cost_usd_sum, cost_usd_avg,
		input_tokens_n, input_tokens_avg FROM arm_summary_v ORDER BY arm`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"a", int64(2), int64(1), int64(1), int64(0), int64(2), int64(1), 0.5, 0.5, int64(1), 100.0},
		{"b", int64(1), int64(1), int64(0), int64(0), int64(1), int64(0), nil, nil, int64(0), nil},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("arm_summary_v (-want +got):\n%s", diff)
	}
	v := queryOne(t, d, `SELECT label, attempt_id FROM results_v WHERE attempt_id = 'att-3'`)
	if diff := cmp.Diff([]any{"baseline", "att-3"}, v); diff != "" {
		t.Errorf("results_v (-want +got):\n%s", diff)
	}
}

// TestInsertLastResultRecordsTheRowAndTheRunsEndOrTheRowAlone stops a
// session's last write from losing its row to its run's end: in one
// transaction both are there (the run complete, its figures counted with
// the row among them); when the run cannot be finished (here: it already
// was), the row is still recorded, and the run's end is left as it was.
func TestInsertLastResultRecordsTheRowAndTheRunsEndOrTheRowAlone(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	end := t0.Add(time.Hour)
	finished, err := d.InsertLastResult(ctx, okResult("att-last"), wfb.RunComplete, end)
	if !finished || err != nil {
		t.Fatalf("InsertLastResult = %v, %v; want the run finished", finished, err)
	}
	got := queryOne(t, d, `SELECT r.status, r.finished_at, s.attempts,
		(SELECT count(*) FROM results WHERE attempt_id = 'att-last')
		FROM runs r JOIN run_stats s USING (run_id) WHERE r.run_id = 'run-1'`)
	if diff := cmp.Diff([]any{wfb.RunComplete, formatTime(end), int64(1), int64(1)}, got); diff != "" {
		t.Errorf("run and row after InsertLastResult (-want +got):\n%s", diff)
	}

	r := okResult("att-late")
	finished, err = d.InsertLastResult(ctx, r, wfb.RunAborted, end.Add(time.Hour))
	if finished || err != nil {
		t.Errorf("InsertLastResult on a finished run = %v, %v; want the row recorded alone", finished, err)
	}
	got = queryOne(t, d, `SELECT (SELECT status FROM runs WHERE run_id = 'run-1'),
		(SELECT count(*) FROM results WHERE attempt_id = 'att-late')`)
	if diff := cmp.Diff([]any{wfb.RunComplete, int64(1)}, got); diff != "" {
		t.Errorf("run status and the late row (-want +got):\n%s", diff)
	}

	r = okResult("att-nowhere")
	r.RunID = "run-x"
	if finished, err = d.InsertLastResult(ctx, r, wfb.RunComplete, end); finished || err == nil {
		t.Errorf("InsertLastResult of a row of no recorded run = %v, %v; want its error", finished, err)
	}
}

// TestRunsLifecycle stops a run from finishing twice or losing its times.
func TestRunsLifecycle(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	later := Run{ID: "run-2", Kind: "session", StartedAt: t0.Add(time.Hour), Status: wfb.RunRunning, Harness: "test", Fingerprint: "fp"}
	if err := d.CreateRun(ctx, later); err != nil {
		t.Fatal(err)
	}
	end := t0.Add(2 * time.Hour)
	if err := d.FinishRun(ctx, "run-2", wfb.RunComplete, end); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishRun(ctx, "run-2", wfb.RunAborted, end); err == nil || !strings.Contains(err.Error(), "already finished") {
		t.Errorf("second finish: %v", err)
	}
	if err := d.FinishRun(ctx, "run-x", wfb.RunComplete, end); !errors.Is(err, ErrNotFound) {
		t.Errorf("finish unknown run: %v", err)
	}
	if err := d.FinishRun(ctx, "run-1", wfb.RunRunning, end); err == nil {
		t.Error("finished a run as running")
	}
	runs, err := d.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	later.Status, later.FinishedAt = wfb.RunComplete, &end
	want := []Run{later, {ID: "run-1", Label: "baseline", Kind: "run", StartedAt: t0, Status: wfb.RunRunning, Harness: "test"}}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}
	if _, err := d.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run(nope) error %v, want ErrNotFound", err)
	}
}

// TestReopenRunLetsAResumedRunFinishAnew stops a resumed run from keeping
// the status and finish time of the invocation it resumes (a "complete" or
// "interrupted" run that is in fact running again), from refusing to
// finish a second time, and from touching the attempts already recorded.
func TestReopenRunLetsAResumedRunFinishAnew(t *testing.T) {
	ctx := context.Background()
	end := t0.Add(time.Hour)
	tests := []struct {
		name       string
		finishedAs string // "" leaves the run running, as a killed process does
		id         string
		wantErr    error
	}{
		{name: "interrupted", finishedAs: wfb.RunInterrupted, id: "run-1"},
		{name: "complete", finishedAs: wfb.RunComplete, id: "run-1"},
		{name: "still running after a kill", id: "run-1"},
		{name: "unknown run", finishedAs: wfb.RunComplete, id: "run-x", wantErr: ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := newDB(t)
			if err := d.InsertResult(ctx, okResult("att-1")); err != nil {
				t.Fatal(err)
			}
			if tc.finishedAs != "" {
				if err := d.FinishRun(ctx, "run-1", tc.finishedAs, end); err != nil {
					t.Fatal(err)
				}
			}
			err := d.ReopenRun(ctx, tc.id)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.id) {
					t.Fatalf("ReopenRun(%s) = %v, want %v naming the run", tc.id, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := queryOne(t, d, `SELECT status, finished_at, (SELECT count(*) FROM results WHERE run_id = r.run_id) FROM runs r WHERE run_id = 'run-1'`)
			if diff := cmp.Diff([]any{wfb.RunRunning, nil, int64(1)}, got); diff != "" {
				t.Errorf("reopened run: status, finished_at, attempts (-want +got):\n%s", diff)
			}
			later := end.Add(time.Hour)
			if err := d.FinishRun(ctx, "run-1", wfb.RunComplete, later); err != nil {
				t.Fatalf("finishing the reopened run: %v", err)
			}
			got = queryOne(t, d, `SELECT status, finished_at FROM runs WHERE run_id = 'run-1'`)
			if diff := cmp.Diff([]any{wfb.RunComplete, formatTime(later)}, got); diff != "" {
				t.Errorf("run finished anew (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("read-only", func(t *testing.T) {
		d, path := newDB(t)
		if err := d.FinishRun(ctx, "run-1", wfb.RunComplete, end); err != nil {
			t.Fatal(err)
		}
		d.Close()
		ro, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if err := ro.ReopenRun(ctx, "run-1"); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("ReopenRun on a read-only file = %v, want ErrReadOnly", err)
		}
		got := queryOne(t, ro, `SELECT status FROM runs`)
		if diff := cmp.Diff([]any{wfb.RunComplete}, got); diff != "" {
			t.Errorf("run after a refused reopen (-want +got):\n%s", diff)
		}
	})
}

// TestNewIDIsUniqueAndTimeSortable stops id collisions between workers.
func TestNewIDIsUniqueAndTimeSortable(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewID("run")
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if len(id) != len("run-20261130T024031Z-1f2e3d4c") || !strings.HasPrefix(id, "run-20") {
			t.Fatalf("id %q has the wrong shape", id)
		}
	}
}
