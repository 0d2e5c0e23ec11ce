package scratch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readOnlyTree fills dir with what a session leaves: directories without
// write or search permission, a file without any.
func readOnlyTree(t *testing.T, dir string) {
	t.Helper()
	deep := filepath.Join(dir, "made", "deeper")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "file"), []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{deep, filepath.Dir(deep)} {
		if err := os.Chmod(d, 0o500); err != nil {
			t.Fatal(err)
		}
	}
	hidden := filepath.Join(dir, "hidden")
	if err := os.Mkdir(hidden, 0); err != nil {
		t.Fatal(err)
	}
}

// TestReapRemovesOnlyDirectoriesNobodyHolds stops the reaper from removing
// a directory in use (locked), one not made as a scratch directory (no
// marker: a wfb that did not lock, or one being made) or one merely named
// alike (a test's wfb-run-test-123), and from leaving one whose maker died
// because a session made it read-only.
func TestReapRemovesOnlyDirectoriesNobodyHolds(t *testing.T) {
	parent := t.TempDir()
	dead, err := New(parent, "wfb-run-")
	if err != nil {
		t.Fatal(err)
	}
	readOnlyTree(t, dead.Path)
	// What its maker's death does, after its session's last word.
	dead.lock.Close()
	if err := os.Chmod(dead.Path, 0); err != nil {
		t.Fatal(err)
	}
	live, err := New(parent, "wfb-run-")
	if err != nil {
		t.Fatal(err)
	}
	readOnlyTree(t, live.Path)
	// A run's directory is 0755 for the sessions of other uids to pass.
	if err := os.Chmod(live.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	unmarked := filepath.Join(parent, "wfb-run-123")
	alike := filepath.Join(parent, "wfb-run-test-456")
	other := filepath.Join(parent, "wfb-sandbox-789")
	for _, d := range []string{unmarked, alike, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(alike, marker), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	got := Reap(parent, "wfb-run-")
	if diff := cmp.Diff([]string{dead.Path}, got); diff != "" {
		t.Errorf("reaped (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, filepath.Join(parent, e.Name()))
	}
	want := []string{live.Path, unmarked, alike, other}
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("left in the temp dir (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(live.Path); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the live directory after the reap: %v %v, want it untouched at 0755", fi.Mode(), err)
	}
	if err := live.Remove(); err != nil {
		t.Fatalf("remove the live one, read-only tree and all: %v", err)
	}
	if _, err := os.Lstat(live.Path); err == nil {
		t.Errorf("%s is still there after Remove", live.Path)
	}
	if got := Reap(parent, "wfb-run-"); len(got) != 0 {
		t.Errorf("a second reap removed %v", got)
	}
}
