package runner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	"golang.org/x/sys/unix"
)

// runLockBase is where the run locks start in the results file: far past
// SQLite's own lock bytes (at 1 GiB) and past any real file's end. Locks
// beyond a file's end are allowed and never change the file.
const runLockBase = 1 << 44

// lockRun takes this process's exclusive hold on run id in the results file
// at dbPath: two processes resuming (or recording) the same run at once
// would each take the other's cells in flight for cells not yet run. The
// hold is a one-byte open-file-description lock on the results file
// itself, at an offset hashed from the run id. The kernel keys such locks
// by the file, not by the name it was opened through, so a symlink, a
// symlinked directory or a bind mount of the same file meets the same lock
// (a lock file named after the path did not: two resumes through two paths
// both went ahead). The kernel drops it when the process dies. OFD locks
// and SQLite's POSIX locks on other bytes of the file do not interact. A
// collision of two ids' offsets would only refuse, never let both through.
func lockRun(dbPath, id string) (*os.File, error) {
	f, err := os.OpenFile(dbPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("lock run %s: %w", id, err)
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: runLockBase + int64(h.Sum64()>>24), Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, &InputError{Problems: []string{fmt.Sprintf(
				"run %s is being recorded by another wfb process right now; wait for it to end (or stop it) before resuming", id)}}
		}
		return nil, fmt.Errorf("lock run %s: %w", id, err)
	}
	return f, nil
}
