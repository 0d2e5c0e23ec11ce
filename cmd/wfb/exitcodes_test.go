package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// TestEveryPackageErrorHasItsExitCode stops bad input from exiting 1
// because a call site forgot to mark it: the packages' typed and sentinel
// errors, however deeply wrapped, map to their exit code in one table.
func TestEveryPackageErrorHasItsExitCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", err)) }
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"plain failure", errors.New("disk full"), exitFailed},
		{"not ok", errNotOK, exitFailed},
		{"interrupted", wrap(errInterrupted), exitInterrupted},
		{"cancelled", wrap(context.Canceled), exitInterrupted},
		{"flag", badInput("--format x"), exitBadInput},
		{"stand-in exit code", &exitCodeError{code: 3}, 3},
		{"no such results file", wrap(store.ErrNoSuchFile), exitBadInput},
		{"not a results file", wrap(store.ErrNotResultsFile), exitBadInput},
		{"damaged results file", wrap(store.ErrCorrupt), exitBadInput},
		{"newer schema", wrap(store.ErrSchemaTooNew), exitBadInput},
		{"older schema", wrap(store.ErrSchemaTooOld), exitBadInput},
		{"refused upgrade", wrap(store.ErrMigrationRefused), exitBadInput},
		{"read-only", wrap(store.ErrReadOnly), exitBadInput},
		{"bad query", wrap(store.ErrBadQuery), exitBadInput},
		{"merge conflict", wrap(&store.ConflictError{Columns: []string{"x"}}), exitBadInput},
		{"merge into itself", wrap(store.ErrMergeSelf), exitBadInput},
		{"invalid merge row", wrap(&store.InvalidRowError{}), exitBadInput},
		{"selection", wrap(report.ErrSelection), exitBadInput},
		{"sweep input", wrap(&runner.InputError{Problems: []string{"x"}}), exitBadInput},
		{"bench file", wrap(&bench.Error{}), exitBadInput},
		{"sandbox refused", wrap(&sandbox.RefusedError{Backend: "bwrap", Reason: "x"}), exitBadInput},
		{"mock script", wrap(&provider.ScriptError{}), exitBadInput},
		{"not loopback", wrap(provider.ErrNotLoopback), exitBadInput},
	}
	for _, tc := range tests {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// damagedCopies writes two damaged copies of a results file into dir: one
// cut short (found at open) and one whose results table's root page is
// overwritten (the open succeeds; the results query finds it). The page is
// found, not assumed: which pages come last moves with every migration.
func damagedCopies(t *testing.T, dir string) (truncated, overwritten string) {
	t.Helper()
	good := filepath.Join(dir, "good.db")
	shardFile(t, good, 0, "att-1", "att-2")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated, overwritten = filepath.Join(dir, "truncated.db"), filepath.Join(dir, "overwritten.db")
	if err := os.WriteFile(truncated, b[:5000], 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenReadOnly(context.Background(), good)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := db.Query(context.Background(), "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_schema WHERE type = 'table' AND name = 'results'")
	db.Close()
	if err != nil || len(rows) != 1 {
		t.Fatalf("the results table's root page: %v (%d rows)", err, len(rows))
	}
	root, size := rows[0][0].(int64), rows[0][1].(int64)
	bad := bytes.Clone(b)
	for i := (root - 1) * size; i < root*size; i++ {
		bad[i] = 0xa5
	}
	if err := os.WriteFile(overwritten, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return truncated, overwritten
}

// TestBadInputExitsTwoWhateverTheCommand stops the inconsistencies found on
// main: a truncated or overwritten results file exited 1 from the reports
// (a non-SQLite one exited 2); `wfb sql "PRAGMA journal_mode=DELETE"` said
// "disk I/O error", exit 1; `--runs 0` and `--workers 0` were silently
// taken for the bench's, and `--workers 100000` accepted where a bench
// file caps workers at 256. Bad input is 2, with a message naming it.
func TestBadInputExitsTwoWhateverTheCommand(t *testing.T) {
	dir := t.TempDir()
	truncated, overwritten := damagedCopies(t, dir)
	good := filepath.Join(dir, "good.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"report truncated", []string{"report", "--db", truncated}, "damaged"},
		{"runs truncated", []string{"runs", "--db", truncated}, "damaged"},
		{"export truncated", []string{"export", "--db", truncated, "nightly"}, "damaged"},
		{"diff truncated", []string{"diff", "--db", truncated, "a", "b"}, "damaged"},
		{"sql truncated", []string{"sql", "--db", truncated, "SELECT 1"}, "damaged"},
		{"report overwritten", []string{"report", "--db", overwritten}, "damaged"},
		{"runs overwritten", []string{"runs", "--db", overwritten}, "damaged"},
		{"sql overwritten", []string{"sql", "--db", overwritten, "SELECT * FROM results"}, "damaged"},
		{"journal mode", []string{"sql", "--db", good, "PRAGMA journal_mode=DELETE"}, "opened read-only; wfb sql cannot write"},
		{"runs 0", []string{"run", "bench.yaml", "--runs", "0"}, "--runs 0: want 1 to 10000"},
		{"runs too many", []string{"run", "bench.yaml", "--runs", "10001"}, "--runs 10001: want 1 to 10000"},
		{"workers 0", []string{"run", "bench.yaml", "--workers", "0"}, "--workers 0: want 1 to 256"},
		{"workers too many", []string{"run", "bench.yaml", "--workers", "100000"}, "--workers 100000: want 1 to 256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := wfbCmd(t, tc.args...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitBadInput, tc.want)
			}
		})
	}
}

// TestMergeCommandRefusesAnInvalidSourceAndCreatesNothing stops `wfb
// merge` from copying negative tokens or costs (exit 0 on main, "cost
// total -3.452" in the report): the source is refused with exit 2, naming
// the table, the id and the column, before the destination is created.
// A key in a source's text is redacted in the copy, and stderr says so.
func TestMergeCommandRefusesAnInvalidSourceAndCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "all.db")
	shardFile(t, src, 0, "att-1", "att-2")
	const key = "sk-ant-api03-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	raw, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DROP TRIGGER results_no_update`)
	exec(`UPDATE results SET input_tokens = -5, cost_usd = -3.452 WHERE attempt_id = 'att-2'`)
	exec(`CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`)
	_, errOut, code := wfbCmd(t, "merge", "--into", dst, src)
	if code != exitBadInput {
		t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
	}
	for _, want := range []string{src, "results attempt_id=att-2", "column input_tokens is -5"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not name %q", errOut, want)
		}
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge created %s (stat: %v)", dst, err)
	}

	exec(`DROP TRIGGER results_no_update`)
	exec(`UPDATE results SET input_tokens = 5, cost_usd = 0.5, error_detail = 'key ` + key + `' WHERE attempt_id = 'att-2'`)
	exec(`CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`)
	out, errOut, code := wfbCmd(t, "merge", "--into", dst, "--format", "tsv", src)
	if code != exitOK || !strings.Contains(errOut, "1 values of the rows copied looked like secrets and were redacted") {
		t.Errorf("merge of a source holding a key: exit %d, stderr %q; want 0 and a line saying it was redacted", code, errOut)
	}
	if strings.Contains(out+errOut, key) {
		t.Error("the key was printed")
	}
	out, _, _ = wfbCmd(t, "sql", "--db", dst, "--format", "tsv", "SELECT error_detail FROM results WHERE attempt_id = 'att-2'")
	if out != "error_detail\nkey [REDACTED]\n" {
		t.Errorf("merged error_detail: %q, want the key redacted", out)
	}
}

