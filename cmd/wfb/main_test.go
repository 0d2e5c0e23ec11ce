package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// TestMain lets the test binary stand in for the wfb executable: commands
// that re-execute wfb (the stand-in agent is `wfb mock agent`) find
// os.Executable() to be this binary, called with wfb's own arguments.
// Test flags always start with -test., so wfb arguments are unambiguous.
// With asWfbEnv set, or when it was started under the name wfb (the copy
// buildWFB makes), it is wfb whatever the command (a test that needs wfb in
// a process of its own: to signal it, or in another mount namespace).
func TestMain(m *testing.M) {
	if out := os.Getenv(peakRSSEnv); out != "" {
		os.Exit(runMeasuringPeakRSS(out, os.Args[1:]))
	}
	if filepath.Base(os.Args[0]) == wfbName || len(os.Args) > 1 && (os.Args[1] == "mock" || os.Getenv(asWfbEnv) == "1") {
		os.Exit(Main(os.Args[1:], SystemStreams()))
	}
	// Under nohup SIGHUP is ignored, and every wfb this binary starts would
	// inherit that: the hangup tests would wait for their sessions to end
	// (5 minutes). A handled signal is default again in a child.
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	code := m.Run()
	removeWFBCopy()
	if demoOnce.dir != "" {
		os.RemoveAll(demoOnce.dir)
	}
	gate.Report("cmd/wfb")
	os.Exit(code)
}

// wfbName is the name under which this test binary is wfb (see buildWFB).
const wfbName = "wfb"

// asWfbEnv makes this test binary run as wfb (see TestMain).
const asWfbEnv = "WFB_TEST_AS_WFB"

// slowPath skips t under -short, for the edit loop: what names the slow
// end-to-end path it takes (a flood, a signal to a real wfb, a fork bomb,
// a real agent CLI, Slurm). go test without -short runs it, as CI does.
func slowPath(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipped under -short: %s; go test without -short runs it (CI does)", what)
	}
}
