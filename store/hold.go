package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrInUse says another wfb process holds what this one asked for: the
// run it would record, or the results file through another of its names.
// Nothing was written.
var ErrInUse = errors.New("in use by another wfb process")

// The locks of wfb on a results file are open-file-description (OFD) locks
// on bytes of the file itself, far past its end and past SQLite's own lock
// bytes (at 1 GiB); a lock beyond a file's end never changes the file. The
// kernel keys them by the file (its device and inode), not by the name it
// was opened through, so every name of one file meets them: a symlink, a
// hard link, a bind mount. It drops them when the process dies. SQLite's
// POSIX locks on other bytes do not interact with them.
//
// Three spans of 2^40 bytes each:
//
//   - runs: one byte per run id (hashed), held exclusively by the process
//     recording the run (see DB.HoldRun); an older wfb, which kept it in
//     runner, placed it the same way, so the two meet.
//   - writers' names and readers' names: one byte per name of the file
//     (see nameKey), held shared by every process writing (reading) the
//     file through that name. SQLite names its -wal and -shm after the name
//     a file is opened by, so two names are two write-ahead logs: a process
//     refuses to open the file while another holds a name other than its
//     own — a writer, while any other name is in use; a reader, while
//     another name is being written.
const (
	lockSpan       int64 = 1 << 40
	runLockBase    int64 = 1 << 44
	writerNameBase int64 = 1 << 45
	readerNameBase int64 = 1 << 46
)

// fileID is a file's identity: what every name of it shares.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) fileID {
	st := fi.Sys().(*syscall.Stat_t)
	return fileID{dev: uint64(st.Dev), ino: st.Ino}
}

// heldFile is this process's hold on one results file, shared by every DB
// it has open on the file: OFD locks of one descriptor never conflict with
// each other, so what its DBs hold among themselves is counted here. Its
// descriptors stay open until the last of those DBs is closed: closing any
// descriptor of a file drops the process's POSIX locks on it, SQLite's
// included.
type heldFile struct {
	id    fileID
	ro    *os.File // the names' locks
	rw    *os.File // the runs' locks (an exclusive lock needs a writable descriptor)
	users int
	names map[uint64]*nameUse
	runs  map[string]bool
	note  *holderNote // what this process holds, as others may read it; nil: writes nothing
}

type nameUse struct{ readers, writers int }

var held = struct {
	sync.Mutex
	files map[fileID]*heldFile
}{files: map[fileID]*heldFile{}}

// hold is one DB's share of its process's hold on the file.
type hold struct {
	f      *heldFile
	path   string // the name the DB was opened by
	name   uint64 // its nameKey
	writer bool
	runs   []string
}

// nameKey says which name of a file path is, as SQLite names the -wal and
// -shm beside it: SQLite resolves symlinks (of the file and of its
// directories), so the key is the directory the resolved path lies in —
// by identity, so a bind mount of that directory is the same — and the
// file's name there.
func nameKey(path string) (key uint64, dir string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return 0, "", err
	}
	dir = filepath.Dir(resolved)
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, "", err
	}
	id := idOf(fi)
	h := fnv.New64a()
	binary.Write(h, binary.LittleEndian, [2]uint64{id.dev, id.ino})
	h.Write([]byte(filepath.Base(resolved)))
	return h.Sum64(), dir, nil
}

// slot is the offset of a hashed key within a span.
func slot(base int64, key uint64) int64 { return base + int64(key>>24) }

