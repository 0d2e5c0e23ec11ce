package treedigest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func digestTree(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "clone")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "source.ts"), "export const answer = 42;\n", 0o644)
	if err := os.MkdirAll(filepath.Join(ws, "src", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "src", "lib", "a.go"), "package lib\n", 0o644)
	writeFile(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\n", 0o755)
	if err := os.Symlink("src/lib/a.go", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func mustDigest(t *testing.T, dir string) string {
	t.Helper()
	d, err := Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDigestSeesEveryKindOfChange stops a workspace-modified check that
// misses a change a review session could make (a new or deleted file, a
// retargeted symlink, a chmod) or that calls an identical tree different.
func TestDigestSeesEveryKindOfChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, ws string)
	}{
		{"content", func(t *testing.T, ws string) {
			writeFile(t, filepath.Join(ws, "source.ts"), "export const answer = 43;\n", 0o644)
		}},
		{"same size content", func(t *testing.T, ws string) { writeFile(t, filepath.Join(ws, "src/lib/a.go"), "package lix\n", 0o644) }},
		{"new file", func(t *testing.T, ws string) { writeFile(t, filepath.Join(ws, "src/new.go"), "", 0o644) }},
		{"new empty dir", func(t *testing.T, ws string) { os.Mkdir(filepath.Join(ws, "empty"), 0o755) }},
		{"deleted file", func(t *testing.T, ws string) { os.Remove(filepath.Join(ws, "run.sh")) }},
		{"renamed file", func(t *testing.T, ws string) { os.Rename(filepath.Join(ws, "run.sh"), filepath.Join(ws, "run2.sh")) }},
		{"mode", func(t *testing.T, ws string) { os.Chmod(filepath.Join(ws, "run.sh"), 0o744) }},
		{"dir mode", func(t *testing.T, ws string) { os.Chmod(filepath.Join(ws, "src"), 0o700) }},
		{"setuid bit", func(t *testing.T, ws string) { os.Chmod(filepath.Join(ws, "run.sh"), 0o755|os.ModeSetuid) }},
		{"symlink retarget", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, "link"))
			os.Symlink("source.ts", filepath.Join(ws, "link"))
		}},
		{"file becomes symlink", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, "source.ts"))
			os.Symlink("export const answer = 42;\n", filepath.Join(ws, "source.ts"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := digestTree(t)
			before := mustDigest(t, ws)
			if again := mustDigest(t, ws); again != before {
				t.Fatalf("digest not stable: %s then %s", before, again)
			}
			tc.change(t, ws)
			if after := mustDigest(t, ws); after == before {
				t.Errorf("digest unchanged (%s) after a %s change", after, tc.name)
			}
		})
	}
}

// TestDigestOfAnIdenticalCopyIsTheSame stops a digest that depends on where
// the tree lives, its owners or its times (a false workspace-modified).
func TestDigestOfAnIdenticalCopyIsTheSame(t *testing.T) {
	ws := digestTree(t)
	copyDir := filepath.Join(t.TempDir(), "copy")
	// cp -a keeps modes, symlinks and FIFOs; times differ anyway after a copy.
	if out, err := exec.Command("cp", "-a", ws, copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	a, b := mustDigest(t, ws), mustDigest(t, copyDir)
	if a != b {
		t.Errorf("identical copies differ: %s vs %s", a, b)
	}
	if !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("digest %q is not sha256:<64 hex>", a)
	}
}

// TestDigestRefusesANonDirectory stops a digest of a symlinked workspace
// that hashes the link and never looks inside.
func TestDigestRefusesANonDirectory(t *testing.T) {
	ws := digestTree(t)
	link := filepath.Join(t.TempDir(), "ws-link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Of(link); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("Of(symlink) err = %v", err)
	}
}
