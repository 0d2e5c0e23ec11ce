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

// TestCompletionHelpInstallsWhereTheUserCanWrite stops `wfb completion
// SHELL --help` from telling a user to write to /etc (cobra's default,
// root only) as the way to install: the first way given is under ~, and a
// system-wide one says it needs root. The script itself goes to Out.
func TestCompletionHelpInstallsWhereTheUserCanWrite(t *testing.T) {
	for sh, home := range map[string]string{
		"bash": "> ~/.local/share/bash-completion/completions/wfb",
		"zsh":  "> ~/.zfunc/_wfb",
		"fish": "> ~/.config/fish/completions/wfb.fish",
	} {
		s, out, errOut := testStreams("", nil)
		if code := run(context.Background(), []string{"completion", sh, "--help"}, s); code != exitOK {
			t.Fatalf("%s --help: exit %d: %s", sh, code, errOut)
		}
		help := out.String()
		user, system := strings.Index(help, home), strings.Index(help, "System-wide (needs root)")
		if user < 0 || system < user {
			t.Errorf("%s: the help does not install to %q before a system-wide way marked as needing root:\n%s", sh, home, help)
		}
		if strings.Contains(help, "> /etc/") {
			t.Errorf("%s: the help still writes to /etc:\n%s", sh, help)
		}
		s, out, _ = testStreams("", nil)
		if code := run(context.Background(), []string{"completion", sh}, s); code != exitOK || !strings.Contains(out.String(), "wfb") {
			t.Errorf("%s: exit %d, script on Out %.80q", sh, code, out)
		}
	}
}
