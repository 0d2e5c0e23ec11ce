package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
)

// kernelBackend skips a test of a backend this machine cannot run (by its
// live preflight), or fails it under WFB_REQUIRE_SANDBOX=1.
func kernelBackend(t *testing.T, name, workspace string) {
	t.Helper()
	sb, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: workspace, Backend: name, AgentBin: "/bin/sh"})
	if err == nil {
		sb.Close()
		return
	}
	if os.Getenv("WFB_REQUIRE_SANDBOX") == "1" {
		t.Fatalf("WFB_REQUIRE_SANDBOX=1 and %v", err)
	}
	gate.Skipf(t, "WFB_REQUIRE_SANDBOX", "%v (WFB_REQUIRE_SANDBOX=1 makes this a failure)", err)
}

// TestARealCLIReviewsInEveryKernelSandbox runs the real Claude CLI as npm
// installs it — node_modules/.bin/claude, a symlink into its package — in
// a review under bwrap (where it died at once with "execvp …: No such file
// or directory") and under Landlock: the artifact lands and the row is ok.
// Gemini CLI too: its .bin link is a Node script, which needs node and the
// rest of its package inside the sandbox.
func TestARealCLIReviewsInEveryKernelSandbox(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		if c.agent == bench.AgentCodex {
			continue
		}
		for _, backend := range []string{sandbox.Bwrap, sandbox.Landlock} {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				c := require(t, c)
				if fi, err := os.Lstat(c.bin); err == nil && fi.Mode()&os.ModeSymlink == 0 {
					t.Logf("%s is not a symlink; the npm layout's .bin link is not exercised", c.bin)
				}
				reviewInSandbox(t, c, backend)
			})
		}
	}
}

// reviewInSandbox runs a review by c under backend and checks the row.
func reviewInSandbox(t *testing.T, c cli, backend string) {
	t.Helper()
	r := newRig(t, nil)
	kernelBackend(t, backend, r.workspace)
	artifactDir := filepath.Join(r.tmp, "artifacts")
	artifact := filepath.Join(artifactDir, review.ReviewOutput)
	r.p.Close()
	r.p = startProvider(t, &provider.Script{Replies: []provider.Reply{
		{Text: "writing the review", Tools: []provider.Tool{c.writeFile(artifact, reviewArtifact)}, Usage: provider.FullUsage(900, 60, 0, 0)},
		{Text: "review written", Usage: provider.FullUsage(1000, 12, 0, 0)},
	}})
	row := r.run(t, r.cell(c, func(cell *runner.Cell) {
		cell.Sandbox, cell.Review, cell.ArtifactDir = backend, true, artifactDir
		cell.Prompt = "Review the change in source.ts."
	}))
	requireOK(t, row)
	if row.Sandbox != backend || row.Verdict != "request_changes" {
		t.Errorf("row sandbox %q verdict %q", row.Sandbox, row.Verdict)
	}
}
