package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/store"
)

// slowBench is a bench of 6 cells, one at a time, each answered after
// 300 ms: a run that records for about two seconds.
const slowBench = `runs: 6
workers: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`

const slowScript = `default:
  text: "done"
  delay_ms: 300
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// startWFB starts the real wfb with args; its stderr is returned to poll.
func startWFB(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	var stderr syncBuffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &stderr
}

// A fresh `wfb run` (no --run-id) holds its run from its first row to its
// last: a `--resume` of it while it records is refused at once, naming the
// holder, and the original ends complete. (The lock was keyed by the id on
// the command line, so a fresh run locked the empty id: the resume went
// ahead, ran the cells in flight again and marked the run aborted while it
// was still running.)
func TestAResumeOfARunStillRecordingIsRefusedNamingItsHolder(t *testing.T) {
	t.Parallel()
	slowPath(t, "a real wfb run and its resume at once")
	bin := buildWFB(t)
	bench, db := runFixture(t, slowScript, slowBench)
	first, firstErr := startWFB(t, bin, "run", bench, "--db", db)
	waitFor(t, "the run's first row", func() bool { return countRows(db) >= 1 })
	runs, _ := resultsOf(t, db)
	if len(runs) != 1 {
		t.Fatalf("runs %+v, want one", runs)
	}
	resume := exec.Command(bin, "run", bench, "--db", db, "--resume", runs[0].ID)
	out, _ := resume.CombinedOutput()
	if code := resume.ProcessState.ExitCode(); code != exitBadInput {
		t.Errorf("the resume of a run still recording: exit %d, want %d\n%s", code, exitBadInput, out)
	}
	for _, want := range []string{runs[0].ID, "pid " + strconv.Itoa(first.Process.Pid), "wfb run", "since "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not name %q:\n%s", want, out)
		}
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("the original run: %v\n%s", err, firstErr.String())
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunComplete || len(rows) != 6 {
		t.Errorf("after both: runs %+v, %d rows; want the one run complete with its 6 rows", runs, len(rows))
	}
	integrityOK(t, db)
}

// Two names of one results file never have two writers at once: each name
// SQLite opens gets its own -wal, so two `wfb run`s through a hard link (or
// a bind mount of the file) both ended 0 and, after the checkpoints, one
// complete run was gone while integrity_check said ok. The second writer
// through another name is refused before it opens the file, and so is a
// reader through another name; a reader through the writer's name reads.
// A symlink (and a bind mount of the directory) is the same name to SQLite
// — one -wal — so two runs through it both record.
func TestTwoNamesOfOneResultsFileNeverHaveTwoWriters(t *testing.T) {
	t.Parallel()
	slowPath(t, "real wfb runs through five names of one file")
	bin := buildWFB(t)
	cases := []struct {
		name    string
		other   func(t *testing.T, db string) string
		refused bool
	}{
		{"hard link", func(t *testing.T, db string) string {
			p := filepath.Join(filepath.Dir(db), "linked.db")
			if err := os.Link(db, p); err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
		{"hard link in another directory", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "linked.db")
			if err := os.Link(db, p); err != nil {
				t.Skipf("no hard link across these directories: %v", err)
			}
			return p
		}, true},
		{"bind mount of the file", func(t *testing.T, db string) string {
			return bindMount(t, db, filepath.Join(t.TempDir(), "mounted.db"))
		}, true},
		{"symlink", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "symlinked.db")
			if err := os.Symlink(db, p); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"bind mount of the directory", func(t *testing.T, db string) string {
			dir := bindMount(t, filepath.Dir(db), t.TempDir())
			return filepath.Join(dir, filepath.Base(db))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bench, db := runFixture(t, slowScript, slowBench)
			// The file exists before either name is made.
			if d, err := store.Open(context.Background(), db); err != nil {
				t.Fatal(err)
			} else {
				d.Close()
			}
			other := c.other(t, db)
			first, firstErr := startWFB(t, bin, "run", bench, "--db", db)
			waitFor(t, "the first run's first row", func() bool { return countRows(db) >= 1 })

			sameName := exec.Command(bin, "runs", "--db", db)
			if out, err := sameName.CombinedOutput(); err != nil {
				t.Errorf("a reader through the writer's name: %v\n%s", err, out)
			}
			reader := exec.Command(bin, "runs", "--db", other)
			readerOut, _ := reader.CombinedOutput()
			second := exec.Command(bin, "run", bench, "--db", other)
			secondOut, _ := second.CombinedOutput()
			if err := first.Wait(); err != nil {
				t.Fatalf("the first run: %v\n%s", err, firstErr.String())
			}

			runs, rows := resultsOf(t, db)
			if c.refused {
				if code := second.ProcessState.ExitCode(); code != exitBadInput {
					t.Errorf("a second writer through %s: exit %d, want %d\n%s", other, code, exitBadInput, secondOut)
				}
				if code := reader.ProcessState.ExitCode(); code != exitBadInput {
					t.Errorf("a reader through %s: exit %d, want %d\n%s", other, code, exitBadInput, readerOut)
				}
				for _, out := range []string{string(secondOut), string(readerOut)} {
					if !strings.Contains(out, "another name") {
						t.Errorf("the refusal does not say another name of the file is in use:\n%s", out)
					}
				}
			} else {
				if code := second.ProcessState.ExitCode(); code != 0 {
					t.Errorf("a second writer through %s: exit %d, want 0\n%s", other, code, secondOut)
				}
				if code := reader.ProcessState.ExitCode(); code != 0 {
					t.Errorf("a reader through %s: exit %d, want 0\n%s", other, code, readerOut)
				}
			}
			// Every run that ended 0 has its 6 rows, whichever name reads.
			wantRuns := 1
			if second.ProcessState.ExitCode() == 0 {
				wantRuns = 2
			}
			for _, name := range []string{db, other} {
				runs, rows = resultsOf(t, name)
				if len(runs) != wantRuns || len(rows) != 6*wantRuns {
					t.Errorf("through %s: %d runs, %d rows; want %d runs of 6 rows each", name, len(runs), len(rows), wantRuns)
				}
				for _, r := range runs {
					if r.Status != wfb.RunComplete {
						t.Errorf("run %s is %s, want complete", r.ID, r.Status)
					}
				}
			}
			integrityOK(t, db)
		})
	}
}

// bindMount bind-mounts src on dst (a file or a directory, made to match)
// for the test; it skips where mounting is not allowed (not root).
func bindMount(t *testing.T, src, dst string) string {
	t.Helper()
	gate.RequireRoot(t, "a bind mount needs root (mount --bind)")
	if fi, err := os.Stat(src); err == nil && !fi.IsDir() {
		if err := os.WriteFile(dst, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
		t.Skipf("mount --bind %s %s: %v %s", src, dst, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dst).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dst, err, out)
		}
	})
	return dst
}
