package shellword

import "testing"

// TestHintsQuoteTheFileNamesTheyRepeat stops a hint (a resume command, a
// wfb upgrade --db FILE) from naming a file a shell would split or
// expand: pasted back, it must name the same file.
func TestHintsQuoteTheFileNamesTheyRepeat(t *testing.T) {
	for in, want := range map[string]string{
		"bench.yaml":    "bench.yaml",
		"/tmp/x/wfb.db": "/tmp/x/wfb.db",
		"my bench.yaml": "'my bench.yaml'",
		"it's.yaml":     `'it'\''s.yaml'`,
		"$HOME/b.yaml":  "'$HOME/b.yaml'",
		"":              "''",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