// holdFile takes a DB's hold on the file at path before SQLite opens it:
// the name it is opened by, as a writer or a reader. It refuses with
// ErrInUse a writer while the file is open through another name in any
// wfb process, and a reader while it is written through another name.
func holdFile(path string, writer bool) (*hold, error) {
	name, dir, err := nameKey(path)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	id := idOf(fi)
	held.Lock()
	defer held.Unlock()
	f := held.files[id]
	if f == nil {
		ro, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open results %s: %w", path, err)
		}
		if fi, err := ro.Stat(); err != nil || idOf(fi) != id {
			ro.Close()
			return nil, fmt.Errorf("open results %s: the file was replaced while it was being opened", path)
		}
		f = &heldFile{id: id, ro: ro, names: map[uint64]*nameUse{}, runs: map[string]bool{}}
		held.files[id] = f
	}
	f.users++
	h := &hold{f: f, path: path, name: name, writer: writer}
	if err := f.takeName(h, dir); err != nil {
		f.release()
		return nil, err
	}
	return h, nil
}

// takeName takes h's name lock and checks no other name is in use where h
// may not share the file with it.
func (f *heldFile) takeName(h *hold, dir string) error {
	base, other := readerNameBase, []int64{writerNameBase}
	if h.writer {
		base, other = writerNameBase, []int64{writerNameBase, readerNameBase}
	}
	for k, u := range f.names {
		if k != h.name && (u.writers > 0 || (h.writer && u.readers > 0)) {
			return f.busyName(h, dir, "this process")
		}
	}
	use := f.names[h.name]
	if use == nil {
		use = &nameUse{}
		f.names[h.name] = use
	}
	count := &use.readers
	if h.writer {
		count = &use.writers
	}
	if *count == 0 {
		lk := unix.Flock_t{Type: unix.F_RDLCK, Start: slot(base, h.name), Len: 1}
		if err := unix.FcntlFlock(f.ro.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			return fmt.Errorf("open results %s: lock: %w", h.path, err)
		}
	}
	*count++
	for _, b := range other {
		// The lock is taken before the others are looked for, and every
		// process does the same: of two names opened at once, at least
		// one sees the other.
		if busy, err := f.otherName(b, slot(b, h.name)); err != nil || busy {
			f.dropName(h)
			if err != nil {
				return fmt.Errorf("open results %s: lock: %w", h.path, err)
			}
			return f.busyName(h, dir, "")
		}
	}
	if h.writer {
		f.writeNote(h.path, dir, h.name)
	}
	return nil
}

// otherName says whether some other process holds a byte of the span at
// base other than the byte mine.
func (f *heldFile) otherName(base, mine int64) (bool, error) {
	for _, r := range [][2]int64{{base, mine - base}, {mine + 1, base + lockSpan - mine - 1}} {
		if r[1] <= 0 {
			continue
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Start: r[0], Len: r[1]}
		if err := unix.FcntlFlock(f.ro.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
			return false, err
		}
		if lk.Type != unix.F_UNLCK {
			return true, nil
		}
	}
	return false, nil
}

// dropName undoes h's share of its name's lock.
func (f *heldFile) dropName(h *hold) {
	use := f.names[h.name]
	base, count := readerNameBase, &use.readers
	if h.writer {
		base, count = writerNameBase, &use.writers
	}
	*count--
	if *count == 0 {
		lk := unix.Flock_t{Type: unix.F_UNLCK, Start: slot(base, h.name), Len: 1}
		unix.FcntlFlock(f.ro.Fd(), unix.F_OFD_SETLK, &lk)
	}
	if use.readers == 0 && use.writers == 0 {
		delete(f.names, h.name)
	}
}

// busyName is the refusal of h because another name of the file is in
// use; holder names the holder when it is known without reading notes.
func (f *heldFile) busyName(h *hold, dir, holder string) error {
	const other = "another name of this file (a hard link, or a bind mount of the file)"
	who, does, through := "another wfb process", "is writing it", other
	if h.writer {
		does = "has it open"
	}
	if holder != "" {
		who = holder
	} else if n := f.findNote(dir, func(n *holderNote) bool { return n.Name != h.name }); n != nil {
		who, does, through = n.describe(n.Since), "is writing it", n.Path+", "+other
	}
	return fmt.Errorf("open results %s: %s %s through %s; SQLite keeps a write-ahead log for each name, and writers through two names lose rows: use the same name, or wait for it to end: %w",
		h.path, who, does, through, ErrInUse)
}