// TestReportsOnAReadOnlyLocationSaySoOnStderr stops `wfb runs` (and every
// report) from failing with "unable to open database file" on a results
// file in a read-only mount: it reads the file, and says in one stderr
// line that it read it immutable. The location is really read-only: as
// root, a read-only bind mount in a private mount namespace (or uid 65534
// where namespaces are not allowed); otherwise a 0555 directory. wfb is
// this test binary (see TestMain).
func TestReportsOnAReadOnlyLocationSaySoOnStderr(t *testing.T) {
	dir, err := os.MkdirTemp("", "wfb-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "wfb.db")
	shardFile(t, path, 0, "att-1", "att-2")
	args := []string{"runs", "--db", path, "--format", "tsv"}
	cmd := exec.Command(os.Args[0], args...)
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
	} else if exec.Command("unshare", "-m", "true").Run() == nil {
		script := `mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 98; shift; exec "$@"`
		cmd = exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", dir, os.Args[0]}, args...)...)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	cmd.Env = append(os.Environ(), asWfbEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wfb runs at a read-only location: %v, stderr %q", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "run-m\tnightly") {
		t.Errorf("stdout %q, want the run listed", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "read-only place") || !strings.Contains(lines[0], "immutable") {
		t.Errorf("stderr %q, want one line saying the file is read immutable", stderr.String())
	}
}
