package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTheREADMEQuickTourRunsAsWritten follows the README's quick tour
// command by command in a fresh directory, as a newcomer would: every
// `wfb` line runs as written (in-process), the `sed` edit through the
// shell, and each command ends with the exit status the tour promises
// (an `echo $?  # N` line after it; else 0). It must reach a diff, a gate
// and an exported viewer: a tour whose commands drift from the CLI fails
// here, not on a newcomer's first day.
func TestTheREADMEQuickTourRunsAsWritten(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := tourCommands(t, string(readme))
	t.Chdir(t.TempDir())
	reached := map[string]bool{}
	for i, c := range cmds {
		var code int
		var out string
		switch {
		case strings.HasPrefix(c.line, "wfb "):
			args := shellWords(t, strings.TrimPrefix(c.line, "wfb "))
			s, stdout, stderr := testStreams("", map[string]string{})
			code = run(context.Background(), args, s)
			out = stdout.String() + stderr.String()
			reached[args[0]] = true
			if args[0] == "diff" && strings.Contains(c.line, "--fail-on") {
				reached["gate"] = true
			}
			if args[0] == "view" && slices.Contains(args, "--export") {
				reached["export"] = true
			}
		default:
			cmd := exec.Command("/bin/sh", "-c", c.line)
			b, err := cmd.CombinedOutput()
			out = string(b)
			if err != nil {
				code = cmd.ProcessState.ExitCode()
			}
		}
		if code != c.want {
			t.Fatalf("tour command %d, %q: exit %d, the README says %d\n%s", i+1, c.line, code, c.want, out)
		}
	}
	for _, want := range []string{"init", "run", "runs", "diff", "gate", "export", "report"} {
		if !reached[want] {
			t.Errorf("the tour never reaches %s", want)
		}
	}
}

// tourCommand is a command of the tour and the exit status it promises.
type tourCommand struct {
	line string
	want int
}

// tourCommands are the commands of the README's "A quick tour" code
// blocks that run offline and end: not the install lines, not the
// viewer's server (it runs until Ctrl-C).
func tourCommands(t *testing.T, readme string) []tourCommand {
	t.Helper()
	start := strings.Index(readme, "## A quick tour")
	if start < 0 {
		t.Fatal(`README has no "## A quick tour"`)
	}
	section := readme[start+3:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var out []tourCommand
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		cmd, comment, _ := strings.Cut(line, "   #")
		cmd = strings.TrimSpace(cmd)
		if after, ok := strings.CutPrefix(cmd, "echo $?"); ok && after == "" && len(out) > 0 {
			n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(strings.TrimSpace(comment), ":", 2)[0]))
			if err != nil {
				t.Fatalf("the tour's %q says no exit status", line)
			}
			out[len(out)-1].want = n
			continue
		}
		switch {
		case cmd == "", strings.HasPrefix(cmd, "go install"), strings.HasPrefix(cmd, "export "), strings.HasPrefix(cmd, "source "):
		case cmd == "wfb view":
		default:
			out = append(out, tourCommand{line: cmd})
		}
	}
	if len(out) < 8 {
		t.Fatalf("found %d tour commands, want the whole tour: %+v", len(out), out)
	}
	return out
}

// shellWords splits a command line as sh does for the tour's lines: words
// separated by spaces, '...' and "..." quoting.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