// release gives up one DB's share of the file, closing its descriptors
// with the last.
func (f *heldFile) release() {
	f.users--
	if f.users > 0 {
		return
	}
	f.ro.Close()
	if f.rw != nil {
		f.rw.Close()
	}
	if f.note != nil {
		os.Remove(f.note.file)
	}
	delete(held.files, f.id)
}

// close gives up h: its runs, its name, its share of the file.
func (h *hold) close() {
	held.Lock()
	defer held.Unlock()
	for _, id := range h.runs {
		h.f.dropRun(id)
	}
	h.runs = nil
	h.f.dropName(h)
	if h.writer && h.f.note != nil && !h.f.writing() {
		os.Remove(h.f.note.file)
		h.f.note = nil
	}
	h.f.release()
}

// writing says whether a DB of this process writes the file.
func (f *heldFile) writing() bool {
	for _, u := range f.names {
		if u.writers > 0 {
			return true
		}
	}
	return false
}

// holdRun takes the run's lock for h: no other process (and no other DB of
// this one) records run id until h gives it up.
func (h *hold) holdRun(id string) error {
	held.Lock()
	defer held.Unlock()
	f := h.f
	if f.runs[id] {
		return fmt.Errorf("run %s is being recorded by this process already: %w", id, ErrInUse)
	}
	if f.rw == nil {
		rw, err := os.OpenFile(h.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("lock run %s: %w", id, err)
		}
		if fi, err := rw.Stat(); err != nil || idOf(fi) != f.id {
			// Not closed: this process's POSIX locks on the file it
			// names would go with it (see heldFile). Kept until release.
			return fmt.Errorf("lock run %s: %s was replaced by another file", id, h.path)
		}
		f.rw = rw
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Start: slot(runLockBase, runKey(id)), Len: 1}
	if err := unix.FcntlFlock(f.rw.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			return fmt.Errorf("lock run %s: %w", id, err)
		}
		holder := "another wfb process"
		_, dir, _ := nameKey(h.path)
		if n := f.findNote(dir, func(n *holderNote) bool { _, ok := n.Runs[id]; return ok }); n != nil {
			holder = n.describe(n.Runs[id])
		}
		return fmt.Errorf("run %s is being recorded by %s; wait for it to end (or stop it): %w", id, holder, ErrInUse)
	}
	f.runs[id] = true
	h.runs = append(h.runs, id)
	if f.note != nil {
		f.note.Runs[id] = nowText()
		f.note.write()
	}
	return nil
}

