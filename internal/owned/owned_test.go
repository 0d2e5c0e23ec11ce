package owned

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

func TestMain(m *testing.M) { gate.Main(m, "internal/owned") }

// uidOf is path's owner, not following a symlink.
func uidOf(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid
}

// TestADirectoryOfWfbsOwnNeedsNoOwner stops wfb from chowning what it makes
// in a directory of its own user's (an ordinary user's session HOME), and
// shows MkdirAll making private directories, a file in the way refused.
func TestADirectoryOfWfbsOwnNeedsNoOwner(t *testing.T) {
	root := t.TempDir()
	owner, err := Owner(root)
	if err != nil || owner != nil {
		t.Fatalf("owner of wfb's own directory: %v %v, want none", owner, err)
	}
	if err := MkdirAll(root, "a/b", nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a", "b")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("a/b: %v %v, want a 0700 directory", fi, err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(root, "f/g", nil); err == nil {
		t.Error("a directory was made through a file")
	}
}

// TestWhatWfbMakesInAnotherUsersHomeIsTheirs stops a root wfb from leaving
// root-owned directories and files in a session uid's HOME, which the
// session then cannot write, and Chown from following a symlink out of
// the tree.
func TestWhatWfbMakesInAnotherUsersHomeIsTheirs(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("WFB_REQUIRE_SANDBOX") == "1" {
			t.Fatal("giving files to another user needs root, and a machine that must run the sandbox tests runs them as root")
		}
		gate.Skipf(t, "WFB_REQUIRE_SANDBOX", "giving files to another user needs root")
	}
	const uid, gid = 65534, 65534
	home, outside := t.TempDir(), t.TempDir()
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	owner, err := Owner(home)
	if err != nil || owner == nil || owner.Uid != uid || owner.Gid != gid {
		t.Fatalf("owner of the session's HOME: %+v %v, want %d:%d", owner, err, uid, gid)
	}
	if err := MkdirAll(home, ".wfb-kit/sub", owner); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".wfb-kit", "sub", "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(home, ".wfb-kit", "link")); err != nil {
		t.Fatal(err)
	}
	if err := Chown(filepath.Join(home, ".wfb-kit"), owner); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".wfb-kit", ".wfb-kit/sub", ".wfb-kit/sub/f", ".wfb-kit/link"} {
		if got := uidOf(t, filepath.Join(home, p)); got != uid {
			t.Errorf("%s is uid %d's, want the session's %d", p, got, uid)
		}
	}
	if got := uidOf(t, outside); got == uid {
		t.Error("Chown followed a symlink out of the tree")
	}
}
