package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/runner/bench"
)

// initDir returns a directory any uid can traverse (as root, sessions run
// unprivileged and must reach the workspace), removed after the test.
func initDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-init-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// treeOf reads every file under dir: its path relative to dir and its
// content.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The starter bench `wfb init` writes is the first thing a new user runs:
// it must run as it stands, offline, with every cell ok — and its verify
// command must really check the fix (it fails on the workspace as
// written), or every cell would pass whatever the agent did.
func TestInitWritesAStarterBenchThatRunsOfflineWithEveryCellOK(t *testing.T) {
	dir := filepath.Join(initDir(t), "starter") // created by init
	s, out, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"init", dir}, s); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	benchPath := filepath.Join(dir, "bench.yaml")
	for _, want := range []string{
		benchPath, filepath.Join(dir, "replies.yaml"), filepath.Join(dir, "workspace", "sum.sh"),
		"run " + benchPath + " --label first", " report ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
	if got, want := len(treeOf(t, dir)), 3; got != want {
		t.Errorf("init wrote %d files, want %d: %v", got, want, treeOf(t, dir))
	}

	b, err := bench.Load(benchPath, checkScript)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tasks) != 1 || len(b.Arms) != 2 || b.Tasks[0].Verify == "" {
		t.Fatalf("the starter bench has %d tasks, %d arms, verify %q; want one task with a verify command, two arms", len(b.Tasks), len(b.Arms), b.Tasks[0].Verify)
	}
	verify := exec.Command("/bin/sh", "-c", b.Tasks[0].Verify)
	verify.Dir = b.Tasks[0].Workspace.Dir
	if err := verify.Run(); err == nil {
		t.Errorf("verify %q passes on the unfixed workspace: it checks nothing", b.Tasks[0].Verify)
	}

	db := filepath.Join(t.TempDir(), "wfb.db")
	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", benchPath, "--db", db, "--sandbox", "host-unsafe", "--label", "first"}, s); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	_, rows := resultsOf(t, db)
	perArm := map[string]int{}
	for _, r := range rows {
		if !r.OK {
			t.Errorf("%s × %s #%d attempt %d: %s %s", r.Task, r.Arm, r.Rep, r.Attempt, r.ErrorKind, r.ErrorDetail)
		}
		perArm[r.Arm]++
	}
	want := map[string]int{"baseline": b.Runs, "candidate": b.Runs}
	if diff := cmp.Diff(want, perArm); diff != "" {
		t.Errorf("attempts per arm (-want +got):\n%s", diff)
	}
}

// init never overwrites: a second init into the same directory (whose
// bench the user may have edited) is refused with exit 2, naming the files,
// and changes nothing; so is an init where one file, or something that is
// not a directory, is in the way — and then nothing else is written
// either.
func TestInitRefusesWhatIsInTheWayAndWritesNothing(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) // run before the init under test
		named   []string                       // in the error, relative to dir
	}{
		{
			name: "a second init",
			prepare: func(t *testing.T, dir string) {
				s, _, errOut := testStreams("", nil)
				if code := run(context.Background(), []string{"init", dir}, s); code != exitOK {
					t.Fatalf("first init: exit %d\n%s", code, errOut)
				}
				if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte("# my own bench\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			named: []string{"bench.yaml", "replies.yaml", "workspace/sum.sh"},
		},
		{
			name: "one file in the way",
			prepare: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "replies.yaml"), []byte("default: {text: mine}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			named: []string{"replies.yaml"},
		},
		{
			name: "a file where the workspace directory goes",
			prepare: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "workspace"), []byte("not a directory\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			named: []string{"workspace"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := initDir(t)
			tt.prepare(t, dir)
			before := treeOf(t, dir)
			s, out, errOut := testStreams("", nil)
			if code := run(context.Background(), []string{"init", dir}, s); code != exitBadInput {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, name := range tt.named {
				if p := filepath.Join(dir, filepath.FromSlash(name)); !strings.Contains(errOut.String(), p) {
					t.Errorf("stderr does not name %s:\n%s", p, errOut)
				}
			}
			if diff := cmp.Diff(before, treeOf(t, dir)); diff != "" {
				t.Errorf("a refused init changed the directory (-before +after):\n%s", diff)
			}
			if out.Len() != 0 {
				t.Errorf("a refused init printed on stdout:\n%s", out)
			}
		})
	}
}

// DIR is a directory: a file there is named, and left as it is.
func TestInitRefusesAFileAsItsDirectory(t *testing.T) {
	file := filepath.Join(initDir(t), "bench")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"init", file}, s); code != exitBadInput || !strings.Contains(errOut.String(), file) {
		t.Fatalf("exit %d, want 2 naming %s\n%s", code, file, errOut)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "mine\n" {
		t.Errorf("the file in the way now reads %q, %v", data, err)
	}
}
