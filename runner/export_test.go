package runner

import "github.com/wfbench/wfb/store"

// StartTestMeter starts the real metering proxy for a test:
// runner/meterstore's Start, which imports this package, so that this
// package's own tests reach it through this variable, set by meter_test.go
// (package runner_test).
var StartTestMeter func(db *store.DB) (Meter, error)
