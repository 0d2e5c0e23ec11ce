package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// shardFile writes a results file holding shard k of run "run-m": the run
// row and the attempts given.
func shardFile(t *testing.T, path string, k int, attempts ...string) {
	t.Helper()
	ctx := context.Background()
	d, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Date(2026, 11, 30, 2, 40, 31, 0, time.UTC).Add(time.Duration(k) * time.Minute)
	fin := start.Add(time.Duration(5+k) * time.Minute)
	if err := d.CreateRun(ctx, store.Run{ID: "run-m", Label: "nightly", Kind: "run", StartedAt: start, FinishedAt: &fin,
		Status: wfb.RunComplete, Fingerprint: "fp", Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	for i, id := range attempts {
		cost := 0.5
		// Shard k's cells are reps 10k, 10k+1, ...: shards never share a cell.
		r := &store.Result{RunID: "run-m", AttemptID: id, Task: "t", Arm: "a", Rep: 10*k + i, Attempt: 1,
			StartedAt: start, OK: true, ProcessState: wfb.StateExited, CostUSD: &cost}
		if id == "att-1" { // a transcript travels with its attempt
			r.Transcript = &store.Transcript{Codec: wfb.CodecZstd, Data: []byte{1}, RawSize: 1, KeptSize: 1, SHA256: strings.Repeat("0", 64)}
		}
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergeCommandCombinesShardsIdempotently stops `wfb merge` from
// duplicating attempts when a CI step merges the same shards again, and
// from printing anything but what it did.
func TestMergeCommandCombinesShardsIdempotently(t *testing.T) {
	dir := t.TempDir()
	s0, s1, dst := filepath.Join(dir, "s0.db"), filepath.Join(dir, "s1.db"), filepath.Join(dir, "all.db")
	shardFile(t, s0, 0, "att-1", "att-2")
	shardFile(t, s1, 1, "att-3")

	out, errOut, code := wfbCmd(t, "merge", "--into", dst, "--format", "tsv", s0, s1)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	table := func(rows ...string) string {
		return "# merge into " + dst + "\nsource\ttable\tadded\tpresent\n" + strings.ReplaceAll(strings.Join(rows, "\n"), "DIR", dir) + "\n"
	}
	want := table(
		"DIR/s0.db\truns\t1\t0", "DIR/s0.db\tresults\t2\t0", "DIR/s0.db\tevidence\t0\t0", "DIR/s0.db\ttranscripts\t1\t0", "DIR/s0.db\tartifacts\t0\t0", "DIR/s0.db\tscores\t0\t0", "DIR/s0.db\tmodel_usage\t0\t0", "DIR/s0.db\trequests\t0\t0", "DIR/s0.db\texchanges\t0\t0",
		"DIR/s1.db\truns\t0\t1", "DIR/s1.db\tresults\t1\t0", "DIR/s1.db\tevidence\t0\t0", "DIR/s1.db\ttranscripts\t0\t0", "DIR/s1.db\tartifacts\t0\t0", "DIR/s1.db\tscores\t0\t0", "DIR/s1.db\tmodel_usage\t0\t0", "DIR/s1.db\trequests\t0\t0", "DIR/s1.db\texchanges\t0\t0",
	)
	if diff := cmp.Diff(want+"# [1] present: already in the destination, identical; nothing was changed for it.\n# [2] 1 time(s) a run already in the destination (another shard of it) had its status or times combined.\n", out); diff != "" {
		t.Errorf("first merge (-want +got):\n%s", diff)
	}
	out, errOut, code = wfbCmd(t, "merge", "--into", dst, "--format", "tsv", s1, s0)
	if code != 0 {
		t.Fatalf("second merge: exit %d, stderr %s", code, errOut)
	}
	want = table(
		"DIR/s1.db\truns\t0\t1", "DIR/s1.db\tresults\t0\t1", "DIR/s1.db\tevidence\t0\t0", "DIR/s1.db\ttranscripts\t0\t0", "DIR/s1.db\tartifacts\t0\t0", "DIR/s1.db\tscores\t0\t0", "DIR/s1.db\tmodel_usage\t0\t0", "DIR/s1.db\trequests\t0\t0", "DIR/s1.db\texchanges\t0\t0",
		"DIR/s0.db\truns\t0\t1", "DIR/s0.db\tresults\t0\t2", "DIR/s0.db\tevidence\t0\t0", "DIR/s0.db\ttranscripts\t0\t1", "DIR/s0.db\tartifacts\t0\t0", "DIR/s0.db\tscores\t0\t0", "DIR/s0.db\tmodel_usage\t0\t0", "DIR/s0.db\trequests\t0\t0", "DIR/s0.db\texchanges\t0\t0",
	)
	if diff := cmp.Diff(want+"# [1] present: already in the destination, identical; nothing was changed for it.\n", out); diff != "" {
		t.Errorf("second merge (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	d, err := store.OpenReadOnly(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, rows, err := d.Query(ctx, `SELECT run_id, started_at, finished_at, status, (SELECT count(*) FROM results) FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	// Shard 0 started first; shard 1 finished last (02:41:31 + 6m).
	if diff := cmp.Diff([][]any{{"run-m", "2026-11-30T02:40:31.000Z", "2026-11-30T02:47:31.000Z", "complete", int64(3)}}, rows); diff != "" {
		t.Errorf("merged run (-want +got):\n%s", diff)
	}
}

// TestMergeCommandRefusesConflictsAndBadFilesWithExit2 stops a merge from
// keeping one of two different measurements under one id, and from creating
// the destination when a source cannot be read.
func TestMergeCommandRefusesConflictsAndBadFilesWithExit2(t *testing.T) {
	dir := t.TempDir()
	s0, other, dst := filepath.Join(dir, "s0.db"), filepath.Join(dir, "other.db"), filepath.Join(dir, "all.db")
	shardFile(t, s0, 0, "att-1")
	shardFile(t, other, 0, "att-1")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TRIGGER results_no_update; UPDATE results SET cost_usd = 0.75;
		CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, errOut, code := wfbCmd(t, "merge", "--into", dst, s0); code != 0 {
		t.Fatalf("setup merge: exit %d, %s", code, errOut)
	}
	before, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}

	fresh := filepath.Join(dir, "fresh.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"conflict", []string{"merge", "--into", dst, other}, "results attempt_id=att-1 is already in the destination with different content: column cost_usd is 0.5 there but 0.75 in the source"},
		{"no into", []string{"merge", s0}, "--into DST is required"},
		{"no sources", []string{"merge", "--into", fresh}, "at least one SRC"},
		{"missing source", []string{"merge", "--into", fresh, s0, filepath.Join(dir, "nope.db")}, "no such file"},
		{"itself", []string{"merge", "--into", dst, dst}, "it is the destination file itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := wfbCmd(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errOut, tc.want)
			}
		})
	}
	after, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("a refused merge changed the destination file")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused merge created %s", fresh)
	}
}

// TestATokenCountPastTheBoundNeverReachesArmSummary stops a count of
// 2^63−1 — passed by every CHECK, by InsertResult and by a merge — from
// making arm_summary_v fail on its SUM ("integer overflow") for every
// reader of the file: the store refuses such a count at insert and a
// merge refuses a source holding it, naming wfb's bound (10^15); counts at
// the bound sum.
func TestATokenCountPastTheBoundNeverReachesArmSummary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	shardFile(t, src, 0, "att-1", "att-2")

	d, err := store.Open(ctx, filepath.Join(dir, "direct.db"))
	if err != nil {
		t.Fatal(err)
	}
	huge := int64(1<<63 - 1)
	r := &store.Result{RunID: "run-d", AttemptID: "att-d", Task: "t", Arm: "a", Attempt: 1, StartedAt: time.Now(),
		OK: true, ProcessState: wfb.StateExited, InputTokens: &huge}
	if err := d.CreateRun(ctx, store.Run{ID: "run-d", Kind: "run", StartedAt: time.Now(), Status: wfb.RunRunning, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertResult(ctx, r); err == nil || !strings.Contains(err.Error(), "10^15") {
		t.Errorf("insert of input_tokens 2^63-1: %v; want a refusal naming the bound 10^15", err)
	}
	d.Close()

	raw, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TRIGGER results_no_update; UPDATE results SET input_tokens = 9223372036854775807; CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, errOut, code := wfbCmd(t, "merge", "--into", dst, src)
	if code != 2 || !strings.Contains(errOut, "input_tokens") || !strings.Contains(errOut, "10^15") {
		t.Errorf("merge of a source with input_tokens 2^63-1: exit %d, stderr %q; want 2 naming the column and the bound", code, errOut)
	}
	const q = `SELECT arm, input_tokens_sum FROM arm_summary_v`
	if _, err := os.Stat(dst); err == nil {
		if out, errOut, code := wfbCmd(t, "sql", "--db", dst, "--format", "tsv", q); code != 0 {
			t.Errorf("wfb sql over the merged file: exit %d, %s%s", code, out, errOut)
		}
	}

	// At the bound, the counts are stored and summed.
	at := filepath.Join(dir, "at.db")
	shardFile(t, at, 0, "att-1", "att-2")
	raw, err = sql.Open("sqlite", at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TRIGGER results_no_update; UPDATE results SET input_tokens = 1000000000000000; CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, errOut, code := wfbCmd(t, "merge", "--into", dst, at); code != 0 {
		t.Fatalf("merge at the bound: exit %d, %s", code, errOut)
	}
	out, errOut, code := wfbCmd(t, "sql", "--db", dst, "--format", "tsv", q)
	if code != 0 || out != "arm\tinput_tokens_sum\na\t2000000000000000\n" {
		t.Errorf("wfb sql at the bound: exit %d, %q, %s", code, out, errOut)
	}
}

// TestARefusedMergeLeavesNoDestinationItCreated stops a merge whose
// conflict is found only while merging (two sources disagreeing on a row)
// from leaving an empty destination file behind, where docs/scaling-out.md says
// nothing is written: the destination it created goes, with its -wal and
// -shm.
func TestARefusedMergeLeavesNoDestinationItCreated(t *testing.T) {
	dir := t.TempDir()
	s0, other, fresh := filepath.Join(dir, "s0.db"), filepath.Join(dir, "other.db"), filepath.Join(dir, "fresh.db")
	shardFile(t, s0, 0, "att-1")
	shardFile(t, other, 0, "att-1")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TRIGGER results_no_update; UPDATE results SET cost_usd = 0.75; CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, errOut, code := wfbCmd(t, "merge", "--into", fresh, s0, other)
	if code != 2 || !strings.Contains(errOut, "different content") {
		t.Fatalf("exit %d, stderr %q: want 2 and the conflict", code, errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "fresh.db") || strings.HasPrefix(e.Name(), ".wfb-holder") {
			t.Errorf("a refused merge left %s", e.Name())
		}
	}
}
