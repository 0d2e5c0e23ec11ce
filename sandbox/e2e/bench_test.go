package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// BenchmarkStandInReviewSession measures one whole review cell per backend:
// Prepare (preflight with live probes, staging the stand-in), the session
// (one scripted Write turn against the mock provider), the digests, the
// artifact parse and the row written to SQLite. backend=none is the same
// session through runner.RecordSession with no sandbox at all, the baseline
// the overhead is read against.
func BenchmarkStandInReviewSession(b *testing.B) {
	for _, backend := range append([]string{"none"}, sandbox.Strength...) {
		b.Run("backend="+backend, func(b *testing.B) {
			ctx := context.Background()
			dir, err := os.MkdirTemp("", "wfb-e2e-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			if err := os.Chmod(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			dir, _ = filepath.EvalSymlinks(dir)
			b.Setenv("TMPDIR", dir)
			ws := filepath.Join(dir, "clone")
			if err := os.Mkdir(ws, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			db, err := store.Open(ctx, filepath.Join(dir, "wfb.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			runID := store.NewID("run")
			if err := db.CreateRun(ctx, store.Run{ID: runID, Kind: "session", StartedAt: time.Now().UTC(), Status: wfb.RunRunning}); err != nil {
				b.Fatal(err)
			}
			self, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				artDir := filepath.Join(dir, "art", time.Now().Format("150405.000000000"))
				if err := os.MkdirAll(filepath.Dir(artDir), 0o755); err != nil {
					b.Fatal(err)
				}
				artifact := filepath.Join(artDir, "review-output.json")
				p, err := provider.Start(&provider.Script{
					Replies: []provider.Reply{{Tools: []provider.Tool{{Name: "Write", Input: map[string]any{"file_path": artifact, "content": reviewJSON}}}, Usage: provider.FullUsage(10, 5, 0, 0)}},
				})
				if err != nil {
					b.Fatal(err)
				}
				var row store.Result
				if backend == "none" {
					if err := os.Mkdir(artDir, 0o777); err != nil {
						b.Fatal(err)
					}
					row, err = runner.RecordSession(ctx, db, runner.SessionSpec{
						SessionKey: runner.SessionKey{RunID: runID, Task: "seed", Arm: "stand-in", Agent: bench.AgentStandIn, AgentBin: self,
							AgentArgs: []string{"mock", "agent"}, Model: "stand-in", Prompt: "review the change", Timeout: time.Minute},
						Workdir: ws, Review: &runner.ReviewSpec{ArtifactPath: artifact},
						Env: map[string]string{"ANTHROPIC_BASE_URL": p.URL(), "ANTHROPIC_API_KEY": "offline", "WFB_TEST_AGENT": "1", "PATH": "/usr/bin:/bin"},
					})
				} else {
					row, err = runner.RunCell(ctx, db, runner.Cell{
						SessionKey: runner.SessionKey{RunID: runID, Task: "seed", Arm: "stand-in", Rep: i,
							Agent: bench.AgentStandIn, AgentBin: self, AgentArgs: []string{"mock", "agent"},
							Model: "stand-in", Prompt: "review the change", Timeout: time.Minute},
						Workspace: ws, Sandbox: backend,
						Review: true, ArtifactDir: artDir, BaseURL: p.URL(), APIKey: "offline",
						ExtraEnv: map[string]string{"WFB_TEST_AGENT": "1"},
					})
				}
				p.Close()
				if err != nil {
					b.Fatal(err)
				}
				if !row.OK {
					b.Fatalf("%s: %s: %s", backend, row.ErrorKind, row.ErrorDetail)
				}
			}
		})
	}
}
