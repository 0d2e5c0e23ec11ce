package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wfb view refuses to listen beyond loopback without a token, before it
// opens anything, as bad input.
func TestViewBeyondLoopbackWithoutATokenIsBadInput(t *testing.T) {
	_, errOut, code := wfbCmd(t, "view", "--db", filepath.Join(t.TempDir(), "none.db"), "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "--token") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --token", code, errOut)
	}
}

// wfb view --export writes the static site of a real results file (the
// demo's) and prints where its index is.
func TestViewExportWritesTheSiteOfTheDemo(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "wfb.db")
	if _, errOut, code := wfbCmd(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errOut)
	}
	site := filepath.Join(dir, "site")
	out, errOut, code := wfbCmd(t, "view", "--db", db, "--export", site)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); first != filepath.Join(site, "index.html") {
		t.Errorf("first line %q, want the index", first)
	}
	attempts, _ := filepath.Glob(filepath.Join(site, "attempt", "*.html"))
	if len(attempts) != 33 {
		t.Errorf("%d attempt pages, want the demo's 33", len(attempts))
	}
	b, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil || !strings.Contains(string(b), "66.7%") {
		t.Errorf("index lacks the demo's strict rate: %v", err)
	}
}
