package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// SpecialFileError is a tree that cannot be copied: it holds something
// other than regular files, directories and symlinks (a fifo, a device, a
// socket), which a workspace copy has no honest way to reproduce.
type SpecialFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *SpecialFileError) Error() string {
	kind := "special file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		kind = "named pipe (fifo)"
	case t&fs.ModeSocket != 0:
		kind = "socket"
	case t&fs.ModeCharDevice != 0:
		kind = "character device"
	case t&fs.ModeDevice != 0:
		kind = "block device"
	}
	return fmt.Sprintf("%s is a %s; a workspace copy holds only regular files, directories and symlinks — remove it from the workspace", e.Path, kind)
}

// CopyTree copies the directory src to dst (which must not exist): regular
// files with their modes, directories, and symlinks as symlinks. Anything
// else (a fifo, a socket, a device) is a *SpecialFileError: a workspace
// holds files.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			// Set after creation: the umask must not strip bits.
			return os.Chmod(target, mode.Perm())
		case mode&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case mode.IsRegular():
			return CopyFile(p, target, mode.Perm())
		default:
			return &SpecialFileError{Path: p, Mode: mode}
		}
	})
}

// CopyFile copies a regular file to dst, which must not exist, with perm
// set explicitly (a restrictive umask cannot strip it).
func CopyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm)
}

// StageExecutable puts the executable src at dst for sessions to run: a
// hard link when src (its symlinks resolved) is a regular file on dst's
// file system that only root or wfb's own user can change (owned by one of
// them, no group or other write bit) and that anyone may read and execute —
// nothing to copy, and no session can change what it runs — else a copy,
// mode 0755 (CopyFile). The conditions are checked on the inode linked, so
// a src swapped meanwhile is never staged.
func StageExecutable(src, dst string) error {
	if real, err := filepath.EvalSymlinks(src); err == nil && os.Link(real, dst) == nil {
		if fi, err := os.Lstat(dst); err == nil && stageable(fi) {
			return nil
		}
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	return CopyFile(src, dst, 0o755)
}

// stageable says a file may be staged by a hard link (see StageExecutable).
func stageable(fi fs.FileInfo) bool {
	uid, _, ok := owner(fi)
	perm := fi.Mode().Perm()
	return ok && fi.Mode().IsRegular() && (uid == 0 || uid == os.Geteuid()) && perm&0o022 == 0 && perm&0o005 == 0o005
}

// ShareWithSession gives a tree wfb made for a session to the session's
// group when the session runs as another uid (cred non-nil): read (and
// search) for a review, which must read what it reviews and nothing more,
// and also write for a session that edits its workspace. The tree stays
// owned by wfb's user, because the sandbox refuses a review's workspace the
// session uid owns (an owner could chmod the boundary away).
func ShareWithSession(dir string, cred *syscall.Credential, write bool) error {
	if cred == nil {
		return nil
	}
	gid := int(cred.Gid)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, gid); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		add := fs.FileMode(0o040)
		switch {
		case info.IsDir() && write:
			add = 0o070
		case info.IsDir():
			add = 0o050
		case write:
			add = 0o060
		}
		return os.Chmod(p, info.Mode().Perm()|add|(info.Mode()&(fs.ModeSetgid|fs.ModeSticky)))
	})
}
