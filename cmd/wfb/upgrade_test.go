package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wfbench/wfb/store"
)

// olderFile makes a results file as a wfb whose newest migration was
// version left it: store's embedded migrations up to that one, applied
// and recorded as the store applies them, with one run in it.
func olderFile(t *testing.T, version int) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "store", "migrations", "*.sql"))
	if err != nil || len(files) < version {
		t.Fatalf("migrations: %v (%d files)", err, len(files))
	}
	sort.Strings(files)
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i, f := range files[:version] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')`, i+1, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('run-old', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'old')`); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAnOlderFileIsUpgradedByWfbUpgradeWhichReadersName stops an older
// results file from being a dead end for the read-only commands: they
// refuse it (exit 2) naming both schema versions and `wfb upgrade --db
// FILE`; that command migrates it in place, saying from which version to
// which, after which the readers read it (the migrated file passes their
// tamper check) and a second upgrade has nothing to do.
func TestAnOlderFileIsUpgradedByWfbUpgradeWhichReadersName(t *testing.T) {
	path := olderFile(t, 3)
	latest := store.SchemaVersion()
	_, errOut, code := wfbCmd(t, "runs", "--db", path)
	want := fmt.Sprintf("this file has schema version 3, this wfb reads version %d; run `wfb upgrade --db %s` to upgrade it in place", latest, path)
	if code != exitBadInput || !strings.Contains(errOut, want) {
		t.Fatalf("runs on an older file: exit %d, %s\nwant exit 2 and %q", code, errOut, want)
	}
	out, errOut, code := wfbCmd(t, "upgrade", "--db", path)
	if want := fmt.Sprintf("wfb upgrade: %s upgraded from schema version 3 to %d\n", path, latest); code != exitOK || out != want {
		t.Fatalf("upgrade: exit %d, %q (%s)\nwant exit 0 and %q", code, out, errOut, want)
	}
	out, errOut, code = wfbCmd(t, "runs", "--db", path, "--format", "tsv")
	if code != exitOK || !strings.Contains(out, "run-old") {
		t.Fatalf("runs after the upgrade: exit %d: %s%s", code, out, errOut)
	}
	out, _, code = wfbCmd(t, "upgrade", "--db", path)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("at schema version %d already", latest)) {
		t.Errorf("a second upgrade: exit %d, %q; want nothing to do", code, out)
	}
}

// TestUpgradeOfNoFileIsBadInput: a mistyped --db is refused (exit 2), not
// answered with a new empty file.
func TestUpgradeOfNoFileIsBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	if _, errOut, code := wfbCmd(t, "upgrade", "--db", path); code != exitBadInput || !strings.Contains(errOut, "no such file") {
		t.Errorf("upgrade of a missing file: exit %d, %s; want 2", code, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("upgrade created %s", path)
	}
}
