package bench

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Environment variables ShardFromEnv reads.
const (
	// EnvShardCount is the number of shards for an index taken from
	// JOB_COMPLETION_INDEX (a Kubernetes Indexed Job does not export its
	// completions count: set this to it). For Slurm it overrides
	// SLURM_ARRAY_TASK_COUNT.
	EnvShardCount = "WFB_SHARD_COUNT"
	// EnvJobCompletionIndex is set by a Kubernetes Indexed Job to the pod's
	// index, from 0.
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"
	// Slurm job arrays: the task's id, and the array's count, smallest id
	// and step.
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
)

// ParseShard parses "i/n": shard i (from 0) of n. Both are decimal integers,
// n at least 1 and i below n.
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/3 (shards are numbered from 0)", s)
	}
	if i, err = shardNumber(a); err != nil {
		return 0, 0, fmt.Errorf("shard %q: index: %v", s, err)
	}
	if n, err = shardNumber(b); err != nil {
		return 0, 0, fmt.Errorf("shard %q: count: %v", s, err)
	}
	if err := checkShard(i, n); err != nil {
		return 0, 0, fmt.Errorf("shard %q: %v", s, err)
	}
	return i, n, nil
}

// shardNumber accepts a plain non-negative decimal: no sign, no spaces.
func shardNumber(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

func checkShard(i, n int) error {
	switch {
	case n < 1:
		return fmt.Errorf("count %d must be at least 1", n)
	case i >= n:
		return fmt.Errorf("index %d is not below the count %d (shards are numbered from 0 to %d)", i, n, n-1)
	}
	return nil
}

// ShardFromEnv reads this process's shard from the environment of a batch
// engine, through getenv:
//
//   - Kubernetes Indexed Job: JOB_COMPLETION_INDEX is the index; the count
//     must be given in WFB_SHARD_COUNT (the Job's completions).
//   - Slurm job array: the index is (SLURM_ARRAY_TASK_ID −
//     SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP (MIN 0 and STEP 1 when
//     unset) and the count is SLURM_ARRAY_TASK_COUNT, or WFB_SHARD_COUNT
//     when set. An array whose ids are not MIN, MIN+STEP, ... (e.g.
//     --array=1,5,7) is refused.
//
// ok is false when neither engine's index is set. A count without an index,
// both engines at once, or a value that is not a number is an error naming
// the variable: a process that believes it is one shard but runs every
// cell would silently duplicate work.
func ShardFromEnv(getenv func(string) string) (i, n int, ok bool, err error) {
	k8s, slurm := getenv(EnvJobCompletionIndex), getenv(EnvSlurmTaskID)
	count := getenv(EnvShardCount)
	num := func(name, v string) (int, error) {
		x, err := shardNumber(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%s: %v", name, v, err)
		}
		return x, nil
	}
	switch {
	case k8s != "" && slurm != "":
		return 0, 0, false, fmt.Errorf("both %s and %s are set: cannot tell which engine's shard this is; pass --shard i/n", EnvJobCompletionIndex, EnvSlurmTaskID)
	case k8s != "":
		if i, err = num(EnvJobCompletionIndex, k8s); err != nil {
			return 0, 0, false, err
		}
		if count == "" {
			return 0, 0, false, fmt.Errorf("%s=%s is set but %s is not: set it to the Job's completions (the number of shards)", EnvJobCompletionIndex, k8s, EnvShardCount)
		}
		if n, err = num(EnvShardCount, count); err != nil {
			return 0, 0, false, err
		}
		if err := checkShard(i, n); err != nil {
			return 0, 0, false, fmt.Errorf("%s=%s, %s=%s: %v", EnvJobCompletionIndex, k8s, EnvShardCount, count, err)
		}
		return i, n, true, nil
	case slurm != "":
		id, err := num(EnvSlurmTaskID, slurm)
		if err != nil {
			return 0, 0, false, err
		}
		lo, step := 0, 1
		if v := getenv(EnvSlurmTaskMin); v != "" {
			if lo, err = num(EnvSlurmTaskMin, v); err != nil {
				return 0, 0, false, err
			}
		}
		if v := getenv(EnvSlurmTaskStep); v != "" {
			if step, err = num(EnvSlurmTaskStep, v); err != nil {
				return 0, 0, false, err
			}
			if step < 1 {
				return 0, 0, false, fmt.Errorf("%s=%s: must be at least 1", EnvSlurmTaskStep, v)
			}
		}
		countVar := EnvSlurmTaskCount
		if count != "" {
			countVar = EnvShardCount
		} else if count = getenv(EnvSlurmTaskCount); count == "" {
			return 0, 0, false, fmt.Errorf("%s=%s is set but neither %s nor %s is", EnvSlurmTaskID, slurm, EnvSlurmTaskCount, EnvShardCount)
		}
		if n, err = num(countVar, count); err != nil {
			return 0, 0, false, err
		}
		if id < lo || (id-lo)%step != 0 {
			return 0, 0, false, fmt.Errorf("%s=%s is not %s=%d plus a multiple of the step %d: use a contiguous array (--array=0-%d) or --shard i/n", EnvSlurmTaskID, slurm, EnvSlurmTaskMin, lo, step, max(n-1, 0))
		}
		i = (id - lo) / step
		if err := checkShard(i, n); err != nil {
			return 0, 0, false, fmt.Errorf("%s=%s (index %d from min %d, step %d), %s=%s: %v; use a contiguous array (--array=0-%d) or --shard i/n", EnvSlurmTaskID, slurm, i, lo, step, countVar, count, err, max(n-1, 0))
		}
		return i, n, true, nil
	case count != "":
		return 0, 0, false, fmt.Errorf("%s=%s is set but no shard index is (%s or %s)", EnvShardCount, count, EnvJobCompletionIndex, EnvSlurmTaskID)
	}
	return 0, 0, false, nil
}

// CellKey is the key a cell is sharded by: "task/arm/rep". It depends only
// on the cell, never on its position in the bench, so adding an arm does not
// move other cells between shards.
func CellKey(task, arm string, rep int) string {
	return task + "/" + arm + "/" + strconv.Itoa(rep)
}

// InShard says whether the cell with this key belongs to shard i of n. A
// cell belongs to exactly one shard: the first 8 bytes of the key's SHA-256,
// big-endian, modulo n. The assignment is the same in every process, on
// every platform and in every wfb version (a golden test pins it), so
// shards run on different machines split a bench disjointly and completely.
// Shard sizes are balanced only on average.
func InShard(key string, i, n int) bool {
	if n < 1 || i < 0 || i >= n {
		return false
	}
	return ShardOf(key, n) == i
}

// ShardOf returns the shard, from 0 to n-1, that the key belongs to. n must
// be at least 1.
func ShardOf(key string, n int) int {
	sum := sha256.Sum256([]byte(key))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}
