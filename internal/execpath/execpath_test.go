package execpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookPathFindsWhatOsExecWould: the first executable regular file of
// an absolute $PATH directory; never a relative directory's, a directory or
// a file without an execute bit; a name with a slash as it is.
func TestLookPathFindsWhatOsExecWould(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("plain/agent", 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "isdir", "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := write("bin/agent", 0o755)
	write("later/agent", 0o755)
	t.Chdir(dir)
	write("rel/agent", 0o755)
	t.Setenv("PATH", strings.Join([]string{"rel", "", filepath.Join(dir, "plain"), filepath.Join(dir, "isdir"), filepath.Join(dir, "bin") + "/", filepath.Join(dir, "later")}, ":"))
	if got, err := LookPath("agent"); err != nil || got != want {
		t.Errorf("LookPath(agent) = %q, %v; want %q", got, err, want)
	}
	if got, err := LookPath("./x/y"); err != nil || got != "./x/y" {
		t.Errorf("a name with a slash: %q, %v", got, err)
	}
	if _, err := LookPath("missing"); err == nil || !strings.Contains(err.Error(), `"missing": executable file not found in $PATH`) {
		t.Errorf("a missing name: %v", err)
	}
}
