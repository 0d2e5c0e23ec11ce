package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the wfb executable: commands
// that re-execute wfb (the stand-in agent is `wfb mock agent`) find
// os.Executable() to be this binary, called with wfb's own arguments.
// Test flags always start with -test., so wfb arguments are unambiguous.
// With asWfbEnv set, it is wfb whatever the command (a test that needs wfb
// in a process of its own, e.g. in another mount namespace).
func TestMain(m *testing.M) {
	if out := os.Getenv(peakRSSEnv); out != "" {
		os.Exit(runMeasuringPeakRSS(out, os.Args[1:]))
	}
	if len(os.Args) > 1 && (os.Args[1] == "mock" || os.Getenv(asWfbEnv) == "1") {
		os.Exit(Main(os.Args[1:], SystemStreams()))
	}
	os.Exit(m.Run())
}

// asWfbEnv makes this test binary run as wfb (see TestMain).
const asWfbEnv = "WFB_TEST_AS_WFB"
