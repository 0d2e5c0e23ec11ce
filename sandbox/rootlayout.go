package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/wfbench/wfb/internal/scratch"
)

// noFollow makes an open fail on a symlink.
const noFollow = syscall.O_NOFOLLOW

// owner is a file's uid and gid.
func owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// maxDelivered bounds one artifact wfb copies out of the private root.
const maxDelivered = 64 << 20

// appliedMode is the mode an entry of the original gets back from its copy
// (cur): the original's, with the executable bit as the session left it —
// the one part of a mode a change to a checkout carries (as in git). The
// copy's other bits say only how it was shared with the session's group.
func appliedMode(orig, cur fs.FileMode) fs.FileMode {
	o := orig.Perm()
	switch {
	case orig.IsDir():
	case cur&0o111 != 0 && o&0o111 == 0:
		return o | (o&0o444)>>2
	case cur&0o111 == 0 && o&0o111 != 0:
		return o &^ 0o111
	}
	return o
}

// reachAsRoot makes the common container layouts of a root wfb work with
// the same guarantees, where the session uid cannot use them as they are:
//
//   - a workspace it cannot reach (under root's 0700 home), or, for a
//     session that edits it, cannot write (a root-owned checkout), is
//     copied to a directory of wfb's beside the private root; a review
//     reads the copy (the original is out of its reach altogether), an
//     editing session edits the copy and ApplyEdits brings its changes back;
//   - a given artifact dir it cannot write (root's) is replaced by one in
//     the private root, and DeliverArtifacts copies what the session wrote
//     there out to it.
//
// bubblewrap 0.8.0's --ro-bind-fd, which would bind a directory wfb opened,
// fails as the unprivileged session uid ("Can't find source path
// /proc/self/fd/N: Permission denied"), hence the copy. A non-empty string
// is a refusal reason.
func (s *Sandbox) reachAsRoot(ctx context.Context, opts Options, l *layout) (string, error) {
	if s.cred == nil {
		return "", nil
	}
	// All of preflight's checks in one probe: in the common case they pass
	// and preflight runs no other.
	first, err := probe(ctx, s.cred, s.checks(l.agentExists, opts.ArtifactDir != ""), l.workspace)
	if err != nil {
		return "", err
	}
	if first.ok() {
		s.proven = true
		return "", nil
	}
	if first.failed >= 0 && first.failed < len(s.workspaceChecks()) {
		if reason, err := s.copyWorkspace(l, first.reason); err != nil || reason != "" {
			return reason, err
		}
	}
	if opts.ArtifactDir == "" || l.createArtifactDir {
		return "", nil
	}
	r, err := probe(ctx, s.cred, s.artifactChecks(true), "")
	if err != nil || r.ok() {
		return "", err
	}
	s.deliverTo = s.artifactDir
	s.artifactDir = filepath.Join(s.root, "artifacts")
	if err := os.Mkdir(s.artifactDir, 0o700); err != nil {
		return "", fmt.Errorf("create the private artifact dir: %w", err)
	}
	return "", s.handOver(s.artifactDir)
}

// copyWorkspace copies the workspace the session uid cannot use as it is
// (blocked says why; see reachAsRoot). The copy keeps the modes of a
// review's tree (a file the session may not read stays so, and preflight
// says so); an editing session's copy is shared with the session's group,
// read and write.
func (s *Sandbox) copyWorkspace(l *layout, blocked string) (string, error) {
	copyDir, err := scratch.New("", CopyPrefix)
	if err != nil {
		return "", fmt.Errorf("create the workspace copy: %w", err)
	}
	s.copyDir = copyDir
	dir := copyDir.Path
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the workspace copy: %w", err)
	}
	cp := filepath.Join(dir, filepath.Base(s.workspace))
	var special *SpecialFileError
	err = CopyTree(s.workspace, cp)
	switch {
	case errors.As(err, &special):
		return fmt.Sprintf("%s, so wfb copies the workspace for the session, and %v", blocked, special), nil
	case err != nil:
		return "", fmt.Errorf("copy the workspace %s: %w", s.workspace, err)
	}
	if s.writable {
		if err := ShareWithSession(cp, s.cred, true); err != nil {
			return "", fmt.Errorf("share the workspace copy with the session's group: %w", err)
		}
		if s.baseline, err = baselineOf(cp, s.workspace); err != nil {
			return "", err
		}
	}
	s.origin, s.workspace, l.workspace = s.workspace, cp, cp
	return "", nil
}

// baselineOf records, for each entry of the copy, its mode in the
// original.
func baselineOf(cp, orig string) (map[string]fs.FileMode, error) {
	base := map[string]fs.FileMode{}
	err := filepath.WalkDir(cp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(cp, p)
		if err != nil {
			return err
		}
		oi, err := os.Lstat(filepath.Join(orig, rel))
		if err != nil {
			return err
		}
		base[rel] = oi.Mode()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record the workspace copy: %w", err)
	}
	return base, nil
}

// Origin is the workspace the caller gave when the session works in a
// copy of it (see Workspace), else "".
func (s *Sandbox) Origin() string { return s.origin }

