package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// requireRootLayout skips a test of the container layouts a root wfb copies
// its way around: as an ordinary user the session is wfb's own uid and
// reaches whatever wfb reaches, so there is nothing to copy.
func requireRootLayout(t *testing.T) {
	t.Helper()
	gate.RequireRoot(t, "as an ordinary user the session runs as wfb's own uid, which reaches and writes what wfb does: wfb copies nothing (the layouts this test covers are a root wfb's)")
}

// rootsHome is a directory like root's home: mode 0700, root's, holding a
// private key beside the checkout.
func rootsHome(t *testing.T) (home, key string) {
	t.Helper()
	home = filepath.Join(traversableDir(t), "root")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	key = filepath.Join(home, ".ssh", "id_ed25519")
	writeFile(t, key, "private-key-bytes\n", 0o644)
	return home, key
}

// TestARootSessionReviewsAWorkspaceUnderRootsHome stops the refusal a
// Docker user met first ("session uid 65534 cannot traverse /root"): the
// review runs, on every backend, in a copy the session can reach; it reads
// the checkout, cannot write it, and sees nothing else of root's home.
func TestARootSessionReviewsAWorkspaceUnderRootsHome(t *testing.T) {
	requireRootLayout(t)
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			tmp := privateTmp(t)
			home, key := rootsHome(t)
			ws := newWorkspace(t, home)
			before, err := Digest(ws)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: backend, AgentBin: "/bin/sh"})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if sb.Origin() != ws || sb.Workspace() == ws {
				t.Errorf("Origin %q, Workspace %q; want a copy of %s", sb.Origin(), sb.Workspace(), ws)
			}
			if backend == HostUnsafe {
				// The runner's boundary for host-unsafe, on what the session sees.
				restore, err := WorkspaceWriteBoundary(sb.Workspace())
				if err != nil {
					t.Fatal(err)
				}
				defer restore()
			}
			if out, err := runAs(t, sb, "cat source.ts"); err != nil || !strings.Contains(out, "answer = 42") {
				t.Errorf("the review cannot read its workspace: %v: %q", err, out)
			}
			for _, attack := range []string{"echo tampered > source.ts", "cat " + key, "echo tampered > " + filepath.Join(ws, "source.ts")} {
				if out, err := runAs(t, sb, attack); err == nil || strings.Contains(out, "private-key") {
					t.Errorf("%q succeeded: %q", attack, out)
				}
			}
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
			if after, err := Digest(ws); err != nil || after != before {
				t.Errorf("the original moved (%v)", err)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("Close left %v behind", left)
			}
		})
	}
}

// TestARootOwnedArtifactDirReceivesTheArtifact stops the refusal "fix:
// chown 65534" for an --artifact-dir root owns: the session writes into
// its private root and wfb copies the artifact out — a regular file only,
// never what a symlink planted there points at.
func TestARootOwnedArtifactDirReceivesTheArtifact(t *testing.T) {
	requireRootLayout(t)
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			base := traversableDir(t)
			art := filepath.Join(base, "artifacts")
			if err := os.Mkdir(art, 0o755); err != nil {
				t.Fatal(err)
			}
			sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, base), Backend: backend, AgentBin: "/bin/sh", ArtifactDir: art})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			defer sb.Close()
			if sb.DeliverTo() != art || within(sb.ArtifactDir(), sb.Root()) != true {
				t.Errorf("DeliverTo %q, ArtifactDir %q; want the private root's, delivered to %s", sb.DeliverTo(), sb.ArtifactDir(), art)
			}
			artifact, err := PrepareReviewWorkspace(sb, "review-output.json")
			if err != nil {
				t.Fatal(err)
			}
			doc := `{"schema_version": 1, "verdict": "approve", "findings": []}`
			script := "printf '%s' '" + doc + "' > '" + artifact + ".tmp' && mv '" + artifact + ".tmp' '" + artifact + "' && ln -s /etc/shadow " + filepath.Join(sb.ArtifactDir(), "planted")
			if out, err := runAs(t, sb, script); err != nil {
				t.Fatalf("the session could not write its artifact: %v: %s", err, out)
			}
			if err := sb.DeliverArtifacts(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(art, "review-output.json")); got != doc {
				t.Errorf("delivered artifact %q", got)
			}
			if _, err := os.Lstat(filepath.Join(art, "planted")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the planted symlink was delivered: %v", err)
			}
			// The delivered one is as good as an earlier session's: refused.
			if _, err := PrepareReviewWorkspace(sb, "review-output.json"); err == nil {
				t.Error("an artifact already in the given dir was not refused")
			}
		})
	}
}

