package view

import (
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

func TestMain(m *testing.M) { gate.Main(m, "view") }
