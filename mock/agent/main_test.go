package agent

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/mock/mcpserver"
)

// TestMain lets the test binary be the stand-in agent: with WFB_TEST_AGENT=1
// it runs Main on its arguments (after an optional "mock agent") and
// exits, so tests start the agent as a real subprocess (the os/exec helper
// process pattern) without building wfb first.
//
// With WFB_TEST_MCP_SERVER=1 it is the stand-in MCP server instead (checked
// first: a server the agent starts inherits WFB_TEST_AGENT).
func TestMain(m *testing.M) {
	if os.Getenv("WFB_TEST_MCP_SERVER") == "1" {
		os.Exit(mcpserver.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	if os.Getenv("WFB_TEST_AGENT") == "1" {
		args := os.Args[1:]
		if len(args) >= 2 && args[0] == "mock" && args[1] == "agent" {
			args = args[2:]
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		code := Main(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
