package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeMigratesAnOlderFileInPlaceAndSaysFromWhichVersion stops an
// older results file from being readable only after some unrelated write
// command happened to open it: Upgrade migrates it in place, says from
// which schema to which, keeps its rows, and leaves a file that passes the
// tamper check (a read-only open, which refuses a file whose schema is
// not what wfb makes). A second Upgrade finds it current.
func TestUpgradeMigratesAnOlderFileInPlaceAndSaysFromWhichVersion(t *testing.T) {
	ctx := context.Background()
	const old = 3
	path, raw := fileAtVersion(t, old)
	if _, err := raw.Exec(`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('run-old', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'old')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	_, err := OpenReadOnly(ctx, path)
	if !errors.Is(err, ErrSchemaTooOld) || !strings.Contains(err.Error(), "this file has schema version 3") ||
		!strings.Contains(err.Error(), "`wfb upgrade --db "+path+"`") {
		t.Fatalf("read-only open before the upgrade: %v; want ErrSchemaTooOld naming both versions and wfb upgrade", err)
	}
	from, to, err := Upgrade(ctx, path)
	if err != nil || from != old || to != SchemaVersion() {
		t.Fatalf("Upgrade = %d → %d, %v; want %d → %d", from, to, err, old, SchemaVersion())
	}
	d, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("read-only open after the upgrade: %v", err)
	}
	if got := queryOne(t, d, `SELECT run_id FROM runs`); got[0] != "run-old" {
		t.Errorf("runs after the upgrade: %v, want the old run kept", got)
	}
	d.Close()
	if from, to, err := Upgrade(ctx, path); err != nil || from != to {
		t.Errorf("a second Upgrade = %d → %d, %v; want a current file left as it is", from, to, err)
	}
}

// TestUpgradeRefusesWhatItCannotUpgrade: a missing file is not created,
// and a newer one is refused untouched, each with its error kind.
func TestUpgradeRefusesWhatItCannotUpgrade(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, _, err := Upgrade(ctx, missing); !errors.Is(err, ErrNoSuchFile) {
		t.Errorf("Upgrade of a missing file: %v, want ErrNoSuchFile", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Upgrade created %s", missing)
	}
	path, raw := fileAtVersion(t, SchemaVersion())
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, 'from_the_future', '2026-01-01T00:00:00.000Z')`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, _, err := Upgrade(ctx, path); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Upgrade of a newer file: %v, want ErrSchemaTooNew", err)
	}
}

// TestAnOlderFileInAReadOnlyPlaceSaysToUpgradeACopy stops a reader of an
// older file it cannot write from pointing at `wfb upgrade` on that
// file, which would fail: it names both schema versions and says to copy
// the file somewhere writable and upgrade the copy.
func TestAnOlderFileInAReadOnlyPlaceSaysToUpgradeACopy(t *testing.T) {
	path, raw := fileAtVersion(t, 3)
	raw.Close()
	out, err := readAtReadOnlyLocation(t, filepath.Dir(path), path)
	want := fmt.Sprintf("this file has schema version 3, this wfb reads version %d; it is read-only here: copy it somewhere writable, then run `wfb upgrade --db COPY` on the copy", SchemaVersion())
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("reading an older file at a read-only location: %v, output %q; want %q", err, out, want)
	}
}

// TestUpgradeRefusesAFileItCannotWrite: Upgrade of a file in a directory
// it may not write is ErrReadOnly, saying to upgrade a copy, before
// SQLite fails with "attempt to write a readonly database".
func TestUpgradeRefusesAFileItCannotWrite(t *testing.T) {
	path, raw := fileAtVersion(t, 3)
	raw.Close()
	dir := filepath.Dir(path)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	// As root too: a read-only bind mount stops root where modes do not.
	out, err := atReadOnlyLocation(t, "upgrade", dir, path)
	if err == nil || !strings.Contains(out, "upgrade the copy") || !strings.Contains(out, "(read-only: true)") {
		t.Errorf("Upgrade in a read-only directory: %v, output %q; want ErrReadOnly saying to upgrade a copy", err, out)
	}
}
