package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ErrTampered says a results file's schema is not the one wfb's migrations
// make: a trigger, a CHECK, an index or a view was dropped or changed, so
// the file's guarantees (append-only rows, counts never negative, one row
// per cell attempt) no longer hold. Writers refuse it; readers refuse it
// unless told to read it anyway (ReadOptions.AllowTampered), and wfb sql
// can always inspect it.
var ErrTampered = errors.New("the results file's schema was changed outside wfb")

// schemaObject is one entry of sqlite_schema: a table, index, trigger or
// view, with its SQL as SQLite keeps it (whitespace folded).
type schemaObject struct{ kind, sql string }

// schemaText is the schema the migrations make, one object a line (kind,
// name and SQL, tab-separated, the SQL's whitespace folded), as
// TestTheEmbeddedSchemaIsWhatTheMigrationsMake checks and -update writes:
// read at each open instead of running every migration into a database in
// memory (~10 ms a process).
//
//go:embed schema.txt
var schemaText string

var (
	expectedOnce sync.Once
	expectedObjs map[string]schemaObject
	expectedErr  error
)

// expectedSchema is the schema the embedded migrations make.
func expectedSchema(context.Context) (map[string]schemaObject, error) {
	expectedOnce.Do(func() {
		expectedObjs = map[string]schemaObject{}
		for i, line := range strings.Split(strings.TrimSuffix(schemaText, "\n"), "\n") {
			f := strings.SplitN(line, "\t", 3)
			if len(f) != 3 {
				expectedErr = fmt.Errorf("store/schema.txt line %d: want kind, name and sql", i+1)
				return
			}
			expectedObjs[f[1]] = schemaObject{kind: f[0], sql: f[2]}
		}
	})
	return expectedObjs, expectedErr
}

// migratedSchema is what the migrations make, read from a fresh in-memory
// database: what schema.txt must hold.
func migratedSchema(ctx context.Context) (map[string]schemaObject, error) {
	sdb, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	defer sdb.Close()
	sdb.SetMaxOpenConns(1)
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		text, err := m.sql()
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := sdb.ExecContext(ctx, text); err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return readSchema(ctx, sdb)
}

// queryer is what readSchema needs of a handle.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readSchema reads the schema objects of a file, wfb's migration ledger
// and SQLite's own objects aside.
func readSchema(ctx context.Context, q queryer) (map[string]schemaObject, error) {
	rows, err := q.QueryContext(ctx, `SELECT type, name, COALESCE(sql, '') FROM sqlite_schema
		WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]schemaObject{}
	for rows.Next() {
		var kind, name, text string
		if err := rows.Scan(&kind, &name, &text); err != nil {
			return nil, err
		}
		out[name] = schemaObject{kind: kind, sql: strings.Join(strings.Fields(text), " ")}
	}
	return out, rows.Err()
}

// schemaDifferences names how the file's schema differs from what the
// migrations make: an object missing or changed, or an object the
// migrations do not make (a view of the user's own is allowed: a view
// changes no row).
func schemaDifferences(ctx context.Context, q queryer) ([]string, error) {
	want, err := expectedSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("wfb's own schema: %w", err)
	}
	got, err := readSchema(ctx, q)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s %s is missing", w.kind, name))
		case g.sql != w.sql:
			diffs = append(diffs, fmt.Sprintf("%s %s was changed", w.kind, name))
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok && g.kind != "view" {
			diffs = append(diffs, fmt.Sprintf("%s %s is not wfb's", g.kind, name))
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// tamperedError is the refusal of a file whose schema differs.
func tamperedError(path string, diffs []string) error {
	shown := diffs
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("%d more", len(diffs)-8))
	}
	return fmt.Errorf("open results %s: its schema differs from what wfb makes (%s): its guarantees (append-only rows, CHECKs, one row per cell attempt) no longer hold, so nothing is written to it; inspect it with wfb sql, or read it with --allow-tampered: %w",
		path, strings.Join(shown, "; "), ErrTampered)
}
