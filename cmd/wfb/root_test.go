package main

import (
	"context"
	"strings"
	"testing"
)

// A typo in a command name must not look like success: the original
// printed the help page and exited 0.
func TestAnUnknownCommandIsBadInput(t *testing.T) {
	s, out, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"frobnicate"}, s); code != exitBadInput {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitBadInput, out, errOut)
	}
	if !strings.Contains(errOut.String(), `unknown command "frobnicate"`) {
		t.Errorf("stderr %q does not name the unknown command", errOut)
	}
}

func TestBareWfbPrintsHelp(t *testing.T) {
	s, out, _ := testStreams("", nil)
	if code := run(context.Background(), nil, s); code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	if !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("bare wfb printed %q, want the help", out)
	}
}
