package report

import (
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// TestMain says, in one line, when the Chromium render test skipped (see
// gate).
func TestMain(m *testing.M) { gate.Main(m, "report") }
