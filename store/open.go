package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	sqlite3 "modernc.org/sqlite/lib"
)

// createParams open the temporary file a new results file is built in (see
// create). Its journal is the rollback journal, not WAL: a commit is then
// wholly in the file itself, which is what gets linked into place; the
// writer's own open switches it to WAL.
var createParams = []string{
	"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
	"_pragma=foreign_keys(1)",
	"_txlock=immediate",
}

// immutableParams open a file SQLite cannot lock or keep a -shm beside:
// immutable=1 tells it the file cannot change, so it reads without either.
var immutableParams = []string{
	"mode=ro",
	"immutable=1",
	"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
	"_pragma=query_only(1)",
}

// linkFile is os.Link; a test swaps it to make putting the new file in
// place fail as a full disk does (ENOSPC), which no file system a test can
// mount provokes at that step: tmpfs and ext4 need no block for a link.
var linkFile = os.Link

// create makes a new results file at path with its whole schema. The schema
// is built in a temporary file beside path, which is then hard-linked to
// path: a reader finds either no file or the complete one, never an empty
// or half-migrated file, and a writer killed (or a disk that fills) at any
// step leaves no file at path. When another process creates path first,
// the link fails and its file is used. On a file system without hard links
// (inPlace), path is left absent and the caller creates it in place (see
// makeEmpty).
func create(ctx context.Context, path string) (inPlace bool, err error) {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+NewID("creating"))
	defer removeWithSidecars(tmp)
	d, err := openAndMigrate(ctx, path, tmp, createParams, false)
	if err != nil {
		return false, err
	}
	if err := d.Close(); err != nil {
		return false, fmt.Errorf("open results %s: %w", path, err)
	}
	switch err := linkFile(tmp, path); {
	case err == nil, errors.Is(err, fs.ErrExist):
		return false, nil
	case noHardLinks(err):
		return true, nil
	default:
		// ENOSPC, EDQUOT, EIO, EROFS: in place would fail the same way,
		// after leaving an empty file there.
		return false, fmt.Errorf("open results %s: put the new file in place: %w", path, err)
	}
}

// noHardLinks says whether a link failed because the file system has no
// hard links (vfat, some FUSE and network file systems) or none to spare.
func noHardLinks(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOTSUP, syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EMLINK, syscall.EXDEV} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// makeEmpty makes an empty file at path, where no hard link can put a
// finished one there (see create), and returns it; the writer's open then
// migrates it in place, the migrations' single transaction still keeping a
// reader from seeing a part of the schema. When another process makes
// path first, its file is used as it is (nil).
func makeEmpty(path string) (os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	made, err := f.Stat()
	f.Close()
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	return made, nil
}

// removeMade removes the file makeEmpty made, should opening it fail (a
// full disk), so no empty or half-made file stays at path; nothing when it
// is no longer the file at path.
func removeMade(path string, made os.FileInfo) {
	if made == nil {
		return
	}
	if now, err := os.Lstat(path); err == nil && os.SameFile(made, now) {
		removeWithSidecars(path)
	}
}

// removeWithSidecars removes a SQLite file and the journal, -wal and -shm
// files SQLite may have left beside it.
func removeWithSidecars(file string) {
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		os.Remove(file + suffix)
	}
}

// openReaderOrImmutable opens path read-only, falling back to an immutable
// open (reported as true) where the ordinary one cannot open the file: in
// WAL mode a reader needs a -shm beside the file, and in a read-only place
// none can be created or written (see noShm).
func openReaderOrImmutable(ctx context.Context, path string) (*sql.DB, bool, error) {
	sdb, err := openReader(path, readerParams)
	if err != nil {
		return nil, false, err
	}
	var n int
	err = sdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n)
	if !noShm(err) {
		// Other errors (not SQLite, damaged) are named by schemaVersion.
		return sdb, false, nil
	}
	sdb.Close()
	// An immutable open ignores the -wal: rows committed there but not yet
	// checkpointed into the file would silently be missing.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, false, fmt.Errorf("open results %s: SQLite cannot create the -shm it needs beside the file (a read-only mount or directory?), and %s-wal holds %d bytes of changes not yet in the file, which only such an open reads; copy the file with its -wal to a writable place",
			path, path, fi.Size())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("open results %s: %w", path, err)
	}
	sdb, err = openReader(path, immutableParams)
	if err != nil {
		return nil, false, err
	}
	return sdb, true, nil
}

// noShm says whether err is SQLite failing to open a WAL-mode file for want
// of a usable -shm: "unable to open database file" on a read-only mount
// (EROFS), SQLITE_READONLY_DIRECTORY in a directory the process may not
// write (EACCES), and SQLITE_READONLY_CANTINIT or _CANTLOCK for a -shm that
// exists but that it may not write.
func noShm(err error) bool {
	switch sqliteExtCode(err) {
	case sqlite3.SQLITE_READONLY_DIRECTORY, sqlite3.SQLITE_READONLY_CANTINIT, sqlite3.SQLITE_READONLY_CANTLOCK:
		return true
	}
	return sqliteCode(err) == sqlite3.SQLITE_CANTOPEN
}

// Immutable says the file was opened with SQLite's immutable flag because
// it lies where no -shm can be created (a read-only mount or directory):
// it is read without locks, as if nothing could change it meanwhile.
func (d *DB) Immutable() bool { return d.immutable }
