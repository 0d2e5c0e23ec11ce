package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/gate"
	"github.com/wfbench/wfb/store"
)

// requireSlurmEnv makes the Slurm tests a failure, not a skip, when sbatch
// is absent (.ci/run sets it once .ci/slurm/start.sh has started a
// single-node Slurm).
const requireSlurmEnv = "WFB_REQUIRE_SLURM"

// slurmBench is a 24-cell bench: 4 reps of 2 tasks × 3 arms.
const slurmBench = `runs: 4
workers: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws, prompt: q}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}, {id: c, agent: stand-in}]
`

// slurmBenchCells are slurmBench's cells as task/arm/rep.
func slurmBenchCells() []string {
	var cells []string
	for rep := range 4 {
		for _, task := range []string{"t1", "t2"} {
			for _, arm := range []string{"a", "b", "c"} {
				cells = append(cells, fmt.Sprintf("%s/%s/%d", task, arm, rep))
			}
		}
	}
	return cells
}

func cellOf(r store.Result) string { return fmt.Sprintf("%s/%s/%d", r.Task, r.Arm, r.Rep) }

// everyCellOnce checks a merged run: each of want has exactly one attempt
// that was not cancelled, and no other cell has any. Cancelled attempts (a
// shard stopped mid-cell, resumed later) are not results and may be
// there. The error names the missing, repeated and unplanned cells.
func everyCellOnce(want []string, rows []store.Result) error {
	n := map[string]int{}
	for _, r := range rows {
		if r.ErrorKind == wfb.KindCancelled {
			continue
		}
		n[cellOf(r)]++
	}
	var missing, repeated, unplanned []string
	for _, c := range want {
		switch n[c] {
		case 0:
			missing = append(missing, c)
		case 1:
		default:
			repeated = append(repeated, fmt.Sprintf("%s (%d times)", c, n[c]))
		}
		delete(n, c)
	}
	for c := range n {
		unplanned = append(unplanned, c)
	}
	slices.Sort(unplanned)
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("cells without a result: %s", strings.Join(missing, ", ")))
	}
	if len(repeated) > 0 {
		errs = append(errs, fmt.Errorf("cells with more than one result: %s", strings.Join(repeated, ", ")))
	}
	if len(unplanned) > 0 {
		errs = append(errs, fmt.Errorf("cells not in the bench: %s", strings.Join(unplanned, ", ")))
	}
	return errors.Join(errs...)
}

// slurmJobs runs this test binary as wfb in Slurm jobs; dir is where the
// jobs (root, on this host) and the test both read and write.
type slurmJobs struct {
	t     *testing.T
	self  string
	bench string
	dir   string
}

// needSlurm skips t without sbatch, or fails it when requireSlurmEnv=1.
func needSlurm(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sbatch"); err != nil {
		if os.Getenv(requireSlurmEnv) == "1" {
			t.Fatalf("sbatch not found on PATH and %s=1: install slurm-wlm and munge and run .ci/slurm/start.sh", requireSlurmEnv)
		}
		gate.Skipf(t, requireSlurmEnv, "sbatch not found on PATH: install slurm-wlm and munge and run .ci/slurm/start.sh (or set %s=1 to make this a failure)", requireSlurmEnv)
	}
}

func newSlurmJobs(t *testing.T, script string) *slurmJobs {
	t.Helper()
	bench, _ := runFixture(t, script, slurmBench)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wfb-slurm-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return &slurmJobs{t: t, self: self, bench: bench, dir: dir}
}

// script writes a job script that runs wfb run on the bench with args
// (shell words, expanded by the job's shell) and returns its path.
func (j *slurmJobs) script(name, args string) string {
	j.t.Helper()
	// This test binary is wfb in the jobs (see asWfbEnv).
	text := fmt.Sprintf("#!/bin/sh\nexport %s=1\nexec %q run %q %s\n", asWfbEnv, j.self, j.bench, args)
	path := filepath.Join(j.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		j.t.Fatal(err)
	}
	return path
}

// sbatch submits script with args and waits for every task to end. It
// returns the job id, and sbatch's error (a cancelled task makes one).
func (j *slurmJobs) sbatch(ctx context.Context, script string, args ...string) (string, error) {
	args = append([]string{"--parsable", "--wait", "--chdir=" + j.dir,
		"--output=" + filepath.Join(j.dir, "slurm-%A_%a.out")}, args...)
	out, err := exec.CommandContext(ctx, "sbatch", append(args, script)...).CombinedOutput()
	jobID, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if err != nil && jobID != "" && ctx.Err() != nil {
		exec.Command("scancel", jobID).Run()
	}
	if err != nil {
		err = fmt.Errorf("sbatch: %v: %s", err, out)
	}
	return jobID, err
}

// logs is every job's output, to explain a failure.
func (j *slurmJobs) logs() string {
	logs, _ := filepath.Glob(filepath.Join(j.dir, "slurm-*.out"))
	var text []string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		text = append(text, l+":\n"+string(b))
	}
	return strings.Join(text, "\n")
}

