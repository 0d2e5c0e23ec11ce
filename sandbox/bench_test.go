package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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

// BenchmarkStartTrue measures what a backend adds to starting one process:
// /bin/true run through the backend's Launch (prefix, extra files,
// credential, the Started proof) against /bin/true started directly. The
// sandbox is prepared once, outside the loop.
func BenchmarkStartTrue(b *testing.B) {
	b.Run("backend=none", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range Strength {
		b.Run("backend="+name, func(b *testing.B) {
			if _, reason := newBackend(Options{Backend: name}); reason != "" {
				b.Skip(reason)
			}
			ws := benchTree(b, 1)
			sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: name, AgentBin: "/bin/true"})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			for b.Loop() {
				if _, errOut, started, err := sb.runInside(context.Background(), "/bin/true"); started != nil || err != nil {
					b.Fatalf("started %v, err %v: %s", started, err, errOut)
				}
			}
		})
	}
}

// BenchmarkPrepareCloseBackend measures each backend's per-session
// preflight (the common probes plus, for bwrap and landlock, the live probe
// run through the sandbox) and Close.
func BenchmarkPrepareCloseBackend(b *testing.B) {
	for _, name := range Strength {
		b.Run("backend="+name, func(b *testing.B) {
			if _, reason := newBackend(Options{Backend: name}); reason != "" {
				b.Skip(reason)
			}
			ws := benchTree(b, 1)
			for b.Loop() {
				sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: name, AgentBin: "/bin/true"})
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
