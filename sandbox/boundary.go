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
type boundaryEntry struct {
	path     string
	mode     fs.FileMode
	dev, ino uint64
}

// WorkspaceWriteBoundary clears every write bit (owner, group, other) on
// every file and directory under dir, dir included, without following
// symlinks. restore puts back the exact original modes, setuid, setgid and
// sticky bits included; it is idempotent, and the runner must call it on
// every path out of a session (defer it). If clearing fails halfway, what was
// changed is restored and the error returned.
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
		// those and a call after success does nothing.
		for i, j := 0, len(failed)-1; i < j; i, j = i+1, j-1 {
			failed[i], failed[j] = failed[j], failed[i]
		}
		pending = failed
		return errors.Join(errs...)
	}
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		mode := info.Mode()
		if mode.Perm()&0o222 == 0 {
			return nil
		}
		e := boundaryEntry{path: p, mode: mode}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			e.dev, e.ino = uint64(st.Dev), st.Ino
		}
		if err := clearChmod(p, mode&^0o222); err != nil {
			return err
		}
		mu.Lock()
		pending = append(pending, e)
		mu.Unlock()
		return nil
	})
	if walkErr != nil {
		return nil, errors.Join(fmt.Errorf("write boundary on %s: %w", dir, walkErr), restore())
	}
	return restore, nil
}

func (e boundaryEntry) restore() error {
	info, err := os.Lstat(e.path)
	if err != nil {
		return fmt.Errorf("restore mode of %s: %w", e.path, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if info.Mode().Type() != e.mode.Type() || (ok && (uint64(st.Dev) != e.dev || st.Ino != e.ino)) {
		return fmt.Errorf("restore mode of %s: it was replaced during the session; left as is", e.path)
	}
	// os.Chmod carries setuid, setgid and sticky along with the permissions.
	if err := os.Chmod(e.path, e.mode); err != nil {
		return fmt.Errorf("restore mode of %s: %w", e.path, err)
	}
	return nil
}
