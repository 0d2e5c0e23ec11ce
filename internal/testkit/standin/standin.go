// Package standin lets a test binary double as wfb's stand-in agent (the
// os/exec helper-process pattern), so tests start the agent as a real
// subprocess without building wfb first. It is imported only by tests.
package standin

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wfbench/wfb/mock/agent"
	"github.com/wfbench/wfb/mock/mcpserver"
)

// Env is the variable that makes a test binary the stand-in agent.
const Env = "WFB_TEST_AGENT"

// MainIfAsked runs the stand-in agent on the process's arguments (after an
// optional "mock agent", as wfb itself is called), or the stand-in MCP
// server after "mock mcp-server", and exits, when Env is
// "1"; otherwise it returns and the test binary runs its tests. Call it
// first in TestMain.
func MainIfAsked() {
	if os.Getenv(Env) != "1" {
		return
	}
	args := os.Args[1:]
	main := agent.Main
	if len(args) >= 2 && args[0] == "mock" && args[1] == "agent" {
		args = args[2:]
	}
	if len(args) >= 2 && args[0] == "mock" && args[1] == "mcp-server" {
		// An arm's `command: wfb` MCP server, run from the same binary.
		args, main = args[2:], mcpserver.Main
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := main(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
