package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// oneCellAShard is a bench of four cells that fall one to each of 4
// shards: t1/a/0 → 1, t1/b/0 → 2, t2/a/0 → 3, t2/b/0 → 0. Its tasks have
// workspaces of their own.
const oneCellAShard = `runs: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws2, prompt: q}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}]
`

// oneCellAShardBench writes oneCellAShard and its workspaces, and returns
// the bench file's path.
func oneCellAShardBench(t *testing.T) string {
	t.Helper()
	bench, _ := runFixture(t, runOKScript, oneCellAShard)
	if err := os.Mkdir(filepath.Join(filepath.Dir(bench), "ws2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(bench), "ws2", "other.ts"), []byte("export const other = 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bench
}

// Shards of one run merge whatever cells each drew. This bench's four
// cells fall one to a shard (t1/a/0 → 1, t1/b/0 → 2, t2/a/0 → 3,
// t2/b/0 → 0), so no two shards use the same tasks and arms. The run's
// fingerprint used to cover only the cells a shard drew, and wfb merge
// refused the second shard ("column fingerprint … (also differing:
// config)"). Shards of a different bench under the same run id are still
// refused.
func TestShardsThatDrewDifferentTasksAndArmsMergeIntoOneRun(t *testing.T) {
	t.Parallel()
	const benchText = `runs: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}, {id: t2, workspace: ws2, prompt: q}]
arms: [{id: a, agent: stand-in}, {id: b, agent: stand-in}]
`
	bench, _ := runFixture(t, runOKScript, benchText)
	if err := os.Mkdir(filepath.Join(filepath.Dir(bench), "ws2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(bench), "ws2", "other.ts"), []byte("export const other = 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wfbRun := func(env map[string]string, args ...string) (int, string) {
		t.Helper()
		s, _, errOut := testStreams("", env)
		return run(context.Background(), args, s), errOut.String()
	}
	mustRun := func(env map[string]string, args ...string) {
		t.Helper()
		if code, errOut := wfbRun(env, args...); code != exitOK {
			t.Fatalf("wfb %v: exit %d\n%s", args, code, errOut)
		}
	}
	dir := t.TempDir()
	env := map[string]string{"WFB_RUN_ID": "run-1"}
	var shards []string
	for k := range 4 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.db", k))
		shards = append(shards, f)
		mustRun(env, "run", bench, "--shard", fmt.Sprintf("%d/4", k), "--db", f)
		if _, rows := resultsOf(t, f); len(rows) != 1 {
			t.Fatalf("shard %d holds %d rows, want its one cell", k, len(rows))
		}
	}
	merged := filepath.Join(dir, "all.db")
	mustRun(nil, append([]string{"merge", "--into", merged}, shards...)...)
	runs, rows := resultsOf(t, merged)
	var cells []string
	for _, r := range rows {
		cells = append(cells, fmt.Sprintf("%s/%s/%d", r.Task, r.Arm, r.Rep))
	}
	slices.Sort(cells)
	if diff := cmp.Diff([]string{"t1/a/0", "t1/b/0", "t2/a/0", "t2/b/0"}, cells); diff != "" {
		t.Errorf("merged cells (-want +got):\n%s", diff)
	}
	if len(runs) != 1 || runs[0].ID != "run-1" || runs[0].Status != wfb.RunComplete {
		t.Errorf("merged runs: %+v; want the one run run-1, complete", runs)
	}

	// A shard still resumes, naming its shard again.
	mustRun(env, "run", bench, "--shard", "1/4", "--db", shards[1], "--resume", "run-1")

	// A shard of another bench (another prompt) under the same run id is
	// refused: its bench digest, so its fingerprint, differs.
	other := filepath.Join(filepath.Dir(bench), "other.yaml")
	if err := os.WriteFile(other, []byte(strings.Replace(oneCellAShard, "prompt: q", "prompt: r", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	odb := filepath.Join(dir, "other-0.db")
	mustRun(env, "run", other, "--shard", "0/4", "--db", odb)
	dst := filepath.Join(dir, "mixed.db")
	code, errOut := wfbRun(nil, "merge", "--into", dst, shards[1], odb)
	if code != exitBadInput || !strings.Contains(errOut, "fingerprint") {
		t.Errorf("merging shards of two benches: exit %d, want 2 naming the fingerprint\n%s", code, errOut)
	}
}

// wfb run takes its shard from a batch engine's own variables, with no
// arithmetic in the job script: a Slurm array numbered from 1
// (SLURM_ARRAY_TASK_ID, _COUNT, _MIN as Slurm sets them) and a Kubernetes
// Indexed Job (JOB_COMPLETION_INDEX, with WFB_SHARD_COUNT its completions)
// each draw the cell --shard i/4 draws, and a Slurm shard resumes from the
// same variables.
func TestRunTakesItsShardFromSlurmAndIndexedJobVariables(t *testing.T) {
	t.Parallel()
	bench := oneCellAShardBench(t)
	// The one cell of each shard (see oneCellAShard).
	want := []string{"t2/b/0", "t1/a/0", "t1/b/0", "t2/a/0"}
	dir := t.TempDir()
	for i := range 4 {
		for engine, env := range map[string]map[string]string{
			"slurm": {"SLURM_ARRAY_TASK_ID": fmt.Sprint(i + 1), "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4",
				"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_JOB_ID": "77", "WFB_RUN_ID": "run-slurm-77"},
			"k8s": {"JOB_COMPLETION_INDEX": fmt.Sprint(i), "WFB_SHARD_COUNT": "4", "WFB_RUN_ID": "run-k8s"},
		} {
			db := filepath.Join(dir, fmt.Sprintf("%s-%d.db", engine, i))
			s, _, errOut := testStreams("", env)
			if code := run(context.Background(), []string{"run", bench, "--db", db}, s); code != exitOK {
				t.Fatalf("%s shard %d: exit %d\n%s", engine, i, code, errOut)
			}
			_, rows := resultsOf(t, db)
			if len(rows) != 1 || fmt.Sprintf("%s/%s/%d", rows[0].Task, rows[0].Arm, rows[0].Rep) != want[i] {
				t.Errorf("%s shard %d ran %+v, want the one cell %s", engine, i, rows, want[i])
			}
			if engine != "slurm" || i != 2 {
				continue
			}
			s, _, errOut = testStreams("", env)
			if code := run(context.Background(), []string{"run", bench, "--db", db, "--resume", "run-slurm-77"}, s); code != exitOK {
				t.Errorf("resume of slurm shard %d from its variables: exit %d\n%s", i, code, errOut)
			}
		}
	}
}
