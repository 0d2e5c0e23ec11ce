package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/internal/testkit/standin"
)

// The test binary doubles as the processes the runner drives (the os/exec
// helper-process pattern): WFB_TEST_AGENT=1 makes it wfb's stand-in agent,
// WFB_RUNNER_HELPER=<mode> one of the misbehaving processes below.
func TestMain(m *testing.M) {
	standin.MainIfAsked()
	if mode := os.Getenv("WFB_RUNNER_HELPER"); mode != "" {
		os.Exit(helperProcess(mode))
	}
	code := m.Run()
	gate.Report("runner")
	if sharedBin != "" {
		os.RemoveAll(filepath.Dir(sharedBin))
	}
	os.Exit(code)
}

var (
	sharedBinOnce sync.Once
	sharedBin     string
	sharedBinErr  error
)

// helperProcess is a process that behaves the way a real CLI might where
// the stand-in agent does not (see agentHelper).
func helperProcess(mode string) int {
	if code, ok := agentHelper(mode); ok {
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// testBinary returns a copy of the test binary that any uid can execute: the
// host-unsafe sandbox runs the agent as an unprivileged user when wfb runs as
// root, and the go tool builds test binaries in 0700 directories.
func testBinary(t testing.TB) string {
	t.Helper()
	sharedBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wfb-runner-test-bin-")
		if err != nil {
			sharedBinErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			sharedBinErr = err
			return
		}
		self, err := os.Executable()
		if err != nil {
			sharedBinErr = err
			return
		}
		data, err := os.ReadFile(self)
		if err != nil {
			sharedBinErr = err
			return
		}
		sharedBin = filepath.Join(dir, "wfb-agent.test")
		sharedBinErr = os.WriteFile(sharedBin, data, 0o755)
	})
	if sharedBinErr != nil {
		t.Fatalf("copy the test binary: %v", sharedBinErr)
	}
	return sharedBin
}