// ApplyEdits brings what an editing session changed in its copy of the
// workspace back to the original: new and changed files (the original's
// owner and mode kept, the session's mode changes applied to them), new
// directories and symlinks, and deletions. It does nothing unless the
// session edited a copy. Call it once the session's processes are gone.
func (s *Sandbox) ApplyEdits() error {
	if s.origin == "" || !s.writable {
		return nil
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(s.workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.workspace, p)
		if err != nil {
			return err
		}
		seen[rel] = true
		return s.applyEntry(rel)
	})
	if err != nil {
		return fmt.Errorf("apply the session's edits to %s: %w", s.origin, err)
	}
	var gone []string
	for rel := range s.baseline {
		if !seen[rel] {
			gone = append(gone, rel)
		}
	}
	// Deepest first, so a directory goes after what it held.
	sort.Slice(gone, func(i, j int) bool { return len(gone[i]) > len(gone[j]) })
	for _, rel := range gone {
		if err := os.RemoveAll(filepath.Join(s.origin, rel)); err != nil {
			return fmt.Errorf("apply the session's deletion of %s: %w", rel, err)
		}
	}
	return nil
}

// applyEntry brings one entry of the copy back to the original.
func (s *Sandbox) applyEntry(rel string) error {
	src, dst := filepath.Join(s.workspace, rel), filepath.Join(s.origin, rel)
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	mode := info.Mode().Perm()
	if orig, ok := s.baseline[rel]; ok && orig.Type() == info.Mode().Type() {
		mode = appliedMode(orig, info.Mode())
	}
	old, oerr := os.Lstat(dst)
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if t, err := os.Readlink(dst); err == nil && t == target {
			return nil
		}
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case info.IsDir():
		if oerr == nil && old.IsDir() {
			return os.Chmod(dst, mode|old.Mode()&(fs.ModeSetgid|fs.ModeSticky))
		}
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		return os.Chmod(dst, mode)
	case info.Mode().IsRegular():
		return applyFile(src, dst, mode, old, oerr)
	}
	return &SpecialFileError{Path: src, Mode: info.Mode()}
}

// applyFile writes src over dst (old is dst's Lstat) unless their bytes
// are the same already: a temp file beside dst, given dst's owner, renamed
// over it.
func applyFile(src, dst string, mode fs.FileMode, old fs.FileInfo, oerr error) error {
	if oerr == nil && old.Mode().IsRegular() {
		if same, err := sameBytes(src, dst); err != nil || same {
			if err == nil && old.Mode().Perm() != mode {
				err = os.Chmod(dst, mode)
			}
			return err
		}
	}
	tmp := dst + ".wfb-apply"
	_ = os.Remove(tmp)
	if err := CopyFile(src, tmp, mode); err != nil {
		return err
	}
	if oerr == nil {
		if uid, gid, ok := owner(old); ok {
			if err := os.Lchown(tmp, uid, gid); err != nil {
				os.Remove(tmp)
				return err
			}
		}
		if old.IsDir() {
			if err := os.RemoveAll(dst); err != nil {
				os.Remove(tmp)
				return err
			}
		}
	}
	return os.Rename(tmp, dst)
}

// sameBytes compares two regular files' contents.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aDone := ea == io.EOF || ea == io.ErrUnexpectedEOF
		bDone := eb == io.EOF || eb == io.ErrUnexpectedEOF
		switch {
		case ea != nil && !aDone:
			return false, ea
		case eb != nil && !bDone:
			return false, eb
		case aDone || bDone:
			return aDone && bDone, nil
		}
	}
}

// DeliverTo is the artifact dir the caller gave when the session writes
// its artifacts into a private one (see ArtifactDir) for wfb to copy out,
// else "".
func (s *Sandbox) DeliverTo() string { return s.deliverTo }

// DeliverArtifacts copies the regular files the session wrote into its
// private artifact dir out to the artifact dir the caller gave, when the
// session could not write that one itself (root's). Each lands by
// temp+rename; a symlink or anything but a regular file is left behind,
// and so is a file over 64 MiB (an error says so). Call it once the
// session's processes are gone.
func (s *Sandbox) DeliverArtifacts() error {
	if s.deliverTo == "" {
		return nil
	}
	des, err := os.ReadDir(s.artifactDir)
	if err != nil {
		return fmt.Errorf("read the private artifact dir: %w", err)
	}
	var errs []error
	for _, de := range des {
		if de.Type().IsRegular() {
			errs = append(errs, deliverFile(filepath.Join(s.artifactDir, de.Name()), filepath.Join(s.deliverTo, de.Name())))
		}
	}
	return errors.Join(errs...)
}

// deliverFile copies one artifact out, without following a symlink the
// session may have swapped in.
func deliverFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return fmt.Errorf("deliver %s: %w", filepath.Base(src), err)
	}
	defer in.Close()
	fi, err := in.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("deliver %s: %w", filepath.Base(src), err)
	case !fi.Mode().IsRegular():
		return nil
	case fi.Size() > maxDelivered:
		return fmt.Errorf("deliver %s: %d bytes, over the %d MiB an artifact may have; left in the private root", filepath.Base(src), fi.Size(), maxDelivered>>20)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".wfb-*")
	if err != nil {
		return fmt.Errorf("deliver %s: %w", filepath.Base(src), err)
	}
	_, err = io.Copy(tmp, io.LimitReader(in, maxDelivered))
	err = errors.Join(err, tmp.Chmod(0o644), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("deliver %s to %s: %w", filepath.Base(src), filepath.Dir(dst), err)
	}
	return nil
}
