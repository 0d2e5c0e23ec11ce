package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// TestTheArtifactIsReadWithinBounds stops the review recorder from trusting
// what the agent left at the artifact path: a symlink is never followed (to
// /dev/zero it read until memory ran out; to a file only wfb can read, it
// stored that file), a FIFO is never opened for a blocking read, and an
// oversize file is kept as its first MaxArtifactBytes with its real size and
// digest. Each row is recorded all the same.
func TestTheArtifactIsReadWithinBounds(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, []byte(`{"schema_version":1,"verdict":"approve","findings":[],"x":"PRIVATE-BYTES"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	big := append([]byte(reviewJSON), make([]byte, 2*review.MaxArtifactBytes)...)
	cases := []struct {
		name      string
		make      func(path string) error
		wantBytes int64 // -1: no artifact stored
	}{
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, -1},
		{"symlink to a private file", func(p string) error { return os.Symlink(private, p) }, -1},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, -1},
		{"oversize", func(p string) error { return os.WriteFile(p, big, 0o644) }, int64(len(big))},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name, review.ReviewOutput)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			row := store.Result{RunID: r.runID, Task: "rev", Arm: "a", Rep: i, Attempt: 1, StartedAt: time.Now(),
				ErrorKind: wfb.KindArtifactInvalid, ErrorDetail: "refused by the session"}
			rec := &reviewRecorder{db: r.db, artifact: path, task: bench.Task{ID: "rev"}}
			done := make(chan error, 1)
			go func() { done <- rec.InsertResult(context.Background(), &row) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute): // a hang guard, not a speed check
				t.Fatal("the recorder is still reading the artifact after a minute")
			}
			arts, err := r.db.Artifacts(context.Background(), r.runID)
			if err != nil {
				t.Fatal(err)
			}
			var got *store.Artifact
			for k := range arts {
				if arts[k].AttemptID == row.AttemptID {
					got = &arts[k]
				}
			}
			switch {
			case tc.wantBytes < 0 && got != nil:
				t.Errorf("an artifact was stored: %d bytes, %q", got.Bytes, wfb.Clip(string(got.Content), 80))
			case tc.wantBytes >= 0 && got == nil:
				t.Error("no artifact stored")
			case tc.wantBytes >= 0:
				sum := sha256.Sum256(big)
				if got.Bytes != tc.wantBytes || len(got.Content) != store.MaxArtifactBytes || got.SHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("stored %d bytes of %d, sha %s; want the first %d of %d and the whole file's digest",
						len(got.Content), got.Bytes, got.SHA256, store.MaxArtifactBytes, tc.wantBytes)
				}
			}
			if got != nil && strings.Contains(string(got.Content), "PRIVATE-BYTES") {
				t.Error("the symlink was followed")
			}
		})
	}
}
