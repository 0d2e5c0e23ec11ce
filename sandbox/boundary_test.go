package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// modeTree builds a workspace with odd modes, special bits and a symlink
// pointing outside it, and returns the path of that outside target.
func modeTree(t *testing.T, ws string) (outside string) {
	t.Helper()
	outside = filepath.Join(filepath.Dir(ws), "outside.txt")
	writeFile(t, outside, "not in the workspace", 0o666)
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{
		{"sub", 0o750},
		{"sub/deep", 0o755},
		{"shared", 0o1777 | os.ModeSticky},
		{"group", 0o2775 | os.ModeSetgid},
	} {
		p := filepath.Join(ws, d.path)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{
		{"private.txt", 0o600},
		{"sub/tool", 0o750},
		{"sub/deep/readonly.txt", 0o444},
		{"setuid", 0o4755 | os.ModeSetuid},
		{"shared/odd", 0o604},
		{"none", 0o000},
	} {
		writeFile(t, filepath.Join(ws, f.path), f.path, f.mode)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	return outside
}

func modes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	got := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		got[p] = info.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWriteBoundaryClearsEveryWriteBitAndRestoresExactModes stops a boundary
// that misses a file, follows a symlink out of the workspace, or gives back
// modes that differ from the originals (lost setuid/setgid/sticky bits, or a
// blanket 0644).
func TestWriteBoundaryClearsEveryWriteBitAndRestoresExactModes(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	outside := modeTree(t, ws)
	original := modes(t, ws)
	outsideBefore := modes(t, outside)[outside]

	restore, err := WorkspaceWriteBoundary(ws)
	if err != nil {
		t.Fatal(err)
	}
	inside := modes(t, ws)
	want := map[string]fs.FileMode{}
	for p, m := range original {
		if m&fs.ModeSymlink == 0 {
			m &^= 0o222
		}
		want[p] = m
	}
	if diff := cmp.Diff(want, inside); diff != "" {
		t.Errorf("modes inside the boundary (-want +got):\n%s", diff)
	}
	if got := modes(t, outside)[outside]; got != outsideBefore {
		t.Errorf("the symlink's target outside the workspace changed mode: %v, want %v", got, outsideBefore)
	}

	for i := 0; i < 2; i++ {
		if err := restore(); err != nil {
			t.Fatalf("restore #%d: %v", i+1, err)
		}
		if diff := cmp.Diff(original, modes(t, ws)); diff != "" {
			t.Errorf("modes after restore #%d (-want +got):\n%s", i+1, diff)
		}
	}
}

// TestWriteBoundaryRestoresWhatItChangedWhenClearingFailsHalfway stops a
// failed boundary from leaving half the workspace read-only for good.
func TestWriteBoundaryRestoresWhatItChangedWhenClearingFailsHalfway(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	modeTree(t, ws)
	original := modes(t, ws)
	// Lexical walk order: the root, none, private.txt, setuid, shared, ...
	// are changed before sub/tool fails.
	failAt := filepath.Join(ws, "sub", "tool")
	calls := 0
	clearChmod = func(p string, m fs.FileMode) error {
		calls++
		if p == failAt {
			return errors.New("injected chmod failure")
		}
		return os.Chmod(p, m)
	}
	t.Cleanup(func() { clearChmod = os.Chmod })

	restore, err := WorkspaceWriteBoundary(ws)
	if err == nil || !strings.Contains(err.Error(), "injected chmod failure") {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if restore != nil {
		t.Error("a failed boundary returned a restore func")
	}
	if calls < 3 {
		t.Fatalf("failure injected after %d chmods; the test needs some changed first", calls)
	}
	if diff := cmp.Diff(original, modes(t, ws)); diff != "" {
		t.Errorf("modes after a failed boundary (-want +got):\n%s", diff)
	}
}

// TestWriteBoundaryRestoreRefusesAReplacedPath stops restore from chmodding
// something the session put in place of an original (a symlink to a file
// outside, say), while it still restores everything else.
func TestWriteBoundaryRestoreRefusesAReplacedPath(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	outside := modeTree(t, ws)
	original := modes(t, ws)
	restore, err := WorkspaceWriteBoundary(ws)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(ws, "private.txt")
	// A session that owns the workspace (non-root wfb) can undo the boundary
	// on the directory first; as root the test could replace it anyway.
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, victim); err != nil {
		t.Fatal(err)
	}
	outsideBefore := modes(t, outside)[outside]
	err = restore()
	if err == nil || !strings.Contains(err.Error(), victim+": it was replaced during the session") {
		t.Fatalf("restore err = %v, want it to name %s as replaced", err, victim)
	}
	if got := modes(t, outside)[outside]; got != outsideBefore {
		t.Errorf("restore chmodded through the planted symlink: %v, want %v", got, outsideBefore)
	}
	got := modes(t, ws)
	delete(original, victim)
	delete(got, victim)
	if diff := cmp.Diff(original, got); diff != "" {
		t.Errorf("modes of the untouched paths (-want +got):\n%s", diff)
	}
}

// cleared is modes with every write bit off, symlinks as they are.
func cleared(modes map[string]fs.FileMode) map[string]fs.FileMode {
	out := map[string]fs.FileMode{}
	for p, m := range modes {
		if m&fs.ModeSymlink == 0 {
			m &^= 0o222
		}
		out[p] = m
	}
	return out
}

// TestWriteBoundaryTakesTheOriginalModesFromAJournalADeadWfbLeft: a
// boundary whose wfb died (its journal left, unlocked, the tree read-only)
// is undone by the next boundary on any tree before it reads a single mode,
// so the cleared modes are never taken for the originals; its journal goes.
func TestWriteBoundaryTakesTheOriginalModesFromAJournalADeadWfbLeft(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ws := newWorkspace(t, t.TempDir())
	modeTree(t, ws)
	original := modes(t, ws)
	// What a wfb killed under its boundary leaves: the journal, no lock.
	jdir, err := journalDir()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := writableEntries(ws)
	if err != nil {
		t.Fatal(err)
	}
	j, err := writeJournal(jdir, ws, entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(e.Path, e.Mode&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	j.f.Close()

	restore, err := WorkspaceWriteBoundary(ws)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cleared(original), modes(t, ws)); diff != "" {
		t.Errorf("modes inside the new boundary (-want +got):\n%s", diff)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(original, modes(t, ws)); diff != "" {
		t.Errorf("modes after the new boundary: the dead one's cleared modes were taken for the originals (-want +got):\n%s", diff)
	}
	if left, _ := filepath.Glob(filepath.Join(jdir, "*")); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
}

// TestASecondWriteBoundaryOnATreeIsRefusedWhileTheFirstIsUp: two reviews
// of one tree at once would have the second take the first's cleared modes
// for the originals and leave the tree read-only; the second is refused,
// and the journal of the live one is not "recovered" from under it.
func TestASecondWriteBoundaryOnATreeIsRefusedWhileTheFirstIsUp(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := newWorkspace(t, t.TempDir())
	modeTree(t, ws)
	original := modes(t, ws)
	restore, err := WorkspaceWriteBoundary(ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WorkspaceWriteBoundary(ws); err == nil || !strings.Contains(err.Error(), "another wfb holds a write boundary on "+ws) {
		t.Errorf("second boundary: err = %v, want a refusal naming the tree", err)
	}
	notes, err := RecoverWriteBoundaries()
	if err != nil || len(notes) != 0 {
		t.Errorf("recovery with the boundary up: %v %v, want nothing done", notes, err)
	}
	if diff := cmp.Diff(cleared(original), modes(t, ws)); diff != "" {
		t.Errorf("modes while the first boundary is up (-want +got):\n%s", diff)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(original, modes(t, ws)); diff != "" {
		t.Errorf("modes after the first boundary (-want +got):\n%s", diff)
	}
}
