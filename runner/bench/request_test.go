package bench

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestARequestResolvesToTheRunsSelection stops a resume that quietly runs
// other cells than its run's (flags that would change them are refused),
// a shard that is read from neither its flag nor its batch engine, and
// shards of one run that would record into different runs (no run id).
func TestARequestResolvesToTheRunsSelection(t *testing.T) {
	tests := []struct {
		name    string
		req     Request
		env     map[string]string
		want    Selection
		wantID  string
		refusal string // "" when resolved
	}{
		{"a new run keeps its flags", Request{Tasks: []string{"t1"}, Arms: []string{"a"}, Runs: 2, IncludeExpensive: true, Sandbox: "bwrap", Label: "l"}, nil,
			Selection{Tasks: []string{"t1"}, Arms: []string{"a"}, Runs: 2, IncludeExpensive: true, Sandbox: "bwrap"}, "", ""},
		{"a resume takes the run's own cells", Request{Resume: "run-1"}, map[string]string{EnvRunID: "run-env"}, Selection{}, "run-env", ""},
		{"a resume refuses what would change its cells", Request{Resume: "run-1", Arms: []string{"a"}, Label: "l", Runs: 3}, nil, Selection{}, "",
			"--resume continues a run with the cells it was started with; drop --arms, --label, --runs"},
		{"a resume refuses a new run id", Request{Resume: "run-1", RunID: "x"}, nil, Selection{}, "",
			"--resume continues a run with the cells it was started with; drop --run-id"},
		{"the shard flag", Request{Shard: "1/3", RunID: "r"}, nil, Selection{Shard: 1, ShardCount: 3}, "r", ""},
		{"the flag wins over the environment", Request{Shard: "0/2", RunID: "r"}, map[string]string{EnvJobCompletionIndex: "1", EnvShardCount: "4"},
			Selection{Shard: 0, ShardCount: 2}, "r", ""},
		{"a bad shard flag", Request{Shard: "3/3", RunID: "r"}, nil, Selection{}, "",
			`--shard: shard "3/3": index 3 is not below the count 3 (shards are numbered from 0 to 2)`},
		{"an Indexed Job's shard", Request{}, map[string]string{EnvJobCompletionIndex: "2", EnvShardCount: "4", EnvRunID: "run-k8s"},
			Selection{Shard: 2, ShardCount: 4}, "run-k8s", ""},
		{"a bad environment", Request{}, map[string]string{EnvJobCompletionIndex: "2"}, Selection{}, "",
			"JOB_COMPLETION_INDEX=2 is set but WFB_SHARD_COUNT is not: set it to the Job's completions (the number of shards)"},
		{"a shard of a new run needs a run id", Request{Shard: "0/3"}, nil, Selection{}, "",
			"a shard needs --run-id (or $WFB_RUN_ID): every shard of one run records into the same run id, which wfb merge combines"},
		{"a resumed shard needs none", Request{Shard: "0/3", Resume: "run-1"}, nil, Selection{Shard: 0, ShardCount: 3}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, id, err := tc.req.Resolve(func(k string) string { return tc.env[k] })
			if tc.refusal != "" {
				var se *SelectionError
				if !errors.As(err, &se) || err.Error() != tc.refusal {
					t.Fatalf("Resolve = %v; want the *SelectionError %q", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tc.want, sel); diff != "" || id != tc.wantID {
				t.Errorf("selection (-want +got):\n%s\nrun id %q, want %q", diff, id, tc.wantID)
			}
		})
	}
}
