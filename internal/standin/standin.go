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
)

// Env is the variable that makes a test binary the stand-in agent.
const Env = "WFB_TEST_AGENT"

// MainIfAsked runs the stand-in agent on the process's arguments (after an
// optional "mock agent", as wfb itself is called) and exits, when Env is
// "1"; otherwise it returns and the test binary runs its tests. Call it
// first in TestMain.
func MainIfAsked() {
	if os.Getenv(Env) != "1" {
		return
	}
	args := os.Args[1:]
	if len(args) >= 2 && args[0] == "mock" && args[1] == "agent" {
		args = args[2:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := agent.Main(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
