package runner_test

import (
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/store"
)

// The tests of package runner meter sessions through the real proxy.
func init() {
	runner.StartTestMeter = func(db *store.DB) (runner.Meter, error) { return meterstore.Start(db) }
}
