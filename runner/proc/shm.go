package proc

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Shared memory is memory a session holds that no process's resident set
// shows: a memfd or a /dev/shm file written with write(2), or a System V
// segment, takes the machine's memory while no page of it is mapped. Under a
// cgroup the kernel charges it to the session; without one, the limit watch
// counts it (sharedBytes), and what the session's uid leaves behind in
// /dev/shm and System V IPC is removed when the session ends
// (removeSessionIPC). Under bwrap /dev/shm is a capped tmpfs of the
// sandbox's own and System V IPC a namespace of its own, both gone with it.

// devShm is where POSIX shared memory lives.
const devShm = "/dev/shm"

// sharedBytes is the shared memory the session holds: the memfd and
// /dev/shm files its processes (pids) have open, and, when the session runs
// as a uid of its own (uid >= 0), the /dev/shm files and System V shared
// memory segments that uid owns. Each file counts once, by the blocks it
// takes.
func sharedBytes(pids []string, uid int) int64 {
	type fileID struct{ dev, ino uint64 }
	seen := map[fileID]bool{}
	var total int64
	add := func(st *syscall.Stat_t) {
		id := fileID{uint64(st.Dev), st.Ino}
		if !seen[id] {
			seen[id] = true
			total += st.Blocks * 512
		}
	}
	for _, pid := range pids {
		dir := "/proc/" + pid + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			target, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil || !(strings.HasPrefix(target, "/memfd:") || strings.HasPrefix(target, devShm+"/")) {
				continue
			}
			var st syscall.Stat_t
			if syscall.Stat(filepath.Join(dir, e.Name()), &st) == nil {
				add(&st)
			}
		}
	}
	if uid < 0 {
		return total
	}
	filepath.WalkDir(devShm, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) == nil && int(st.Uid) == uid {
			add(&st)
		}
		return nil
	})
	for _, seg := range sysvSegments(uid) {
		total += seg.size
	}
	return total
}

// sysvSegment is a System V shared memory segment.
type sysvSegment struct {
	id   int
	size int64
}

// sysvSegments lists the System V shared memory segments uid owns, from
// /proc/sysvipc/shm.
func sysvSegments(uid int) []sysvSegment {
	f, err := os.Open("/proc/sysvipc/shm")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []sysvSegment
	sc := bufio.NewScanner(f)
	col := map[string]int{}
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(col) == 0 {
			for i, name := range fields {
				col[name] = i
			}
			continue
		}
		get := func(name string) (int64, bool) {
			i, ok := col[name]
			if !ok || i >= len(fields) {
				return 0, false
			}
			v, err := strconv.ParseInt(fields[i], 10, 64)
			return v, err == nil
		}
		id, ok1 := get("shmid")
		size, ok2 := get("size")
		owner, ok3 := get("uid")
		if ok1 && ok2 && ok3 && int(owner) == uid {
			out = append(out, sysvSegment{id: int(id), size: size})
		}
	}
	return out
}

// removeSessionIPC removes what the session's uid left in /dev/shm and its
// System V shared memory segments, once no process of the session is left:
// a session's memory must not outlive it on the host. Only for a uid of the
// session's own — wfb's own uid's files are the user's.
func removeSessionIPC(uid int) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	filepath.WalkDir(devShm, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == devShm {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || int(st.Uid) != uid {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		keep(os.RemoveAll(p))
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	for _, seg := range sysvSegments(uid) {
		if _, err := unix.SysvShmCtl(seg.id, unix.IPC_RMID, nil); err != nil {
			keep(err)
		}
	}
	return firstErr
}
