package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/gate"
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

// needSlurm skips t without sbatch, or fails it when requireSlurmEnv=1;
// it skips t under -short.
func needSlurm(t *testing.T) {
	t.Helper()
	slowPath(t, "a real Slurm array")
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

// sbatch submits script with args and returns the job id.
func (j *slurmJobs) sbatch(ctx context.Context, script string, args ...string) string {
	j.t.Helper()
	args = append([]string{"--parsable", "--chdir=" + j.dir,
		"--output=" + filepath.Join(j.dir, "slurm-%A_%a.out")}, args...)
	out, err := exec.CommandContext(ctx, "sbatch", append(args, script)...).CombinedOutput()
	if err != nil {
		j.t.Fatalf("sbatch: %v\n%s", err, out)
	}
	jobID, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return jobID
}

// wait waits until every task of job jobID has ended and returns each
// task's state and exit code ("COMPLETED 0:0", "CANCELLED 130:0": status
// and signal) by array index. It
// polls scontrol every 250 ms: sbatch --wait sleeps up to 32 s between
// its polls. When ctx ends first the job is cancelled.
func (j *slurmJobs) wait(ctx context.Context, jobID string) map[string]string {
	j.t.Helper()
	for {
		out, err := exec.CommandContext(ctx, "scontrol", "-o", "show", "job", jobID).Output()
		if err != nil {
			exec.Command("scancel", jobID).Run()
			j.t.Fatalf("scontrol show job %s: %v\n%s", jobID, err, j.logs())
		}
		states, running := map[string]string{}, false
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var task, state, exit string
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "ArrayTaskId="); ok {
					task = v
				} else if v, ok := strings.CutPrefix(f, "JobState="); ok {
					state = v
				} else if v, ok := strings.CutPrefix(f, "ExitCode="); ok {
					exit = v
				}
			}
			states[task] = state + " " + exit
			switch state {
			case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED":
				running = true
			}
		}
		if !running {
			return states
		}
		select {
		case <-ctx.Done():
			exec.Command("scancel", jobID).Run()
			j.t.Fatalf("job %s still running (%v): %v\n%s", jobID, states, ctx.Err(), j.logs())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// run submits script with args, waits for it, and fails the test unless
// every task completed.
func (j *slurmJobs) run(ctx context.Context, script string, args ...string) string {
	j.t.Helper()
	jobID := j.sbatch(ctx, script, args...)
	for task, state := range j.wait(ctx, jobID) {
		if state != "COMPLETED 0:0" {
			j.t.Fatalf("job %s task %s: %s\n%s", jobID, task, state, j.logs())
		}
	}
	return jobID
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
	t.Parallel()
	needSlurm(t)
	j := newSlurmJobs(t, runOKScript)
	// The script docs/scaling-out.md shows, without arithmetic.
	script := j.script("job.sh", fmt.Sprintf(`--run-id "run-slurm-$SLURM_ARRAY_JOB_ID" --db %q/"shard-$SLURM_ARRAY_TASK_ID.db"`, j.dir))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jobID := j.run(ctx, script, "--array=0-3", "--job-name=wfb-test")
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

// slowShardScript answers every request after 700 ms: a shard of slurmBench
// (6 cells, one at a time) runs for about 4 s, long enough to be cancelled
// mid-run.
const slowShardScript = `default:
  text: "done"
  delay_ms: 700
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// One task of a real Slurm array is cancelled (scancel JOBID_0) while a
// cell is in flight, then resubmitted as docs/scaling-out.md says: a
// one-index array that names its shard (--shard 0/4, since that array's
// SLURM_ARRAY_TASK_COUNT is 1) and resumes the run. The shard's file
// records the cancelled attempt as cancelled (Slurm's SIGTERM, KillWait
// before its SIGKILL) and the run as interrupted; the merge of all four
// files holds every cell exactly once in one complete run. It stops a
// cancelled task from losing or repeating cells, or from leaving a run the
// resume cannot continue.
func TestASlurmTaskCancelledMidRunIsResumedAndMergesEveryCellOnce(t *testing.T) {
	t.Parallel()
	needSlurm(t)
	j := newSlurmJobs(t, slowShardScript)
	shard0 := filepath.Join(j.dir, "shard-0.db")
	script := j.script("job.sh", fmt.Sprintf(`--run-id "run-slurm-$SLURM_ARRAY_JOB_ID" --db %q/"shard-$SLURM_ARRAY_TASK_ID.db"`, j.dir))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jobID := j.sbatch(ctx, script, "--array=0-3", "--job-name=wfb-test-scancel")
	// Task 0 is mid-run once its first row is in and its second cell has
	// had time to start.
	deadline := time.Now().Add(60 * time.Second)
	for countRows(shard0) < 1 {
		if time.Now().After(deadline) {
			exec.Command("scancel", jobID).Run()
			t.Fatalf("no row in %s after 60s\n%s", shard0, j.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if out, err := exec.Command("scancel", jobID+"_0").CombinedOutput(); err != nil {
		t.Fatalf("scancel %s_0: %v\n%s", jobID, err, out)
	}
	states := j.wait(ctx, jobID)
	// wfb's own exit 130 (interrupted), not Slurm's SIGKILL (0:9): KillWait
	// (30 s) gave it the time to record the cell in flight as cancelled.
	if want := map[string]string{"0": "CANCELLED 130:0", "1": "COMPLETED 0:0", "2": "COMPLETED 0:0", "3": "COMPLETED 0:0"}; !maps.Equal(states, want) {
		t.Fatalf("array %s's tasks: %v; want %v\n%s", jobID, states, want, j.logs())
	}
	runs, rows := resultsOf(t, shard0)
	var cancelled int
	for _, r := range rows {
		if r.ProcessState == wfb.StateCancelled && r.ErrorKind == wfb.KindCancelled {
			cancelled++
		}
	}
	if cancelled != 1 || len(rows) >= 6 {
		t.Errorf("cancelled task 0 recorded %d rows, %d of them cancelled; want fewer than its 6 cells, one cancelled\n%s", len(rows), cancelled, j.logs())
	}
	if len(runs) != 1 || runs[0].Status != wfb.RunInterrupted {
		t.Errorf("cancelled task 0's runs: %+v; want the one run, interrupted", runs)
	}

	// The resubmission of index 0 the docs show.
	again := j.script("again.sh", fmt.Sprintf(`--shard 0/4 --resume run-slurm-%s --db %q`, jobID, shard0))
	j.run(ctx, again, "--array=0", "--job-name=wfb-test-scancel-again")
	shards, _ := filepath.Glob(filepath.Join(j.dir, "shard-*.db"))
	if len(shards) != 4 {
		t.Fatalf("the arrays wrote %d results files, want 4: %v", len(shards), shards)
	}
	runs, rows = j.merge("all.db", shards...)
	if err := everyCellOnce(slurmBenchCells(), rows); err != nil {
		t.Errorf("merged cells: %v", err)
	}
	cancelled = 0
	for _, r := range rows {
		if r.ErrorKind == wfb.KindCancelled {
			cancelled++
		}
	}
	if cancelled != 1 {
		t.Errorf("merged rows hold %d cancelled attempts; want task 0's one", cancelled)
	}
	if len(runs) != 1 || runs[0].ID != "run-slurm-"+jobID || runs[0].Status != wfb.RunComplete {
		t.Errorf("merged runs: %+v; want the one run run-slurm-%s, complete", runs, jobID)
	}
}
