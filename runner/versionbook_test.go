package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/store"
)

// fakeCLI writes (or rewrites in place: same inode) an agent CLI that
// logs each start to log and prints version; its mtime is pinned as npm
// pins every file it unpacks.
func fakeCLI(t *testing.T, path, log, version string) {
	t.Helper()
	script := "#!/bin/sh\necho start >> " + log + "\necho '" + version + " (fake CLI)'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	npmTime := time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)
	if err := os.Chtimes(path, npmTime, npmTime); err != nil {
		t.Fatal(err)
	}
}

func starts(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start\n")
}

// A later process asking the version of a binary the results file has
// already seen does not start it again (versionCache.Clear stands for the
// new process; the book is a real results file), and a binary rewritten
// in place — same path, size and npm's pinned mtime — is asked again.
func TestAnAgentBinaryAlreadyAskedIsNotStartedAgainForItsVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bin, log := filepath.Join(dir, "fake-cli"), filepath.Join(dir, "starts.log")
	fakeCLI(t, bin, log, "9.8.7")
	where := versionProbe{dir: dir, home: dir, tmp: dir, book: db}
	ask := func() string {
		t.Helper()
		versionCache.Clear()
		v, err := probeVersionWhy(ctx, bin, where, agent.VersionProbe)
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		return v
	}

	if v := ask(); v != "9.8.7" || starts(t, log) != 1 {
		t.Fatalf("first probe: version %q after %d starts, want 9.8.7 after 1", v, starts(t, log))
	}
	if v := ask(); v != "9.8.7" || starts(t, log) != 1 {
		t.Fatalf("second process: version %q after %d starts, want 9.8.7 without a second start", v, starts(t, log))
	}

	// An upgrade that keeps the entry script's path, inode, size and npm's
	// mtime: only its ctime tells it apart.
	time.Sleep(10 * time.Millisecond) // ctime's clock tick, on coarse filesystems
	fakeCLI(t, bin, log, "9.8.8")
	if v := ask(); v != "9.8.8" || starts(t, log) != 2 {
		t.Fatalf("after the binary was rewritten: version %q after %d starts, want 9.8.8 after 2", v, starts(t, log))
	}

	// Without a book (no results file), every process asks.
	where.book = nil
	if v := ask(); v != "9.8.8" || starts(t, log) != 3 {
		t.Fatalf("without a book: version %q after %d starts, want 9.8.8 after 3", v, starts(t, log))
	}
}

// A probe that found no version leaves nothing in the book: the next
// process asks again rather than remember an empty answer.
func TestAVersionlessAnswerIsNotRemembered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bin, log := filepath.Join(dir, "fake-cli"), filepath.Join(dir, "starts.log")
	fakeCLI(t, bin, log, "no version here")
	where := versionProbe{dir: dir, home: dir, tmp: dir, book: db}
	for i := 1; i <= 2; i++ {
		versionCache.Clear()
		if v, err := probeVersionWhy(ctx, bin, where, agent.VersionProbe); v != "" || err == nil {
			t.Fatalf("probe %d: version %q, err %v; want none, with why", i, v, err)
		}
		if n := starts(t, log); n != i {
			t.Fatalf("probe %d: %d starts, want %d", i, n, i)
		}
	}
}
