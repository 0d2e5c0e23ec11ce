package sandbox

import "github.com/wfbench/wfb/internal/treedigest"

// Digest fingerprints the workspace tree under dir (see treedigest.Of):
// the runner takes it before and after a review session, and a difference
// is workspace-modified.
func Digest(dir string) (string, error) { return treedigest.Of(dir) }
