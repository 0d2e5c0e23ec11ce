package runner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	"golang.org/x/sys/unix"
)

// lockRun takes this process's exclusive hold on run id in the results file
// at dbPath: two processes resuming (or recording) the same run at once
// would each take the other's cells in flight for cells not yet run. The
// hold is a one-byte open-file-description lock in one file beside the
// results file (like SQLite's -wal and -shm), at an offset hashed from the
// run id, so runs never leave a lock file each; the kernel drops it when the
// process dies. A collision of two ids' offsets would only refuse, never
// let both through.
func lockRun(dbPath, id string) (*os.File, error) {
	f, err := os.OpenFile(dbPath+"-wfb-runs.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock run %s: %w", id, err)
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(h.Sum64() >> 24), Len: 1}
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
