package main

import (
	"fmt"

	"github.com/wfbench/wfb/sandbox"
)

// recoverLeftovers puts right, at the start of a session or run, what a
// wfb killed mid-session (SIGKILL, a crash, the machine reset) could not:
// the modes of a tree its write boundary left read-only. Each thing done
// is said on ErrOut; nothing here stops the command.
func recoverLeftovers(s *Streams) {
	notes, err := sandbox.RecoverWriteBoundaries()
	if err != nil {
		fmt.Fprintf(s.ErrOut, "wfb: cannot look for write boundaries a killed wfb left: %v\n", err)
	}
	for _, n := range notes {
		fmt.Fprintln(s.ErrOut, "wfb: "+n)
	}
}
