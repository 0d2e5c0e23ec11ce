package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestADirectoryOrAMissingFileAsTheResultsFileIsBadInput stops `--db DIR`
// from failing as "disk I/O error (10)", exit 1 (the README says a bad
// results file is 2), and a missing ./wfb.db from failing without saying
// where a results file comes from.
func TestADirectoryOrAMissingFileAsTheResultsFileIsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"runs"}, {"sql", "SELECT 1"}, {"session", "--workspace", dir, "--prompt", "p", "--mock-script", writeScript(t, runOKScript)}} {
		_, errOut, code := wfbCmd(t, append(args, "--db", dir)...)
		if code != exitBadInput || !strings.Contains(errOut, "it is a directory; name a results file (e.g. --db "+filepath.Join(dir, "wfb.db")+")") {
			t.Errorf("wfb %s --db DIR: exit %d, stderr %q; want 2 naming the fix", args[0], code, errOut)
		}
	}
	_, errOut, code := wfbCmd(t, "runs", "--db", filepath.Join(dir, "none.db"))
	if code != exitBadInput || !strings.Contains(errOut, "--db FILE or $WFB_DB, or record one first") {
		t.Errorf("a missing file: exit %d, stderr %q", code, errOut)
	}
}
