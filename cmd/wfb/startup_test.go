package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// initialized runs this test binary (which links what wfb links) with args
// and GODEBUG=inittrace=1, and returns the packages whose init finished, in
// order (a package that exits in its init is not among them). The process
// must exit 0.
func initialized(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			pkgs = append(pkgs, f[1])
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("%v: no inittrace lines on stderr:\n%s", args, stderr.String())
	}
	return pkgs
}

// heavyPackages are what wfb initialises for its own work (SQLite, tables,
// YAML, HTTP, its store and runner) and the processes it puts in front of
// an agent must never pay for.
var heavyPackages = []string{
	"modernc.org/", "github.com/olekukonko/", "github.com/goccy/", "net/http",
	"github.com/spf13/", "github.com/wfbench/wfb/store", "github.com/wfbench/wfb/runner",
}

// TestAgentExecStartsBeforeWfbsPackages: agent-exec, which wfb starts in
// front of every agent, takes the process over in its package's init,
// before the runtime initialises SQLite, table rendering, YAML or HTTP —
// tens of milliseconds per session otherwise. An import that initialises
// late (strings, os/exec, path/filepath, x/sys/unix) would undo it.
func TestAgentExecStartsBeforeWfbsPackages(t *testing.T) {
	pkgs := initialized(t, "agent-exec", "--fds", "0", "--", "/bin/true")
	for _, p := range pkgs {
		for _, h := range heavyPackages {
			if strings.HasPrefix(p, h) {
				t.Errorf("agent-exec initialised %s before it ran; its init must come first", p)
			}
		}
	}
}

// TestTheLandlockLauncherStartsBeforeWfbsPackages: the landlock launcher,
// which wfb starts in front of every landlock session and its probe, takes
// the process over in its package's init, before SQLite, table rendering,
// HTTP or wfb's store and runner are initialised. (It needs Landlock's
// library and x/sys/unix, which Go initialises about halfway.)
func TestTheLandlockLauncherStartsBeforeWfbsPackages(t *testing.T) {
	pkgs := initialized(t, "sandbox-exec", "--ro", "/", "--", "/bin/true")
	heavy := map[string]bool{
		"modernc.org/libc": true, "modernc.org/sqlite/lib": true, "github.com/olekukonko/tablewriter/pkg/twwidth": true,
		"net/http": true, "github.com/spf13/cobra": true, "github.com/wfbench/wfb/store": true, "github.com/wfbench/wfb/runner": true,
	}
	for _, p := range pkgs {
		if heavy[p] {
			t.Errorf("the launcher initialised %s before it ran; its init must come first", p)
		}
	}
}
