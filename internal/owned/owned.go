// Package owned makes files and directories for another user: a root
// wfb's session runs as a uid of its own, and what wfb makes in that
// session's private HOME (its kit's files, an agent's configuration) must
// be the session's, as HOME is. Owner says whose a directory is; MkdirAll
// and Chown give what wfb made to that owner.
package owned

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Owner is dir's owner as a credential when it is not wfb's own user
// (a root wfb's session uid), else nil.
func Owner(dir string) (*syscall.Credential, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return nil, nil
	}
	return &syscall.Credential{Uid: st.Uid, Gid: st.Gid}, nil
}

// MkdirAll makes root/rel's missing directories, 0700, given to owner.
func MkdirAll(root, rel string, owner *syscall.Credential) error {
	if rel == "." || rel == "" {
		return nil
	}
	cur := root
	for _, c := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return fmt.Errorf("%s is not a directory", cur)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(cur, 0o700); err != nil {
			return err
		}
		if err := Chown(cur, owner); err != nil {
			return err
		}
	}
	return nil
}

// Chown gives path, and everything below it, to owner (nil: nothing
// to do). Symlinks are changed themselves, never followed.
func Chown(path string, owner *syscall.Credential) error {
	if owner == nil {
		return nil
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(owner.Uid), int(owner.Gid))
	})
}
