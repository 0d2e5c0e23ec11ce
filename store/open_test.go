package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
)

// TestAReaderNeverSeesAHalfCreatedSchema stops a report run while another
// process creates the results file from answering "schema version 0" or
// "run any write command to upgrade it": the file appears with its whole
// schema or not at all. The writer is a second process (this test binary
// re-executed), creating one file after another while this one reads each.
func TestAReaderNeverSeesAHalfCreatedSchema(t *testing.T) {
	dir := t.TempDir()
	const files = 30
	paths := make([]string, files)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("r%02d.db", i))
	}
	writer := exec.Command(os.Args[0], paths...)
	writer.Env = append(os.Environ(), helperEnv+"=create")
	var stderr bytes.Buffer
	writer.Stderr = &stderr
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- writer.Wait() }()

	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var seen []string
	for _, p := range paths {
		for {
			d, err := OpenReadOnly(ctx, p)
			if err == nil {
				d.Close()
				break
			}
			if !errors.Is(err, ErrNoSuchFile) {
				seen = append(seen, err.Error())
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never appeared (writer: %s)", p, stderr.String())
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("writer: %v: %s", err, stderr.String())
	}
	if len(seen) > 0 {
		t.Errorf("a reader saw %d of %d files half-created; first: %s", len(seen), files, seen[0])
	}
	// Nothing of the creation is left beside the files.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".db") && !strings.HasSuffix(e.Name(), ".db-wal") && !strings.HasSuffix(e.Name(), ".db-shm") {
			t.Errorf("left in the directory: %s", e.Name())
		}
	}
}

// TestAnEmptyFileSaysItMayBeBeingCreated stops the message for a file with
// no schema from sending the user to upgrade a file a writer is creating
// right now: it names both cases, and stays ErrSchemaTooOld.
func TestAnEmptyFileSaysItMayBeBeingCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenReadOnly(context.Background(), path)
	if !errors.Is(err, ErrSchemaTooOld) || !strings.Contains(err.Error(), "creating it right now") {
		t.Errorf("error %v: want ErrSchemaTooOld saying the file may be being created", err)
	}
}

// traversableDir is a fresh directory every uid can reach (t.TempDir's
// parents are private to the test's uid), removed after the test.
func traversableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o755)
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readOnlyFixture writes a results file with two attempts in a directory of
// its own (see traversableDir), closed cleanly: no -wal and no -shm beside
// it. It returns the directory and the file.
func readOnlyFixture(t *testing.T) (string, string) {
	t.Helper()
	dir := traversableDir(t)
	path := filepath.Join(dir, "wfb.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateRun(context.Background(), Run{ID: "run-1", Kind: "run", StartedAt: t0, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"att-1", "att-2"} {
		r := okResult(id)
		r.Arm = id
		if err := d.InsertResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Fatalf("%s%s left after a clean close", path, suffix)
		}
	}
	return dir, path
}

// readAtReadOnlyLocation runs the "read" helper (this test binary) on path,
// where dir is really read-only to it: as root, dir is bind-mounted
// read-only in a private mount namespace (root ignores mode bits), or,
// where namespaces are not allowed, the reader runs as uid 65534, which
// cannot write dir; as anyone else, dir is made 0555.
func readAtReadOnlyLocation(t *testing.T, dir, path string) (string, error) {
	t.Helper()
	return atReadOnlyLocation(t, "read", dir, path)
}

// atReadOnlyLocation runs this test binary as the helper named (see
// TestMain) on path, with dir read-only to it: under a private read-only
// bind mount as root (else as uid 65534), with dir's write bits cleared
// otherwise.
func atReadOnlyLocation(t *testing.T, helper, dir, path string) (string, error) {
	t.Helper()
	env := append(os.Environ(), helperEnv+"="+helper)
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], path)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Exit 98: no read-only bind mount here; 99: the mount is not read-only.
	script := `mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 98
touch "$1/.probe" 2>/dev/null && exit 99
shift; exec "$@"`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", dir, os.Args[0], path)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exit) && exit.ExitCode() == helperFailed:
		return string(out), err
	case errors.As(err, &exit) && exit.ExitCode() == 99:
		t.Fatalf("%s is writable under a read-only bind mount", dir)
	}
	t.Logf("no private read-only bind mount (%v: %s); reading as uid 65534 instead", err, out)
	cmd = exec.Command(os.Args[0], path)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err = cmd.CombinedOutput()
	return string(out), err
}

// TestAFileOnAReadOnlyLocationIsReadImmutable stops reports from failing
// with "unable to open database file" on a results file in a read-only
// mount or directory (WAL mode needs a -shm beside the file, which cannot
// be created there): the reader falls back to SQLite's immutable open and
// says so (DB.Immutable).
func TestAFileOnAReadOnlyLocationIsReadImmutable(t *testing.T) {
	dir, path := readOnlyFixture(t)
	out, err := readAtReadOnlyLocation(t, dir, path)
	if err != nil || strings.TrimSpace(out) != "immutable=true results=2" {
		t.Errorf("reading %s at a read-only location: %v, output %q; want immutable=true results=2", path, err, out)
	}
	// The same file where the -shm can be made is read the ordinary way.
	os.Chmod(dir, 0o755)
	d, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Immutable() {
		t.Error("a file in a writable directory was opened immutable")
	}
}

