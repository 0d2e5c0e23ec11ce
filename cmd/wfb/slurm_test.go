package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/gate"
)

// requireSlurmEnv makes TestASlurmArrayRunsEveryCellOnceAfterMerge a
// failure, not a skip, when sbatch is absent (.ci/run sets it once
// .ci/slurm/start.sh has started a single-node Slurm).
const requireSlurmEnv = "WFB_REQUIRE_SLURM"

// A real Slurm job array of 4 tasks runs a 24-cell bench: each task takes
// its shard from the array's own variables (SLURM_ARRAY_TASK_ID and
// SLURM_ARRAY_TASK_COUNT), all record run-slurm-<job id>, and the merge of
// their files holds every cell exactly once in one complete run. It stops
// a job script from needing arithmetic, or a shard from running a cell
// another ran, under the engine the docs show.
func TestASlurmArrayRunsEveryCellOnceAfterMerge(t *testing.T) {
	if _, err := exec.LookPath("sbatch"); err != nil {
		if os.Getenv(requireSlurmEnv) == "1" {
			t.Fatalf("sbatch not found on PATH and %s=1: install slurm-wlm and munge and run .ci/slurm/start.sh", requireSlurmEnv)
		}
		gate.Skipf(t, requireSlurmEnv, "sbatch not found on PATH: install slurm-wlm and munge and run .ci/slurm/start.sh (or set %s=1 to make this a failure)", requireSlurmEnv)
	}
	bench, _ := runFixture(t, runOKScript, `runs: 4
workers: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws, prompt: q}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}, {id: c, agent: stand-in}]
`)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The jobs run as root on this host; the files go where they can
	// write and this test can read.
	dir, err := os.MkdirTemp("", "wfb-slurm-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// This test binary is wfb in the jobs (see asWfbEnv); the script is
	// the one docs/scaling-out.md shows, without arithmetic.
	script := fmt.Sprintf(`#!/bin/sh
export %s=1
exec %q run %q --run-id "run-slurm-$SLURM_ARRAY_JOB_ID" --db %q/"shard-$SLURM_ARRAY_TASK_ID.db"
`, asWfbEnv, self, bench, dir)
	scriptPath := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sbatch", "--parsable", "--wait", "--array=0-3", "--job-name=wfb-test",
		"--chdir="+dir, "--output="+filepath.Join(dir, "slurm-%A_%a.out"), scriptPath)
	out, err := cmd.CombinedOutput()
	jobID, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if err != nil {
		if jobID != "" && ctx.Err() != nil {
			exec.Command("scancel", jobID).Run()
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
		var text []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			text = append(text, l+":\n"+string(b))
		}
		t.Fatalf("sbatch --wait: %v\n%s\n%s", err, out, strings.Join(text, "\n"))
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.db"))
	if len(shards) != 4 {
		t.Fatalf("the array wrote %d results files, want 4: %v", len(shards), shards)
	}
	merged := filepath.Join(dir, "all.db")
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), append([]string{"merge", "--into", merged}, shards...), s); code != exitOK {
		t.Fatalf("wfb merge: exit %d\n%s", code, errOut)
	}
	runs, rows := resultsOf(t, merged)
	var want, got []string
	for rep := range 4 {
		for _, task := range []string{"t1", "t2"} {
			for _, arm := range []string{"a", "b", "c"} {
				want = append(want, fmt.Sprintf("%s/%s/%d", task, arm, rep))
			}
		}
	}
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%s/%d", r.Task, r.Arm, r.Rep))
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged cells, each once (-want +got):\n%s", diff)
	}
	if len(runs) != 1 || runs[0].ID != "run-slurm-"+jobID || runs[0].Status != wfb.RunComplete {
		t.Errorf("merged runs: %+v; want the one run run-slurm-%s, complete", runs, jobID)
	}
}
