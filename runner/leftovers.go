package runner

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wfbench/wfb/internal/scratch"
	"github.com/wfbench/wfb/sandbox"
)

// RunDirPrefix starts the name of a sweep's directory (its pristine trees
// and cell copies) in SweepOptions.TempDir: a scratch directory, which a
// later wfb reaps once no wfb holds it (ReapLeftovers).
const RunDirPrefix = "wfb-run-"

// What a wfb killed by SIGKILL (or a crash, or a reset) leaves behind, and
// the next wfb removes: empty session cgroups, each session's own business
// (reapStaleCgroups, at each session's start), and the scratch directories
// of sweeps and sandboxes (ReapLeftovers, at a session's or a run's start).

// ReapLeftovers removes the sweep directories (in tempDir, the temp dir when
// "") and the sandboxes' private roots and workspace copies (in the temp
// dir) that no live wfb holds, and returns them. One in use is locked by the
// wfb that uses it and is left alone (see internal/scratch); so is one made
// by a wfb that did not lock its directories.
func ReapLeftovers(tempDir string) []string {
	reaped := scratch.Reap(tempDir, RunDirPrefix)
	return append(reaped, scratch.Reap("", sandbox.RootPrefix, sandbox.CopyPrefix)...)
}

// reapStaleCgroups removes session cgroups that a wfb killed by SIGKILL
// left behind: empty ones older than age. A live session's cgroup is either
// populated (the kernel refuses to remove it) or younger than a few
// milliseconds (between its creation and the agent's clone, or the agent's
// exit and its removal), so nothing in use is touched.
func reapStaleCgroups(parent string, age time.Duration) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "wfb-session-") {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < age {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if events, err := os.ReadFile(filepath.Join(dir, "cgroup.events")); err == nil && strings.Contains(string(events), "populated 0") {
			os.Remove(dir) // EBUSY if something moved in meanwhile: left alone
		}
	}
}
