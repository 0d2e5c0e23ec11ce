package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/proc"
)

// limitFlags are the per-session resource limits `wfb run` and `wfb
// session` take (run: over the bench's pids_max and memory_max_mib).
type limitFlags struct {
	pids, memoryMiB, requests int
}

// add declares the flags; over names what they override, if anything.
func (l *limitFlags) add(cmd *cobra.Command, over string) {
	f := cmd.Flags()
	def := func(n int) string {
		if over != "" {
			return fmt.Sprintf("(default: %s, else %d)", over, n)
		}
		return fmt.Sprintf("(default %d)", n)
	}
	f.IntVar(&l.pids, "pids-max", 0, "most processes a session may have at once "+def(proc.DefaultPidsMax))
	f.IntVar(&l.memoryMiB, "memory-max-mib", 0, "most memory a session may use, in MiB "+def(proc.DefaultMemoryMax>>20))
	f.IntVar(&l.requests, "max-requests", 0, "most requests a metered session may send its provider before it is stopped as runaway "+def(runner.DefaultRequestsMax))
}

// check refuses a limit flag given outside the range a bench file accepts.
func (l *limitFlags) check(cmd *cobra.Command) error {
	for _, c := range []struct {
		flag          string
		val, min, max int
	}{{"pids-max", l.pids, bench.MinPidsMax, bench.MaxPidsMax}, {"memory-max-mib", l.memoryMiB, bench.MinMemoryMaxMiB, bench.MaxMemoryMaxMiB},
		{"max-requests", l.requests, bench.MinMaxRequests, bench.MaxMaxRequests}} {
		if cmd.Flags().Changed(c.flag) && (c.val < c.min || c.val > c.max) {
			return badInput("--%s %d: want %d to %d", c.flag, c.val, c.min, c.max)
		}
	}
	return nil
}

// limits are the flags' limits; zero fields are not given.
func (l *limitFlags) limits() runner.Limits {
	return runner.Limits{Pids: l.pids, Memory: int64(l.memoryMiB) << 20, Requests: l.requests}
}