// TestAnUncheckpointedFileOnAReadOnlyLocationIsRefused stops the immutable
// fallback from silently dropping the rows still in a -wal it cannot read:
// such a file is refused, saying why.
func TestAnUncheckpointedFileOnAReadOnlyLocationIsRefused(t *testing.T) {
	_, path := readOnlyFixture(t)
	// A -wal with committed content and no -shm: what a copy taken while a
	// writer had the file open looks like.
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := okResult("att-3")
	r.Arm = "att-3"
	if err := d.InsertResult(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	copyDir := traversableDir(t)
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" && len(b) == 0 {
			t.Fatal("the writer's -wal is empty: no committed content to lose")
		}
		if err := os.WriteFile(filepath.Join(copyDir, "wfb.db"+suffix), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := readAtReadOnlyLocation(t, copyDir, filepath.Join(copyDir, "wfb.db"))
	if err == nil || !strings.Contains(out, "-wal") || strings.Contains(out, "immutable=true") {
		t.Errorf("reading an uncheckpointed copy at a read-only location: %v, output %q; want a refusal naming the -wal", err, out)
	}
}

// TestADamagedFileIsErrCorrupt stops a truncated or overwritten results
// file from being reported as an internal failure: it is ErrCorrupt, the
// user's file to fix (exit 2 in cmd/wfb), whether the damage is found at
// open or by a later query.
func TestADamagedFileIsErrCorrupt(t *testing.T) {
	ctx := context.Background()
	_, path := readOnlyFixture(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, good[:5000], 0o644); err != nil {
		t.Fatal(err)
	}
	overwritten := filepath.Join(dir, "overwritten.db")
	bad := bytes.Clone(good)
	// Every page after the schema's is garbage: the results table's pages.
	for i := 4096 * 2; i < len(bad); i++ {
		bad[i] = 0xa5
	}
	if err := os.WriteFile(overwritten, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{truncated, overwritten} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			d, err := OpenReadOnly(ctx, p)
			if err == nil {
				defer d.Close()
				_, _, err = d.Query(ctx, `SELECT * FROM results_v`)
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestSwitchingTheJournalModeIsARefusedWrite stops `wfb sql "PRAGMA
// journal_mode=DELETE"` from failing as a "disk I/O error": changing the
// file's journal mode is a write, refused as one (ErrReadOnly).
func TestSwitchingTheJournalModeIsARefusedWrite(t *testing.T) {
	ctx := context.Background()
	_, path := newDB(t)
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, q := range []string{`PRAGMA journal_mode=DELETE`, `PRAGMA main.journal_mode = truncate`, `PRAGMA locking_mode=EXCLUSIVE`} {
		if _, _, err := ro.Query(ctx, q); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: error %v, want ErrReadOnly", q, err)
		}
	}
	// Reading the mode is still a query.
	if _, rows, err := ro.Query(ctx, `PRAGMA journal_mode`); err != nil || len(rows) != 1 || rows[0][0] != "wal" {
		t.Errorf("PRAGMA journal_mode: %v, %v; want wal", rows, err)
	}
}

// smallTmpfs mounts a tmpfs of size (mount's size= syntax) for the test and
// returns it: a disk that really fills. It needs root; elsewhere the test
// skips, and fails under CI=true.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and a tmpfs cannot be mounted here: %v", err)
		}
		t.Skipf("a full disk is a small tmpfs, which takes root to mount (CI=true makes this a failure): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// TestAFailedCreateLeavesNoResultsFile stops a full disk (or any failure)
// at any step of creating a results file from leaving a file at its path —
// least of all an empty one, which every later command would then refuse:
// the schema built in a temporary file that fills the disk, the link that
// puts it in place failing, and, where there are no hard links, the file
// made in place filling the disk. Nothing else is left beside it either.
// Where there is room, a file system without hard links still gets its file.
func TestAFailedCreateLeavesNoResultsFile(t *testing.T) {
	cases := []struct {
		name, size string
		link       error // what putting the file in place fails with; nil: it works
		wantErr    string
	}{
		{"the disk fills while the schema is built", "64k", nil, "disk is full"},
		{"the disk is full when the file is put in place", "1m", syscall.ENOSPC, "no space left on device"},
		// 192k holds the schema built with a rollback journal (172 KiB and
		// a small journal), not the same in place in WAL mode (the file,
		// a -wal as large, the 32 KiB -shm): from 176k to 208k it does
		// (migration 0012's rebuild of requests and exchanges moved the
		// window up from 144k-168k).
		{"no hard links, and the disk fills in place", "192k", syscall.EPERM, "disk is full"},
		{"no hard links, and room enough", "1m", syscall.EPERM, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := smallTmpfs(t, c.size)
			linked := false
			if c.link != nil {
				linkFile = func(string, string) error {
					linked = true
					return &os.LinkError{Op: "link", Err: c.link}
				}
				t.Cleanup(func() { linkFile = os.Link })
			}
			path := filepath.Join(dir, "wfb.db")
			d, err := Open(context.Background(), path)
			entries, _ := os.ReadDir(dir)
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				d.Close()
				r, err := OpenReadOnly(context.Background(), path)
				if err != nil {
					t.Fatalf("the file made in place: %v", err)
				}
				r.Close()
				return
			}
			if err == nil {
				d.Close()
				t.Fatalf("Open succeeded on a full disk (left %v)", left)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("err = %v, want it to say %q", err, c.wantErr)
			}
			if c.link != nil && !linked {
				t.Errorf("the schema did not fit in the temporary file, so the step this case is about never ran: %v", err)
			}
			if len(left) != 0 {
				t.Errorf("a failed create left %v in %s, want nothing", left, dir)
			}
		})
	}
}
