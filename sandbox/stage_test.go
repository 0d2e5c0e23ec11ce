package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStageExecutableLinksOnlyWhatNoSessionCanChange: staging links the
// executable when nobody but root or wfb's user can change it and anyone
// may run it, and copies it (mode 0755) otherwise — a group- or
// other-writable file, one only its owner can run, one another user owns.
func TestStageExecutableLinksOnlyWhatNoSessionCanChange(t *testing.T) {
	cases := []struct {
		name  string
		mode  os.FileMode
		chown int // -1: keep wfb's own uid
		link  bool
	}{
		{"wfb's, 0755", 0o755, -1, true},
		{"wfb's, 0555", 0o555, -1, true},
		{"group-writable", 0o775, -1, false},
		{"other-writable", 0o757, -1, false},
		{"owner-only", 0o700, -1, false},
		{"another user's", 0o755, 12345, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.chown >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "agent"), filepath.Join(dir, "staged")
			if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(src, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.chown >= 0 {
				if err := os.Chown(src, c.chown, c.chown); err != nil {
					t.Fatal(err)
				}
			}
			// Through a symlink, as `go run` and npm's .bin present binaries.
			link := filepath.Join(dir, "via-symlink")
			if err := os.Symlink(src, link); err != nil {
				t.Fatal(err)
			}
			if err := StageExecutable(link, dst); err != nil {
				t.Fatal(err)
			}
			si, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			di, err := os.Lstat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if got := os.SameFile(si, di); got != c.link {
				t.Errorf("staged as a link: %v; want %v", got, c.link)
			}
			if !c.link && di.Mode().Perm() != 0o755 {
				t.Errorf("the copy's mode is %v; want 0755", di.Mode().Perm())
			}
			if b, err := os.ReadFile(dst); err != nil || string(b) != "#!/bin/sh\necho hi\n" {
				t.Errorf("staged content %q, %v", b, err)
			}
		})
	}
}