// TestEditingARootOwnedWorkspaceAppliesTheChangesBack stops the refusal of
// --edit on a root-owned checkout: the session edits a copy shared with its
// group, and ApplyEdits brings back every kind of change — a rewrite, a new
// file in a new directory, a deletion, a script made executable — keeping
// the original's owner and modes (not the copy's group write).
func TestEditingARootOwnedWorkspaceAppliesTheChangesBack(t *testing.T) {
	requireRootLayout(t)
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			ws := newWorkspace(t, traversableDir(t))
			writeFile(t, filepath.Join(ws, "obsolete.txt"), "old\n", 0o644)
			writeFile(t, filepath.Join(ws, "run.sh"), "echo run\n", 0o644)
			untouched := filepath.Join(ws, "untouched.txt")
			writeFile(t, untouched, "same\n", 0o600)
			sb, err := Prepare(context.Background(), Options{Workspace: ws, WorkspaceWritable: true, Backend: backend, AgentBin: "/bin/sh"})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			defer sb.Close()
			if sb.Origin() != ws {
				t.Fatalf("Origin %q; want the session to edit a copy of %s", sb.Origin(), ws)
			}
			edit := "printf fixed > source.ts.tmp && mv source.ts.tmp source.ts && mkdir -p src/new && echo added > src/new/file.ts && rm obsolete.txt && cp run.sh run.sh.new && chmod +x run.sh.new && mv run.sh.new run.sh"
			if out, err := runAs(t, sb, edit); err != nil {
				t.Fatalf("the session could not edit its copy: %v: %s", err, out)
			}
			if got := readFile(t, filepath.Join(ws, "source.ts")); got == "fixed" {
				t.Fatal("the edit reached the original before ApplyEdits")
			}
			if err := sb.ApplyEdits(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(ws, "source.ts")); got != "fixed" {
				t.Errorf("source.ts = %q, want the session's edit", got)
			}
			if got := readFile(t, filepath.Join(ws, "src", "new", "file.ts")); got != "added\n" {
				t.Errorf("the new file = %q", got)
			}
			if _, err := os.Lstat(filepath.Join(ws, "obsolete.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the deleted file is still there: %v", err)
			}
			for p, want := range map[string]os.FileMode{filepath.Join(ws, "source.ts"): 0o644, filepath.Join(ws, "run.sh"): 0o755, untouched: 0o600, ws: 0o755} {
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != want || fi.Sys().(*syscall.Stat_t).Uid != 0 {
					t.Errorf("%s: mode %v owner %d, want %v owned by root", p, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid, want)
				}
			}
		})
	}
}

// TestAWorkspaceCopyRefusesASpecialFile stops a copy that hangs on a fifo
// or reproduces a device: CopyTree names the file and what it is, and a
// root wfb that must copy such a workspace refuses the session with it.
func TestAWorkspaceCopyRefusesASpecialFile(t *testing.T) {
	base := traversableDir(t)
	ws := newWorkspace(t, base)
	fifo := filepath.Join(ws, "events.pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	err := CopyTree(ws, filepath.Join(base, "copy"))
	var special *SpecialFileError
	if !errors.As(err, &special) || special.Path != fifo || !strings.Contains(err.Error(), "named pipe (fifo)") {
		t.Fatalf("CopyTree = %v; want a SpecialFileError naming %s as a fifo", err, fifo)
	}
	gate.RequireRoot(t, "as an ordinary user wfb never copies a workspace; the refusal through Prepare is a root wfb's")
	tmp := privateTmp(t)
	home, _ := rootsHome(t)
	locked := filepath.Join(home, "clone")
	if err := os.Rename(ws, locked); err != nil {
		t.Fatal(err)
	}
	sb, err := Prepare(context.Background(), Options{Workspace: locked, Backend: HostUnsafe, AgentBin: "/bin/sh"})
	if err == nil {
		sb.Close()
		t.Fatal("Prepare copied a workspace holding a fifo")
	}
	if r := asRefused(t, err); !strings.Contains(r.Reason, filepath.Join(locked, "events.pipe")+" is a named pipe (fifo)") || !strings.Contains(r.Reason, "cannot traverse "+home) {
		t.Errorf("reason %q; want why it copies and what it cannot copy", r.Reason)
	}
	if left := entries(t, tmp); len(left) != 0 {
		t.Errorf("the refusal left %v behind", left)
	}
}

// TestARefusalOfACopiedWorkspaceNamesTheUsersPath stops a root review of a
// checkout whose own top directory is 0700 from being refused naming wfb's
// temporary copy of it ("cannot read the workspace
// /tmp/wfb-sandbox-copy-…/clone"), a path the user never gave and that is
// gone by the time they read the message: the refusal names their path.
func TestARefusalOfACopiedWorkspaceNamesTheUsersPath(t *testing.T) {
	requireRootLayout(t)
	privateTmp(t)
	ws := newWorkspace(t, traversableDir(t))
	if err := os.Chmod(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	sb, err := Prepare(context.Background(), Options{Workspace: ws, Backend: HostUnsafe, AgentBin: "/bin/sh"})
	if err == nil {
		sb.Close()
		t.Skip("the session reached a 0700 workspace: nothing to refuse")
	}
	msg := err.Error()
	if !strings.Contains(msg, ws) || strings.Contains(msg, CopyPrefix) {
		t.Errorf("refusal %q: want it to name %s, not wfb's copy", msg, ws)
	}
}
