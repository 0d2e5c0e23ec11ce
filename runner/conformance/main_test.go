package conformance

import (
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// TestMain says, in one line, which real-agent tests skipped and how to
// make them mandatory (see gate).
func TestMain(m *testing.M) { gate.Main(m, "runner/conformance") }
