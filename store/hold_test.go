package store

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
)

// holder starts this test binary as another process that opens path for
// writing and holds the runs named until the test ends.
func holder(t *testing.T, path string, runs ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{path}, runs...)...)
	cmd.Env = append(os.Environ(), helperEnv+"=hold")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("the holder: %q", line)
	}
	return cmd
}

// A run another process records is refused to every other writer of it —
// HoldRun (a resume, a rescore) and a merge bringing rows of it — naming
// the holder's pid, and the merge writes nothing; other runs of the file
// and the file itself stay open to them. (A merge went ahead into a run
// still being recorded and combined its status under the recorder.)
func TestARunBeingRecordedIsRefusedToEveryOtherWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dst, src := filepath.Join(dir, "dst.db"), filepath.Join(dir, "src.db")
	writeFile(t, src, Run{ID: "run-busy", Kind: "run", StartedAt: t0, Status: wfb.RunComplete, Harness: "test"}, cells()[:2])
	d, err := Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.CreateRun(ctx, Run{ID: "run-busy", Kind: "run", StartedAt: t0, Status: wfb.RunRunning, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	h := holder(t, dst, "run-busy")
	pid := "pid " + strconv.Itoa(h.Process.Pid)

	err = d.HoldRun("run-busy")
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), pid) || !strings.Contains(err.Error(), "since ") {
		t.Errorf("HoldRun of a run another process records: %v; want ErrInUse naming %s and since when", err, pid)
	}
	_, err = MergeFiles(ctx, d, []string{src})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), pid) {
		t.Errorf("a merge bringing rows of it: %v; want ErrInUse naming %s", err, pid)
	}
	if _, rows, _ := d.Query(ctx, `SELECT count(*) FROM results`); rows[0][0] != int64(0) {
		t.Errorf("the refused merge wrote %v results rows", rows[0][0])
	}
	if err := d.HoldRun("run-other"); err != nil {
		t.Errorf("HoldRun of another run: %v", err)
	}
	d.ReleaseRun("run-other")
}

// A process uses one file through one name at a time: SQLite keeps a -wal
// per name, so a writer through a hard link beside a reader or writer
// through the first name would make a second log. A symlink resolves to the
// same name. Once the writer is closed, the other name may be used.
func TestOneFileIsWrittenThroughOneNameAtATime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "r.db")
	linked, symlinked := filepath.Join(dir, "linked.db"), filepath.Join(t.TempDir(), "symlinked.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, linked); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, symlinked); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func(context.Context, string) (*DB, error)
		path string
		ok   bool
	}{
		{"reader, same name", OpenReadOnly, path, true},
		{"writer, same name", Open, path, true},
		{"reader, symlink", OpenReadOnly, symlinked, true},
		{"writer, symlink", Open, symlinked, true},
		{"reader, hard link", OpenReadOnly, linked, false},
		{"writer, hard link", Open, linked, false},
	} {
		d, err := c.open(ctx, c.path)
		if c.ok != (err == nil) || (err != nil && (!errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "another name"))) {
			t.Errorf("%s: %v; want ok %v, else ErrInUse naming another name", c.name, err, c.ok)
		}
		if d != nil {
			d.Close()
		}
	}
	w.Close()
	// A reader through one name keeps a writer off the others: the
	// writer's checkpoints would change pages under it.
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Open(ctx, linked); !errors.Is(err, ErrInUse) {
		t.Errorf("a writer through the hard link while a reader uses the first name: %v; want ErrInUse", err)
		if d != nil {
			d.Close()
		}
	}
	r.Close()
	for _, open := range []func(context.Context, string) (*DB, error){Open, OpenReadOnly} {
		d, err := open(ctx, linked)
		if err != nil {
			t.Errorf("the hard link once the writer is closed: %v", err)
			continue
		}
		d.Close()
	}
}
