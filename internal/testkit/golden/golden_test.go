package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

// A golden check must be able to fail: a difference and a missing file are
// failures, an equal file is not.
func TestCheckFailsOnADifferenceAndAMissingFile(t *testing.T) {
	if Update() {
		t.Skip("-update rewrites files; this test checks comparison")
	}
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("want\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, got string
		fail            bool
	}{
		{"equal", path, "want\n", false},
		{"different", path, "got\n", true},
		{"missing", path + ".none", "want\n", true},
	} {
		r := &recorder{TB: t}
		Check(r, tc.path, []byte(tc.got))
		if r.failed != tc.fail {
			t.Errorf("%s: failed = %v, want %v", tc.name, r.failed, tc.fail)
		}
	}
}
