package view

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// injection is markup that must never run or render as markup on a page.
const injection = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">**bold** [link](javascript:alert(1))`

// fixture is a results file with two runs of two tasks × two arms: run A
// (label "nightly", day 1) with a failed cell retried, and run B (day 2).
type fixture struct {
	path               string
	runA, runB         string
	ok, failed, retry  string // attempt ids in run A
	transcriptAttempts []string
}

// claudeTranscript is Claude Code stream-json: init, an assistant turn
// with text and a tool call, its result, and the final result event.
func claudeTranscript(text string) string {
	esc := strings.NewReplacer(`"`, `\"`).Replace
	return `{"type":"system","subtype":"init","model":"claude-sonnet-4-5","session_id":"s1"}
{"type":"assistant","message":{"content":[{"type":"text","text":"` + esc(text) + `"},{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls -la"}}],"usage":{"input_tokens":12,"output_tokens":5}}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"README.md\nsum.js"}]}}
{"type":"result","subtype":"success","result":"Fixed it.","num_turns":2,"usage":{"input_tokens":20,"output_tokens":9}}
`
}

func compressed(t testing.TB, s string) *store.Transcript {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(s))
	return &store.Transcript{Codec: "zstd", Data: enc.EncodeAll([]byte(s), nil), RawSize: int64(len(s)),
		KeptSize: int64(len(s)), SHA256: hex.EncodeToString(sum[:]), Prompt: "Fix sum.js " + injection}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{path: filepath.Join(t.TempDir(), "wfb.db"), runA: "run-a", runB: "run-b"}
	db := f.openWritable(t)
	defer db.Close()
	day1 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{f.runA, f.runB} {
		start := day1.Add(time.Duration(i) * 24 * time.Hour)
		end := start.Add(time.Hour)
		if err := db.CreateRun(ctx, store.Run{ID: id, Label: "nightly", Kind: "run", StartedAt: start, FinishedAt: &end,
			Status: wfb.RunComplete, Fingerprint: "sha256:fp", Harness: "test", Config: `{"command":"run"}`}); err != nil {
			t.Fatal(err)
		}
		f.addCells(t, db, id, start, i)
	}
	return f
}

// addCells writes the run's four cells; in run A, task t1 arm b fails with
// injected markup in its detail and is retried.
func (f *fixture) addCells(t testing.TB, db *store.DB, runID string, start time.Time, n int) {
	ctx := context.Background()
	for _, task := range []string{"t1", "t2"} {
		for _, arm := range []string{"a", "b"} {
			cost, in := 0.25+float64(n)*0.1, int64(100)
			r := &store.Result{RunID: runID, Task: task, Arm: arm, Attempt: 1, StartedAt: start, OK: true,
				ProcessState: wfb.StateExited, CostUSD: &cost, InputTokens: &in, Agent: "claude", AgentVersion: "2.0.1",
				Transcript: compressed(t, claudeTranscript("I will list the files. "+injection))}
			fail := runID == f.runA && task == "t1" && arm == "b"
			if fail {
				r.OK, r.ErrorKind, r.ErrorDetail = false, wfb.KindProviderError, "the provider said "+injection
			}
			if err := db.InsertResult(ctx, r); err != nil {
				t.Fatal(err)
			}
			f.transcriptAttempts = append(f.transcriptAttempts, r.AttemptID)
			if runID != f.runA {
				continue
			}
			switch {
			case fail:
				f.failed = r.AttemptID
				retry := *r
				retry.AttemptID, retry.Attempt, retry.RetryOf, retry.OK, retry.ErrorKind, retry.ErrorDetail = "", 2, r.AttemptID, true, "", ""
				retry.Transcript = nil
				if err := db.InsertResult(ctx, &retry); err != nil {
					t.Fatal(err)
				}
				f.retry = retry.AttemptID
			case task == "t1" && arm == "a":
				f.ok = r.AttemptID
				if err := db.InsertArtifact(ctx, r.AttemptID, "review.json", []byte(`{"verdict":"`+injection+`"}`)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// openWritable opens the fixture's file for writing; the caller closes it.
func (f *fixture) openWritable(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func (f *fixture) open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.OpenReadOnly(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