// merge merges shards into a new file and returns its runs and rows.
func (j *slurmJobs) merge(name string, shards ...string) ([]store.Run, []store.Result) {
	j.t.Helper()
	merged := filepath.Join(j.dir, name)
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), append([]string{"merge", "--into", merged}, shards...), s); code != exitOK {
		j.t.Fatalf("wfb merge: exit %d\n%s", code, errOut)
	}
	return resultsOf(j.t, merged)
}

// A real Slurm job array of 4 tasks runs a 24-cell bench: each task takes
// its shard from the array's own variables (SLURM_ARRAY_TASK_ID and
// SLURM_ARRAY_TASK_COUNT), all record run-slurm-<job id>, and the merge of
// their files holds every cell exactly once in one complete run. It stops
// a job script from needing arithmetic, or a shard from running a cell
// another ran, under the engine the docs show. Its subtest shows the check
// can fail: the merge of three of the four files misses that shard's cells.
func TestASlurmArrayRunsEveryCellOnceAfterMerge(t *testing.T) {
	needSlurm(t)
	j := newSlurmJobs(t, runOKScript)
	// The script docs/scaling-out.md shows, without arithmetic.
	script := j.script("job.sh", fmt.Sprintf(`--run-id "run-slurm-$SLURM_ARRAY_JOB_ID" --db %q/"shard-$SLURM_ARRAY_TASK_ID.db"`, j.dir))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jobID, err := j.sbatch(ctx, script, "--array=0-3", "--job-name=wfb-test")
	if err != nil {
		t.Fatalf("%v\n%s", err, j.logs())
	}
	shards, _ := filepath.Glob(filepath.Join(j.dir, "shard-*.db"))
	if len(shards) != 4 {
		t.Fatalf("the array wrote %d results files, want 4: %v", len(shards), shards)
	}
	runs, rows := j.merge("all.db", shards...)
	if err := everyCellOnce(slurmBenchCells(), rows); err != nil {
		t.Errorf("merged cells: %v", err)
	}
	if len(runs) != 1 || runs[0].ID != "run-slurm-"+jobID || runs[0].Status != wfb.RunComplete {
		t.Errorf("merged runs: %+v; want the one run run-slurm-%s, complete", runs, jobID)
	}

	t.Run("a merge without one shard fails the check", func(t *testing.T) {
		dropped := filepath.Join(j.dir, "shard-2.db")
		_, lost := resultsOf(t, dropped)
		if len(lost) == 0 {
			t.Fatalf("%s has no rows", dropped)
		}
		var rest []string
		for _, s := range shards {
			if s != dropped {
				rest = append(rest, s)
			}
		}
		_, rows := j.merge("three.db", rest...)
		err := everyCellOnce(slurmBenchCells(), rows)
		if err == nil {
			t.Fatalf("everyCellOnce of the merge without %s: no error; want its %d cells named", dropped, len(lost))
		}
		lostCells := map[string]bool{}
		for _, r := range lost {
			lostCells[cellOf(r)] = true
		}
		var missing []string
		for _, c := range slurmBenchCells() {
			if lostCells[c] {
				missing = append(missing, c)
			}
		}
		if want := "cells without a result: " + strings.Join(missing, ", "); err.Error() != want {
			t.Errorf("everyCellOnce of the merge without %s:\n got %v\nwant %s", dropped, err, want)
		}
	})
}

// everyCellOnce names what is wrong with a merge: a cell missing, one with
// two results, one the bench does not have; a cancelled attempt beside a
// result is not a second result. It stops the Slurm tests' check from
// passing whatever the merge holds.
func TestEveryCellOnceNamesMissingRepeatedAndUnplannedCells(t *testing.T) {
	row := func(cell, kind string) store.Result {
		var r store.Result
		fmt.Sscanf(strings.ReplaceAll(cell, "/", " "), "%s %s %d", &r.Task, &r.Arm, &r.Rep)
		r.ErrorKind = kind
		return r
	}
	want := []string{"t1/a/0", "t1/a/1", "t2/a/0"}
	for _, tc := range []struct {
		name string
		rows []store.Result
		err  string
	}{
		{"each once", []store.Result{row("t1/a/0", ""), row("t1/a/1", ""), row("t2/a/0", "")}, ""},
		{"a cancelled attempt before a result", []store.Result{row("t1/a/0", wfb.KindCancelled), row("t1/a/0", ""), row("t1/a/1", ""), row("t2/a/0", "")}, ""},
		{"a cell only cancelled", []store.Result{row("t1/a/0", wfb.KindCancelled), row("t1/a/1", ""), row("t2/a/0", "")}, "cells without a result: t1/a/0"},
		{"a cell twice and one not planned", []store.Result{row("t1/a/0", ""), row("t1/a/1", ""), row("t1/a/1", wfb.KindTimeout), row("t2/a/0", ""), row("t2/b/0", "")},
			"cells with more than one result: t1/a/1 (2 times)\ncells not in the bench: t2/b/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := everyCellOnce(want, tc.rows); err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("everyCellOnce = %q; want %q", got, tc.err)
			}
		})
	}
}
