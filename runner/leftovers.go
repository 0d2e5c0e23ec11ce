package runner

import (
	"github.com/wfbench/wfb/internal/scratch"
	"github.com/wfbench/wfb/sandbox"
)

// RunDirPrefix starts the name of a sweep's directory (its pristine trees
// and cell copies) in SweepOptions.TempDir: a scratch directory, which a
// later wfb reaps once no wfb holds it (ReapLeftovers).
const RunDirPrefix = "wfb-run-"

// ReapLeftovers removes the sweep directories (in tempDir, the temp dir when
// "") and the sandboxes' private roots and workspace copies (in the temp
// dir) that no live wfb holds, and returns them: what a wfb killed by
// SIGKILL (or a crash, or a reset) left behind, removed at a session's or a
// run's start. One in use is locked by the wfb that uses it and is left
// alone (see internal/scratch); so is one made by a wfb that did not lock
// its directories. A session's leftover cgroups are proc's to reap.
func ReapLeftovers(tempDir string) []string {
	reaped := scratch.Reap(tempDir, RunDirPrefix)
	return append(reaped, scratch.Reap("", sandbox.RootPrefix, sandbox.CopyPrefix)...)
}
