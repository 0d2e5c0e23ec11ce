package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/sandbox"
)

// TestAnAgentTheSandboxCannotExecuteIsASpawnFailure stops an exec failure
// inside a sandbox from being recorded as a session-error (as bwrap's
// "execvp …: No such file or directory" was): whether the runner's own
// start fails (host-unsafe) or the sandbox's launcher does (bwrap, the
// landlock launcher), nothing of the agent ran, and the row says
// spawn-failure with the launcher's reason, no duration, no model request.
func TestAnAgentTheSandboxCannotExecuteIsASpawnFailure(t *testing.T) {
	for _, backend := range sandbox.Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			r := newRig(t)
			bin := filepath.Join(r.tmp, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			noInterpreter := filepath.Join(bin, "agent")
			if err := os.WriteFile(noInterpreter, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			dangling := filepath.Join(bin, "claude")
			if err := os.Symlink("../gone/claude.exe", dangling); err != nil {
				t.Fatal(err)
			}
			for i, agent := range []string{noInterpreter, dangling} {
				p, err := provider.Start(&provider.Script{})
				if err != nil {
					t.Fatal(err)
				}
				c := r.cell(t, backend, p)
				c.AgentBin, c.AgentStaged, c.Rep = agent, true, i+1
				row, err := runner.RunCell(context.Background(), r.db, c)
				p.Close()
				if err != nil {
					t.Fatal(err)
				}
				r.checkStored(t, row)
				if row.ErrorKind != wfb.KindSpawnFailure || row.ProcessState != wfb.StateSpawnFailure {
					t.Errorf("%s: row %s (state %s): %s; want spawn-failure", agent, row.ErrorKind, row.ProcessState, row.ErrorDetail)
				}
				if !strings.Contains(row.ErrorDetail, agent) && !strings.Contains(row.ErrorDetail, "no such file") {
					t.Errorf("%s: detail %q names neither the agent nor the cause", agent, row.ErrorDetail)
				}
				if row.DurationMS != nil {
					t.Errorf("%s: duration %d recorded for an agent that never ran", agent, *row.DurationMS)
				}
				if n := len(p.MessageRequests()); n != 0 {
					t.Errorf("%s: the model saw %d requests", agent, n)
				}
			}
		})
	}
}
