package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/sandbox"
)

// CheckAgent runs an agent CLI's version probe (agent.VersionProbe, the
// probe of a binary whose agent is not known) the way a session of
// backend runs it — in that sandbox, as the session's uid, with its HOME —
// and returns the version it printed, or why it could not: what `wfb
// doctor --agent-bin` shows. A backend can pass its own preflight and still
// fail for one agent's install (bubblewrap and a CLI under /tmp once did).
func CheckAgent(ctx context.Context, backend, bin string) (string, error) {
	dir, err := os.MkdirTemp("", "wfb-agent-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(ws, 0o755); err != nil {
		return "", err
	}
	sb, err := sandbox.Prepare(ctx, sandbox.Options{Workspace: ws, Backend: backend, AgentBin: bin})
	if err != nil {
		return "", fmt.Errorf("prepare the sandbox for it: %w", err)
	}
	defer sb.Close()
	return probeVersionWhy(ctx, sb.AgentBin(), versionProbe{sandbox: sb, dir: sb.Workspace(), home: sb.Home(), tmp: sb.TmpDir()}, agent.VersionProbe)
}