func runKey(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// dropRun gives up the run's lock.
func (f *heldFile) dropRun(id string) {
	if !f.runs[id] {
		return
	}
	delete(f.runs, id)
	lk := unix.Flock_t{Type: unix.F_UNLCK, Start: slot(runLockBase, runKey(id)), Len: 1}
	unix.FcntlFlock(f.rw.Fd(), unix.F_OFD_SETLK, &lk)
	if f.note != nil {
		delete(f.note.Runs, id)
		f.note.write()
	}
}

// HoldRun takes this process's hold on run id in the results file: two
// processes recording one run (a resume of a run still running, a rescore
// or a merge of it) would each take the other's cells in flight, and the
// second would set the status of a run it does not end. Another process
// holding it is refused with ErrInUse, naming its pid, command and since
// when where its note says (see holderNote). The hold lasts until
// ReleaseRun or Close; a process that dies drops it.
func (d *DB) HoldRun(id string) error {
	if d.hold == nil || !d.hold.writer {
		return fmt.Errorf("lock run %s in %s: %w", id, d.path, ErrReadOnly)
	}
	return d.hold.holdRun(id)
}

// ReleaseRun gives up a hold HoldRun took.
func (d *DB) ReleaseRun(id string) {
	if d.hold == nil {
		return
	}
	held.Lock()
	defer held.Unlock()
	if i := indexOf(d.hold.runs, id); i >= 0 {
		d.hold.runs = append(d.hold.runs[:i], d.hold.runs[i+1:]...)
		d.hold.f.dropRun(id)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// holderNote is what a writing process tells others about what it holds,
// in a small JSON file beside the results file (in the directory of its
// resolved name): `.wfb-holder-DEV-INO-PID.json`, keyed by the file's
// identity so every name of it in that directory finds it. An OFD lock
// cannot name its holder (F_OFD_GETLK reports pid -1), so the lock says
// whether a thing is held and the note only by whom. The note is written
// when the file is opened for writing and when a run is held or released,
// and removed when the process closes the file; one left by a killed
// process is ignored (its pid is gone, or is another process's now) and
// removed by the next writer. A holder writing through a name in another
// directory, in another pid namespace, or in a directory it may not write
// leaves no note that can be found: the refusal then says only "another wfb
// process".
type holderNote struct {
	PID     int               `json:"pid"`
	Command string            `json:"command"`
	Since   string            `json:"since"`
	Path    string            `json:"path"`
	Runs    map[string]string `json:"runs"`
	PIDNS   string            `json:"pid_ns"`
	Start   string            `json:"start"`
	Name    uint64            `json:"name"` // the nameKey of Path

	file string
}

// noteGlob is the pattern of the notes of file id in dir.
func noteGlob(dir string, id fileID) string {
	return filepath.Join(dir, fmt.Sprintf(".wfb-holder-%d-%d-*.json", id.dev, id.ino))
}

// writeNote starts this process's note on the file, once; it writes what
// it can and otherwise nothing.
func (f *heldFile) writeNote(path, dir string, name uint64) {
	if f.note != nil {
		return
	}
	abs, _ := filepath.Abs(path)
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	pid := os.Getpid()
	f.note = &holderNote{
		PID: pid, Command: commandLine(), Since: nowText(), Path: abs, Runs: map[string]string{},
		PIDNS: pidNamespace(), Start: processStart(pid), Name: name,
		file: filepath.Join(dir, fmt.Sprintf(".wfb-holder-%d-%d-%d.json", f.id.dev, f.id.ino, pid)),
	}
	// Notes of processes that are gone are of no use to anyone.
	f.findNote(dir, func(*holderNote) bool { return false })
	f.note.write()
}

// write puts the note in place whole (temp + rename).
func (n *holderNote) write() {
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	tmp := n.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return
	}
	if os.Rename(tmp, n.file) != nil {
		os.Remove(tmp)
	}
}

// findNote returns the first note of another live process on the file in
// dir that match accepts, removing the notes of processes that are gone.
func (f *heldFile) findNote(dir string, match func(*holderNote) bool) *holderNote {
	files, _ := filepath.Glob(noteGlob(dir, f.id))
	var found *holderNote
	for _, file := range files {
		n, err := readNote(file)
		if err != nil || n.PID == os.Getpid() {
			continue
		}
		if n.gone() {
			os.Remove(file)
			continue
		}
		if found == nil && match(n) {
			found = n
		}
	}
	return found
}

// gone says whether the note's process has ended: only a process of this
// pid namespace can be looked up.
func (n *holderNote) gone() bool {
	if n.PIDNS == "" || n.PIDNS != pidNamespace() {
		return false
	}
	return processStart(n.PID) != n.Start
}

// describe names the holder for a refusal.
func (n *holderNote) describe(since string) string {
	cmd := n.Command
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return fmt.Sprintf("pid %d (%s), since %s", n.PID, cmd, since)
}

func readNote(file string) (*holderNote, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	n := &holderNote{file: file}
	return n, json.Unmarshal(b, n)
}

func nowText() string { return formatTime(time.Now()) }

func commandLine() string { return strings.Join(os.Args, " ") }

func pidNamespace() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
}

// processStart is when process pid started (its start time in clock ticks
// after boot, field 22 of /proc/PID/stat), "" when there is no such
// process: a pid with another start time is another process.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
