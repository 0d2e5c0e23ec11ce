package main

import (
	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/sandbox"
)

// newSandboxExecCmd is the landlock backend's launcher: wfb re-executes
// itself as `wfb sandbox-exec --ro ... --rw ... -- AGENT...`, which binds
// itself with Landlock and execs the agent. It is not for people, so it is
// hidden, and its arguments are the sandbox package's, so cobra leaves them
// alone.
func newSandboxExecCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.LauncherCommand + " [--ro DIR]... [--rw DIR]... [--rwfile FILE]... [--uid N --gid N] -- AGENT [ARGS...]",
		Short:              "Landlock launcher (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			// LauncherMain returns only when it did not exec the agent.
			return &exitCodeError{code: sandbox.LauncherMain(args, s.ErrOut)}
		},
	}
}
