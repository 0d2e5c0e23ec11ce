package view

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestPagesShowTheControlsInAgentText stops a bidirectional override
// (U+202E) in an error detail or a prompt from reordering what an attempt
// page shows after it, served or exported, and ESC from vanishing without
// a trace: html/template escapes markup but leaves both as they are.
func TestPagesShowTheControlsInAgentText(t *testing.T) {
	f := newFixture(t)
	db := f.openWritable(t)
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "run-c", Kind: "run", StartedAt: start, Status: wfb.RunComplete,
		Fingerprint: "fp", Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	r := store.Result{RunID: "run-c", AttemptID: "att-ctl", Task: "t", Arm: "a", Attempt: 1, Agent: "claude",
		Sandbox: "host-unsafe", StartedAt: start, ProcessState: wfb.StateExited, ErrorKind: wfb.KindSessionError,
		ErrorDetail: "rtl \u202egnp.exe esc \x1b[31mred", Transcript: compressed(t, claudeTranscript("said \u202etxt.exe"))}
	if err := db.InsertResult(ctx, &r); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := New(ctx, f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, f, Options{})
	_, served := get(t, ts.Client(), ts.URL+"/attempt/att-ctl")
	dir := t.TempDir()
	if _, err := s.Export(ctx, dir, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	exported, err := os.ReadFile(filepath.Join(dir, "attempt", "att-ctl.html"))
	if err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string]string{"served": served, "exported": string(exported)} {
		for _, bad := range []string{"\u202e", "\x1b"} {
			if strings.Contains(page, bad) {
				t.Errorf("the %s page holds %q raw", name, bad)
			}
		}
		for _, want := range []string{`rtl \u202egnp.exe esc ␛[31mred`, `said \u202etxt.exe`} {
			if !strings.Contains(page, want) {
				t.Errorf("the %s page lacks %q", name, want)
			}
		}
	}
}
