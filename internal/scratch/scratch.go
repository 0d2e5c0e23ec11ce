// Package scratch makes the temporary directories wfb works in (a run's
// cell copies, a sandbox's private root) so that a later wfb can tell the
// ones a killed wfb left behind from the ones in use, and reaps the former.
//
// A scratch directory is held locked (flock on the directory itself) for as
// long as its maker uses it, and carries a marker file saying it was made
// so. A directory that is marked and that nobody holds locked is a leftover:
// the lock went with the process that held it. One without the marker is
// never reaped: it is being made (the marker comes after the lock), or was
// made by a wfb that did not lock its directories, which may still use it.
package scratch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// marker is the file in a scratch directory that says it holds a lock
// while in use.
const marker = ".wfb-scratch"

// Dir is a scratch directory, locked until Remove.
type Dir struct {
	// Path is the directory, as os.MkdirTemp named it.
	Path string
	lock *os.File
}

// New makes a directory in parent (the temp dir when "") named prefix and
// random digits, as os.MkdirTemp does, mode 0700, locked and marked.
func New(parent, prefix string) (*Dir, error) {
	path, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, err
	}
	lock, err := os.Open(path)
	if err == nil {
		// Blocking: a reaper looking at it lets go at once (no marker yet).
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(path, marker), nil, 0o600)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(path)
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &Dir{Path: path, lock: lock}, nil
}

// Remove removes the directory and all it holds (see RemoveAll), then
// lets its lock go. Should the removal fail, what is left is a leftover
// the next Reap retries. A nil Dir is nothing to remove.
func (d *Dir) Remove() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := RemoveAll(d.Path)
	d.lock.Close()
	d.lock = nil
	return err
}

// RemoveAll removes dir and all it holds, including what a session left
// without write or search permission: such directories are given back to
// their owner (0700) first. Files a session uid owns go as any other (root
// may remove them; an ordinary user's sessions run as that user).
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	// WalkDir visits a directory before it reads it: the chmod comes first.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Reap removes the scratch directories in parent (the temp dir when "")
// named by one of prefixes that nobody holds locked, and returns them. A
// directory it cannot lock, that has no marker, or whose name is a prefix
// followed by anything but MkdirTemp's digits, it leaves alone.
func Reap(parent string, prefixes ...string) []string {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var reaped []string
	for _, e := range entries {
		if !e.IsDir() || !madeWith(e.Name(), prefixes) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if reapOne(p) {
			reaped = append(reaped, p)
		}
	}
	return reaped
}

// madeWith says whether name is one of prefixes and MkdirTemp's digits.
func madeWith(name string, prefixes []string) bool {
	for _, pre := range prefixes {
		rest, ok := strings.CutPrefix(name, pre)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// reapOne removes the directory at p if it is marked and it gets its lock.
func reapOne(p string) bool {
	f := TryLock(p)
	if f == nil && unreadable(p) && os.Chmod(p, 0o700) == nil {
		// A session of wfb's own uid took its permissions away.
		f = TryLock(p)
	}
	if f == nil {
		return false
	}
	defer f.Close()
	if _, err := os.Lstat(filepath.Join(p, marker)); err != nil {
		return false
	}
	return RemoveAll(p) == nil
}

// unreadable says whether p cannot be opened for want of permission (not
// because it is locked, which never stops an open).
func unreadable(p string) bool {
	f, err := os.Open(p)
	if err == nil {
		f.Close()
	}
	return errors.Is(err, fs.ErrPermission)
}

// TryLock opens the file or directory at p and locks it (flock, exclusive)
// if nobody holds it, and p still names what it locked (its owner removes
// it before letting go); nil otherwise. Closing the file lets go.
func TryLock(p string) *os.File {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	held, err1 := f.Stat()
	named, err2 := os.Lstat(p)
	if err1 != nil || err2 != nil || !os.SameFile(held, named) {
		f.Close()
		return nil
	}
	return f
}
