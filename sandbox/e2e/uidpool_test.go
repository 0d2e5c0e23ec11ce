package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// TestTwoConcurrentSessionsCannotReadEachOthersKey is the report
// through the real session path: arm b's agent holds its API key in its
// environment and waits on the model; arm a's agent, running at the same
// time, scans every /proc/PID/environ for that key. Under host-unsafe both
// ran as uid 65534 and a found it; now each session holds its own uid of
// the pool (and the kernel backends hide b's processes besides).
func TestTwoConcurrentSessionsCannotReadEachOthersKey(t *testing.T) {
	for _, backend := range sandbox.Strength {
		t.Run(backend, func(t *testing.T) {
			if backend == sandbox.HostUnsafe {
				gate.RequireRoot(t, "as an ordinary user host-unsafe runs every session as wfb's own uid, which can read its own processes' environment; docs/sandboxes.md's limits say so")
			}
			requireBackend(t, backend)
			ra, rb := newRig(t), newRig(t)
			rb.db, rb.runID = ra.db, ra.runID
			key := fmt.Sprintf("sk-arm-b-%d-secret", time.Now().UnixNano())

			pb, err := provider.Start(&provider.Script{Default: &provider.Reply{Hang: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer pb.Close()
			cb := rb.cell(t, backend, pb)
			cb.Arm, cb.APIKey = "b", key
			ctxB, cancelB := context.WithCancel(context.Background())
			doneB := make(chan store.Result, 1)
			go func() {
				row, _ := runner.RunCell(ctxB, rb.db, cb)
				doneB <- row
			}()
			defer func() { cancelB(); <-doneB }()
			// b's agent is running, key in its environment, once its
			// request reached the model.
			for len(pb.MessageRequests()) == 0 {
				select {
				case row := <-doneB:
					t.Fatalf("arm b ended before it reached the model: %s: %s", row.ErrorKind, row.ErrorDetail)
				case <-time.After(20 * time.Millisecond):
				}
			}

			scan := `n=0; for f in /proc/[0-9]*/environ; do n=$((n+1)); if grep -q "$1" "$f" 2>/dev/null; then echo "READ $f"; fi; done; echo "scanned $n"`
			pa, err := provider.Start(&provider.Script{
				Replies: []provider.Reply{{Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "sh -c '" + scan + "' scan " + key}}}, Usage: provider.FullUsage(10, 5, 0, 0)}},
				Default: &provider.Reply{Text: "done", Usage: provider.FullUsage(10, 5, 0, 0)},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer pa.Close()
			ca := ra.cell(t, backend, pa)
			ca.Arm, ca.Review, ca.ArtifactDir = "a", false, filepath.Join(ra.tmp, "art-a")
			row, err := runner.RunCell(context.Background(), ra.db, ca)
			if err != nil {
				t.Fatal(err)
			}
			if !row.OK {
				t.Fatalf("arm a: %s: %s", row.ErrorKind, row.ErrorDetail)
			}
			res := toolResults(t, pa)
			if len(res) != 1 {
				t.Fatalf("%d tool results", len(res))
			}
			out := fmt.Sprint(res[0]["content"])
			t.Logf("arm a's scan: %s", out)
			if !strings.Contains(out, "scanned ") {
				t.Fatalf("the scan did not run: %s", out)
			}
			if strings.Contains(out, "READ ") {
				t.Errorf("arm a read arm b's key from another process's environment: %s", out)
			}
		})
	}
}
