package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wfbench/wfb/internal/scratch"
)

// modeJournal is what a write boundary writes before it clears a single
// write bit: the original mode (and inode) of every path it will change.
// The file is locked (flock) for as long as the boundary is up, so a
// journal nobody holds locked is one a wfb killed mid-session left behind,
// and its modes are the ones to put back.
type modeJournal struct {
	Workspace string          `json:"workspace"`
	PID       int             `json:"pid"`
	Entries   []boundaryEntry `json:"entries"`
}

// journal is a mode journal in place and locked by this process.
type journal struct {
	path string
	f    *os.File
}

// journalDir is where mode journals are kept: $XDG_STATE_HOME/wfb/modes,
// else ~/.local/state/wfb/modes, else (no home, or one wfb cannot write: a
// bare container) a directory of this uid's own in the temp dir. It is per user, so root and
// an ordinary user each find their own, and each can restore what it
// changed. It is on disk, not in /run: the cleared modes outlive a reboot,
// so must the journal. It is not beside or in the workspace: the parent may
// not be writable, a file in the tree would change what a review digests
// (and the agent could reach it), and the next wfb must find the journals
// of every workspace without being told which.
func journalDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			base = filepath.Join(home, ".local", "state")
		}
	}
	if base == "" {
		return ownTempDir()
	}
	dir := filepath.Join(base, "wfb", "modes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// A read-only home (a container's): the temp dir, as with none.
		return ownTempDir()
	}
	return dir, nil
}

// ownTempDir is wfb-state-UID/modes in the temp dir, refused unless this
// uid owns it and nobody else may write it (the temp dir is everyone's).
func ownTempDir() (string, error) {
	top := filepath.Join(os.TempDir(), fmt.Sprintf("wfb-state-%d", os.Geteuid()))
	if err := os.Mkdir(top, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create the mode journal directory: %w", err)
	}
	fi, err := os.Lstat(top)
	if err != nil {
		return "", fmt.Errorf("mode journal directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("mode journal directory %s is not a directory of uid %d's own that only it may write; set XDG_STATE_HOME", top, os.Geteuid())
	}
	dir := filepath.Join(top, "modes")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create the mode journal directory: %w", err)
	}
	return dir, nil
}

// journalName is the file name of workspace's journal: one per workspace,
// so two boundaries on one tree cannot both be up.
func journalName(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return hex.EncodeToString(sum[:8]) + ".json"
}

// writeJournal puts the journal of entries for workspace in jdir, locked:
// written, synced and locked under a temporary name, then linked to its
// own, so no other wfb ever finds it unlocked or half written.
func writeJournal(jdir, workspace string, entries []boundaryEntry) (*journal, error) {
	data, err := json.Marshal(modeJournal{Workspace: workspace, PID: os.Getpid(), Entries: entries})
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(jdir, ".writing-*")
	if err != nil {
		return nil, fmt.Errorf("mode journal: %w", err)
	}
	defer os.Remove(f.Name())
	fail := func(err error) (*journal, error) {
		f.Close()
		return nil, fmt.Errorf("mode journal %s: %w", f.Name(), err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	path := filepath.Join(jdir, journalName(workspace))
	if err := os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
		f.Close()
		return nil, fmt.Errorf("another wfb holds a write boundary on %s (its mode journal %s is locked); run one review of a tree at a time under host-unsafe", workspace, path)
	} else if err != nil {
		return fail(err)
	}
	if err := syncDir(jdir); err != nil {
		os.Remove(path)
		return fail(err)
	}
	return &journal{path: path, f: f}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// remove deletes the journal, then lets its lock go: a wfb that takes the
// lock after finds the name gone (or another file) and leaves it.
func (j *journal) remove() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := os.Remove(j.path)
	j.f.Close()
	j.f = nil
	if err != nil {
		return fmt.Errorf("remove the mode journal: %w", err)
	}
	return nil
}

// RecoverWriteBoundaries restores the modes that a wfb killed while a
// write boundary was up left cleared, from every mode journal nobody holds
// locked, and removes those journals. It returns one line for each, saying
// what it did. Journals of live boundaries are left alone.
func RecoverWriteBoundaries() ([]string, error) {
	jdir, err := journalDir()
	if err != nil {
		return nil, err
	}
	return recoverJournals(jdir), nil
}

// recoverJournals is RecoverWriteBoundaries in jdir.
func recoverJournals(jdir string) []string {
	names, _ := filepath.Glob(filepath.Join(jdir, "*.json"))
	stale, _ := filepath.Glob(filepath.Join(jdir, ".writing-*"))
	var notes []string
	for _, p := range stale {
		// A journal never linked in place: nothing was changed after it.
		// A young one may be one being written, not yet locked.
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > time.Minute {
			withUnlocked(p, func(*os.File) { os.Remove(p) })
		}
	}
	for _, p := range names {
		withUnlocked(p, func(f *os.File) {
			notes = append(notes, recoverJournal(p, f))
		})
	}
	return notes
}

// withUnlocked runs fn with p open and locked if nobody else holds it and
// p still names the file locked.
func withUnlocked(p string, fn func(*os.File)) {
	if f := scratch.TryLock(p); f != nil {
		defer f.Close()
		fn(f)
	}
}

// recoverJournal restores the modes journal f (at p) holds and removes it,
// and says what it did.
func recoverJournal(p string, f *os.File) string {
	var mj modeJournal
	if err := json.NewDecoder(f).Decode(&mj); err != nil {
		return fmt.Sprintf("the mode journal %s cannot be read (%v); the modes it held were not restored; remove it once you have checked the tree", p, err)
	}
	restored, gone := 0, 0
	var problems []string
	for i := len(mj.Entries) - 1; i >= 0; i-- {
		e := mj.Entries[i]
		switch err := e.restore(); {
		case err == nil:
			restored++
		case errors.Is(err, fs.ErrNotExist):
			gone++
		default:
			problems = append(problems, err.Error())
		}
	}
	os.Remove(p)
	note := fmt.Sprintf("restored the original modes of %d paths under %s, which a wfb (pid %d) killed during a session left without write permission (journal %s)",
		restored, mj.Workspace, mj.PID, p)
	if gone > 0 {
		note += fmt.Sprintf("; %d paths are gone", gone)
	}
	if len(problems) > 0 {
		note += "; " + strings.Join(problems, "; ")
	}
	return note
}
