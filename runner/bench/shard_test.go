package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseShardAcceptsIndexSlashCount stops a shard flag typo (1-based
// index, swapped numbers, a sign) from silently selecting the wrong slice.
func TestParseShardAcceptsIndexSlashCount(t *testing.T) {
	tests := []struct {
		in      string
		i, n    int
		wantErr string
	}{
		{in: "0/1", i: 0, n: 1},
		{in: "2/3", i: 2, n: 3},
		{in: "10/12", i: 10, n: 12},
		{in: "3/3", wantErr: `shard "3/3": index 3 is not below the count 3 (shards are numbered from 0 to 2)`},
		{in: "0/0", wantErr: `shard "0/0": count 0 must be at least 1`},
		{in: "1", wantErr: `shard "1": want INDEX/COUNT, e.g. 0/3 (shards are numbered from 0)`},
		{in: "-1/3", wantErr: `shard "-1/3": index: "-1" is not a non-negative integer`},
		{in: "1/+3", wantErr: `shard "1/+3": count: "+3" is not a non-negative integer`},
		{in: " 1/3", wantErr: `shard " 1/3": index: " 1" is not a non-negative integer`},
		{in: "1/3/4", wantErr: `shard "1/3/4": count: "3/4" is not a non-negative integer`},
		{in: "/3", wantErr: `shard "/3": index: "" is not a non-negative integer`},
		{in: "1/99999999999999999999", wantErr: `shard "1/99999999999999999999": count: "99999999999999999999" is out of range`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			i, n, err := ParseShard(tc.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && (i != tc.i || n != tc.n) {
				t.Errorf("got %d/%d, want %d/%d", i, n, tc.i, tc.n)
			}
		})
	}
}

// TestShardFromEnvReadsIndexedJobsAndSlurmArrays stops a pod or array task
// from running every cell (duplicating the work of its siblings) because its
// index was misread or its count was missing.
func TestShardFromEnvReadsIndexedJobsAndSlurmArrays(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		i, n    int
		ok      bool
		wantErr string
	}{
		{name: "nothing set", env: nil},
		{name: "indexed job", env: map[string]string{"JOB_COMPLETION_INDEX": "2", "WFB_SHARD_COUNT": "5"}, i: 2, n: 5, ok: true},
		{name: "indexed job without count", env: map[string]string{"JOB_COMPLETION_INDEX": "2"},
			wantErr: "JOB_COMPLETION_INDEX=2 is set but WFB_SHARD_COUNT is not: set it to the Job's completions (the number of shards)"},
		{name: "indexed job index too big", env: map[string]string{"JOB_COMPLETION_INDEX": "5", "WFB_SHARD_COUNT": "5"},
			wantErr: "JOB_COMPLETION_INDEX=5, WFB_SHARD_COUNT=5: index 5 is not below the count 5 (shards are numbered from 0 to 4)"},
		{name: "indexed job bad index", env: map[string]string{"JOB_COMPLETION_INDEX": "two", "WFB_SHARD_COUNT": "5"},
			wantErr: `JOB_COMPLETION_INDEX=two: "two" is not a non-negative integer`},
		{name: "slurm from 0", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0"}, i: 1, n: 3, ok: true},
		{name: "slurm from 1", env: map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"}, i: 2, n: 3, ok: true},
		{name: "slurm with a step", env: map[string]string{"SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2"}, i: 2, n: 3, ok: true},
		{name: "slurm count overridden", env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3", "WFB_SHARD_COUNT": "8"}, i: 4, n: 8, ok: true},
		{name: "slurm without count", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1"},
			wantErr: "SLURM_ARRAY_TASK_ID=1 is set but neither SLURM_ARRAY_TASK_COUNT nor WFB_SHARD_COUNT is"},
		{name: "slurm sparse array", env: map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"},
			wantErr: "SLURM_ARRAY_TASK_ID=7 (index 6 from min 1, step 1), SLURM_ARRAY_TASK_COUNT=3: index 6 is not below the count 3 (shards are numbered from 0 to 2); use a contiguous array (--array=0-2) or --shard i/n"},
		{name: "slurm off the step", env: map[string]string{"SLURM_ARRAY_TASK_ID": "13", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2"},
			wantErr: "SLURM_ARRAY_TASK_ID=13 is not SLURM_ARRAY_TASK_MIN=10 plus a multiple of the step 2: use a contiguous array (--array=0-2) or --shard i/n"},
		{name: "both engines", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1", "JOB_COMPLETION_INDEX": "1"},
			wantErr: "both JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID are set: cannot tell which engine's shard this is; pass --shard i/n"},
		{name: "count alone", env: map[string]string{"WFB_SHARD_COUNT": "3"},
			wantErr: "WFB_SHARD_COUNT=3 is set but no shard index is (JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i, n, ok, err := ShardFromEnv(func(k string) string { return tc.env[k] })
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]any{tc.i, tc.n, tc.ok}, []any{i, n, ok}); diff != "" {
				t.Errorf("i, n, ok (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShardsPartitionTheCells stops a shard function that drops a cell (no
// shard runs it) or duplicates one (two shards run it, and the merge has
// two attempts of one cell).
func TestShardsPartitionTheCells(t *testing.T) {
	var keys []string
	for task := range 20 {
		for _, arm := range []string{"baseline", "candidate", "arm/with/slashes"} {
			for rep := range 10 {
				keys = append(keys, CellKey(fmt.Sprintf("task-%d", task), arm, rep))
			}
		}
	}
	for _, n := range []int{1, 2, 3, 7, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sizes := make([]int, n)
			for _, k := range keys {
				owners := 0
				for i := range n {
					if InShard(k, i, n) {
						owners++
						sizes[i]++
					}
				}
				if owners != 1 {
					t.Fatalf("cell %s is in %d of %d shards, want exactly 1", k, owners, n)
				}
			}
			// 600 cells: every shard gets some, none half again its share.
			for i, s := range sizes {
				if s == 0 || s > len(keys)*3/(2*n) {
					t.Errorf("shard %d/%d has %d of %d cells", i, n, s, len(keys))
				}
			}
		})
	}
	if InShard("t/a/0", 3, 3) || InShard("t/a/0", -1, 3) || InShard("t/a/0", 0, 0) {
		t.Error("InShard accepted an invalid shard")
	}
}

// TestShardAssignmentIsPinned stops a change of hash (or of the cell key's
// shape) from moving cells between shards: shards started by different wfb
// builds on different machines must agree. The values were computed
// independently (Python's hashlib: first 8 bytes of SHA-256, big-endian).
func TestShardAssignmentIsPinned(t *testing.T) {
	tests := []struct {
		task, arm string
		rep       int
		of3, of7  int
	}{
		{"t1", "baseline", 0, 2, 6},
		{"t1", "baseline", 1, 0, 4},
		{"t1", "candidate", 2, 1, 4},
		{"review", "arm-b", 0, 1, 0},
		{"task with spaces", "a", 10, 1, 6},
		{"t2", "candidate", 1, 2, 1},
	}
	for _, tc := range tests {
		key := CellKey(tc.task, tc.arm, tc.rep)
		if !strings.HasSuffix(key, fmt.Sprintf("/%d", tc.rep)) || key != tc.task+"/"+tc.arm+"/"+fmt.Sprint(tc.rep) {
			t.Errorf("CellKey = %q, want task/arm/rep", key)
		}
		got := []int{ShardOf(key, 3), ShardOf(key, 7)}
		if diff := cmp.Diff([]int{tc.of3, tc.of7}, got); diff != "" {
			t.Errorf("%s: shard of 3, of 7 (-want +got):\n%s", key, diff)
		}
	}
}
