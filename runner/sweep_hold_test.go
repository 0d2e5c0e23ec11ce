package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfbench/wfb/store"
)

// TestTheRunLockHoldsWhateverPathNamesTheFile stops two `wfb run --resume`
// of one run from both going ahead when one names the results file through
// a symlink (or a symlinked directory) and the other through its real
// path: they ran at once and wrote 61 rows for 32 cells. The lock belongs
// to the file, not to the name it was opened by. (In one process, as here,
// the store counts its holds itself; across processes the kernel's lock
// refuses: cmd/wfb's TestAResumeOfARunStillRecordingIsRefusedNamingItsHolder.)
func TestTheRunLockHoldsWhateverPathNamesTheFile(t *testing.T) {
	r := newBenchRig(t)
	r.file("ok.yaml", okScript)
	b := r.bench(`runs: 1
sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	sum, _ := r.sweep(context.Background(), r.opts(b))
	real := r.db.Path()
	links := t.TempDir()
	fileLink, dirLink := filepath.Join(links, "results.db"), filepath.Join(links, "dir")
	if err := os.Symlink(real, fileLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(real), dirLink); err != nil {
		t.Fatal(err)
	}

	o := r.opts(b)
	o.Resume = sum.RunID
	first, err := NewSweep(context.Background(), o)
	if err != nil {
		t.Fatalf("resume through the real path: %v", err)
	}
	defer first.Close()
	for _, p := range []string{fileLink, filepath.Join(dirLink, filepath.Base(real))} {
		db, err := store.Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		other := r.opts(b)
		other.DB, other.Resume = db, sum.RunID
		second, err := NewSweep(context.Background(), other)
		if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "is being recorded") {
			if second != nil {
				second.Close()
			}
			t.Errorf("a second resume through %s: %v, want refused as held (store.ErrInUse)", p, err)
		}
		db.Close()
	}
}
