package main

import (
	"fmt"
	"strings"

	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/sandbox"
)

// recoverLeftovers puts right, at the start of a session or run, what a
// wfb killed mid-session (SIGKILL, a crash, the machine reset) could not:
// the modes of a tree its write boundary left read-only (first: the tree
// may be a cell copy about to be reaped), then the run directories and
// sandbox roots no live wfb holds, in tempDir ("" the temp dir) and the
// temp dir. Each thing done is said on ErrOut; nothing here stops the
// command.
func recoverLeftovers(s *Streams, tempDir string) {
	notes, err := sandbox.RecoverWriteBoundaries()
	if err != nil {
		fmt.Fprintf(s.ErrOut, "wfb: cannot look for write boundaries a killed wfb left: %v\n", err)
	}
	for _, n := range notes {
		fmt.Fprintln(s.ErrOut, "wfb: "+n)
	}
	if reaped := runner.ReapLeftovers(tempDir); len(reaped) > 0 {
		fmt.Fprintf(s.ErrOut, "wfb: removed %d directories a killed wfb left: %s\n", len(reaped), strings.Join(reaped, ", "))
	}
}
