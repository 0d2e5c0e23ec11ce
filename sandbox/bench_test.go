package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchTree makes a workspace of n 4 KiB files spread over directories.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	ws := filepath.Join(dir, "ws")
	content := make([]byte, 4096)
	for i := range n {
		sub := filepath.Join(ws, fmt.Sprintf("d%02d", i%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.go", i)), content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkPrepareClose measures the per-session cost of host-unsafe:
// preflight (two probe subprocesses), private root, Close.
func BenchmarkPrepareClose(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			ws := benchTree(b, n)
			for b.Loop() {
				sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "/bin/true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := sb.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDigest measures one workspace digest (taken twice per review).
func BenchmarkDigest(b *testing.B) {
	ws := benchTree(b, 1000)
	for b.Loop() {
		if _, err := Digest(ws); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteBoundary measures applying and restoring the boundary.
func BenchmarkWriteBoundary(b *testing.B) {
	ws := benchTree(b, 1000)
	for b.Loop() {
		restore, err := WorkspaceWriteBoundary(ws)
		if err != nil {
			b.Fatal(err)
		}
		if err := restore(); err != nil {
			b.Fatal(err)
		}
	}
}
