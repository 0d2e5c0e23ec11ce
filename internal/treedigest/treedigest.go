package treedigest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Of fingerprints the tree under dir: for every entry, in lexical walk
// order, its path relative to dir, its type, its mode (permissions plus
// setuid, setgid and sticky), and its content (a file's sha256, a symlink's
// target). Symlinks are not followed; devices, FIFOs and sockets count by
// type and mode only (opening a FIFO would block). Owners and times are left
// out, so an identical copy elsewhere has the same digest. The runner takes
// it (sandbox.Digest) before and after a review session: a difference is
// workspace-modified; a bench takes it of an arm's kit directories.
func Of(dir string) (string, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("digest: %s is not a directory", dir)
	}
	h := sha256.New()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		mode := info.Mode()
		var kind, content []byte
		switch {
		case mode.IsRegular():
			kind = []byte("f")
			if content, err = fileSum(p); err != nil {
				return err
			}
		case mode.IsDir():
			kind = []byte("d")
		case mode&fs.ModeSymlink != 0:
			kind = []byte("l")
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			content = []byte(target)
		default:
			kind = []byte("o" + mode.Type().String())
		}
		field(h, []byte(filepath.ToSlash(rel)))
		field(h, kind)
		field(h, binary.BigEndian.AppendUint32(nil, unixMode(mode)))
		field(h, content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("digest %s: %w", dir, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// field writes b length-prefixed, so no two different trees can run
// together into the same byte stream.
func field(h hash.Hash, b []byte) {
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
	h.Write(b)
}

func fileSum(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= syscall.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= syscall.S_ISVTX
	}
	return u
}
