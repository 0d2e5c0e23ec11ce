package provider

import (
	"flag"
	"os"
	"testing"
)

// TestMain registers -update, which rewrites the golden files under
// testdata/.
func TestMain(m *testing.M) {
	flag.Bool("update", false, "rewrite the golden files under testdata/")
	os.Exit(m.Run())
}
