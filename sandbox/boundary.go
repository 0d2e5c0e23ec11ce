package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// clearChmod is os.Chmod; a test swaps it to make clearing fail halfway,
// which a root test process cannot otherwise provoke.
var clearChmod = os.Chmod

// boundaryEntry is one path whose mode WorkspaceWriteBoundary changed, with
// the identity of the inode it changed, so restore never chmods a stand-in.
// It is what the mode journal holds, one per path.
type boundaryEntry struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"`
	Dev  uint64      `json:"dev"`
	Ino  uint64      `json:"ino"`
}

// WorkspaceWriteBoundary clears every write bit (owner, group, other) on
// every file and directory under dir, dir included, without following
// symlinks. restore puts back the exact original modes, setuid, setgid and
// sticky bits included; it is idempotent, and the runner must call it on
// every path out of a session (defer it). If clearing fails halfway, what was
// changed is restored and the error returned.
//
// The original modes are journaled (see modeJournal) before the first is
// changed, and the journal stays locked while the boundary is up: a wfb
// killed before restore leaves it, and the next wfb restores the modes from
// it (RecoverWriteBoundaries, which this calls first, so a tree a dead wfb
// left read-only is never taken for the original). A boundary on a tree
// another live wfb holds one on is refused: one of the two would take the
// other's cleared modes for the originals.
//
// The boundary binds only a session that does not own the files: see the
// package doc (a root wfb runs host-unsafe sessions as another uid; otherwise
// it is best-effort). Take the before/after Digest of a session both outside
// the boundary (before applying it, after restore): modes are part of it.
func WorkspaceWriteBoundary(dir string) (restore func() error, err error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("write boundary: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("write boundary: %s is not a directory", dir)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("write boundary: %w", err)
	}
	jdir, err := journalDir()
	if err != nil {
		return nil, fmt.Errorf("write boundary on %s: %w", dir, err)
	}
	// Rare here (wfb start recovers too): a wfb that died since this one
	// started. The runner has no stream for it; stderr is where it belongs.
	for _, note := range recoverJournals(jdir) {
		fmt.Fprintln(os.Stderr, "wfb: "+note)
	}
	entries, err := writableEntries(dir)
	if err != nil {
		return nil, fmt.Errorf("write boundary on %s: %w", dir, err)
	}
	j, err := writeJournal(jdir, dir, entries)
	if err != nil {
		return nil, fmt.Errorf("write boundary on %s: %w", dir, err)
	}
	var (
		mu      sync.Mutex
		pending []boundaryEntry
	)
	restore = func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		var failed []boundaryEntry
		for i := len(pending) - 1; i >= 0; i-- {
			e := pending[i]
			if err := e.restore(); err != nil {
				errs = append(errs, err)
				failed = append(failed, e)
			}
		}
		// Keep only what failed, in walk order, so a second call retries
		// those and a call after success does nothing. The journal goes
		// either way: what failed here is reported, and would fail again.
		for i, j := 0, len(failed)-1; i < j; i, j = i+1, j-1 {
			failed[i], failed[j] = failed[j], failed[i]
		}
		pending = failed
		errs = append(errs, j.remove())
		return errors.Join(errs...)
	}
	for _, e := range entries {
		if err := clearChmod(e.Path, e.Mode&^0o222); err != nil {
			return nil, errors.Join(fmt.Errorf("write boundary on %s: %w", dir, err), restore())
		}
		pending = append(pending, e)
	}
	return restore, nil
}

// writableEntries lists, in walk order, every file and directory under dir
// (dir included, symlinks not followed) that has a write bit.
func writableEntries(dir string) ([]boundaryEntry, error) {
	var entries []boundaryEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o222 == 0 {
			return nil
		}
		e := boundaryEntry{Path: p, Mode: info.Mode()}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			e.Dev, e.Ino = uint64(st.Dev), st.Ino
		}
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

func (e boundaryEntry) restore() error {
	info, err := os.Lstat(e.Path)
	if err != nil {
		return fmt.Errorf("restore mode of %s: %w", e.Path, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if info.Mode().Type() != e.Mode.Type() || (ok && (uint64(st.Dev) != e.Dev || st.Ino != e.Ino)) {
		return fmt.Errorf("restore mode of %s: it was replaced during the session; left as is", e.Path)
	}
	// os.Chmod carries setuid, setgid and sticky along with the permissions.
	if err := os.Chmod(e.Path, e.Mode); err != nil {
		return fmt.Errorf("restore mode of %s: %w", e.Path, err)
	}
	return nil
}
