package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// cell is one attempt a test file holds, with its evidence, artifact and
// score.
type cell struct {
	task, arm string
	rep       int
}

func (c cell) attemptID() string { return fmt.Sprintf("att-%s-%s-%d", c.task, c.arm, c.rep) }

func cells() []cell {
	var cs []cell
	for _, task := range []string{"t1", "t2", "review"} {
		for _, arm := range []string{"baseline", "candidate", "terse"} {
			cs = append(cs, cell{task, arm, 0})
		}
	}
	return cs
}

// writeFile creates a results file holding run (already shaped by the
// caller) and the given cells, each with evidence, an artifact, a score and
// per-model usage (two models for every other cell, one with NULLs).
func writeFile(t testing.TB, path string, run Run, cs []cell) {
	t.Helper()
	ctx := context.Background()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		r := &Result{
			RunID: run.ID, AttemptID: c.attemptID(), Task: c.task, Arm: c.arm, Rep: c.rep, Attempt: 1,
			Agent: "stand-in", Model: "m", Sandbox: "host-unsafe", StartedAt: t0.Add(time.Duration(i) * time.Second),
			OK: true, ProcessState: wfb.StateExited, InputTokens: ptr(int64(100 + i)), CostUSD: ptr(0.01 * float64(i)),
			ResultEvent: fmt.Sprintf(`{"type":"result","n":%d}`, i), StdoutTail: "out",
			ModelUsage: modelUsage(i),
		}
		if i%4 == 3 {
			r.OK, r.ErrorKind, r.ErrorDetail, r.CostUSD = false, wfb.KindProviderError, "529 overloaded", nil
		}
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := d.InsertArtifact(ctx, r.AttemptID, "review-output.json", []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
		s := &Score{ScoreID: "score-" + r.AttemptID, AttemptID: r.AttemptID, ScoredAt: t0.Add(time.Minute), LabelsDigest: "d",
			TP: i % 3, FP: 1, Precision: ptr(float64(i%3) / float64(i%3+1))}
		if err := d.InsertScore(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}

// modelUsage is cell i's per-model usage: one model, and a second (with
// unmeasured fields and a measured zero) for even i.
func modelUsage(i int) []ModelUsage {
	mu := []ModelUsage{{Model: "m", InputTokens: ptr(int64(100 + i)), OutputTokens: ptr(int64(10 * i)), CostUSD: ptr(0.01 * float64(i))}}
	if i%2 == 0 {
		mu = append(mu, ModelUsage{Model: "m-small", OutputTokens: ptr(int64(0)), CacheReadInputTokens: ptr(int64(i))})
	}
	return mu
}

// modelUsageRows counts the model_usage rows of the first n cells.
func modelUsageRows(n int) int {
	rows := 0
	for i := range n {
		rows += len(modelUsage(i))
	}
	return rows
}

func baseRun(id string) Run {
	fin := t0.Add(10 * time.Minute)
	return Run{ID: id, Label: "nightly", Kind: "run", StartedAt: t0, FinishedAt: &fin, Status: wfb.RunComplete,
		Fingerprint: "fp-1", Harness: "test", Config: `{"runs":1}`}
}

// dump reads every table of the file (but schema_migrations, whose times
// are each file's own, and the runs' kept figures, run_stats and the
// run_*_stats beside it, and the copies of their rows, run_rows and
// run_row_chunks, which a merge makes anew rather than copies and whose
// rowids are each file's own: runstats_test.go and runrows_test.go hold
// them to the views and the rows), each sorted by all its columns: the whole content a merge can
// change. It reads the schema rather than mergeTables, so a table a
// migration adds and a merge forgets makes the merged file differ.
func dump(t testing.TB, path string) map[string][][]any {
	t.Helper()
	ctx := context.Background()
	d, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, tables, err := d.Query(ctx, `SELECT name, (SELECT count(*) FROM pragma_table_info(s.name)) FROM sqlite_schema s
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('schema_migrations', 'run_stats', 'run_cell_stats',
		'run_tool_stats', 'run_tool_use_stats', 'run_rows', 'run_row_chunks')
		ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][]any{}
	for _, tb := range tables {
		name, n := tb[0].(string), tb[1].(int64)
		order := make([]string, n)
		for i := range order {
			order[i] = fmt.Sprint(i + 1)
		}
		_, rows, err := d.Query(ctx, `SELECT * FROM `+name+` ORDER BY `+strings.Join(order, ", "))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = rows
	}
	return out
}

func openDst(t testing.TB, path string) *DB {
	t.Helper()
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestMergingTwiceAddsNothing stops a re-run of a CI merge step from
// duplicating attempts (or failing on its own earlier output).
func TestMergingTwiceAddsNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeFile(t, src, baseRun("run-a"), cells())
	dstPath := filepath.Join(dir, "dst.db")
	dst := openDst(t, dstPath)

	first, err := mergeFile(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	n := len(cells())
	mu := modelUsageRows(n)
	want := MergeStats{Source: src, Runs: TableStats{Added: 1}, Results: TableStats{Added: n},
		Evidence: TableStats{Added: n}, Artifacts: TableStats{Added: n}, Scores: TableStats{Added: n},
		ModelUsage: TableStats{Added: mu}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first merge (-want +got):\n%s", diff)
	}
	afterFirst := dump(t, dstPath)
	if diff := cmp.Diff(dump(t, src), afterFirst); diff != "" {
		t.Errorf("destination differs from the source after one merge (-src +dst):\n%s", diff)
	}

	second, err := mergeFile(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	want = MergeStats{Source: src, Runs: TableStats{Present: 1}, Results: TableStats{Present: n},
		Evidence: TableStats{Present: n}, Artifacts: TableStats{Present: n}, Scores: TableStats{Present: n},
		ModelUsage: TableStats{Present: mu}}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("second merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(afterFirst, dump(t, dstPath)); diff != "" {
		t.Errorf("the second merge changed the destination (-before +after):\n%s", diff)
	}
}

// TestAConflictIsRefusedAndNothingIsMerged stops a merge from silently
// keeping one of two different rows that claim the same id, or from leaving
// the destination half merged when it refuses.
func TestAConflictIsRefusedAndNothingIsMerged(t *testing.T) {
	ctx := context.Background()
	all := cells()
	tests := []struct {
		name    string
		alter   func(d *sql.DB) error // makes the source differ from the destination's copy
		table   string
		key     string
		id      string
		columns []string
	}{
		{
			name: "result",
			alter: func(d *sql.DB) error {
				_, err := d.Exec(`DROP TRIGGER results_no_update; UPDATE results SET cost_usd = 0.5, num_turns = 2 WHERE attempt_id = ?;
					CREATE TRIGGER results_no_update BEFORE UPDATE ON results BEGIN SELECT RAISE(ABORT, 'results are append-only'); END`, all[1].attemptID())
				return err
			},
			table:   "results",
			key:     "attempt_id",
			id:      all[1].attemptID(),
			columns: []string{"cost_usd", "num_turns"},
		},
		{
			name: "run fingerprint",
			alter: func(d *sql.DB) error {
				_, err := d.Exec(`UPDATE runs SET fingerprint = 'fp-other'`)
				return err
			},
			table:   "runs",
			key:     "run_id",
			id:      "run-a",
			columns: []string{"fingerprint"},
		},
		{
			name: "score",
			alter: func(d *sql.DB) error {
				_, err := d.Exec(`INSERT INTO scores (score_id, attempt_id, scored_at, labels_digest, tp, fp, fn) VALUES ('score-x', ?, '2026-01-01T00:00:00.000Z', 'd', 9, 0, 0)`, all[0].attemptID())
				return err
			},
			table:   "scores",
			key:     "score_id",
			id:      "score-x",
			columns: []string{"tp"},
		},
		{
			// A measured zero in the destination against a NULL in the
			// source is a difference, not a match.
			name: "model usage",
			alter: func(d *sql.DB) error {
				_, err := d.Exec(`DROP TRIGGER model_usage_no_update; UPDATE model_usage SET output_tokens = NULL, cost_usd = 1.5 WHERE attempt_id = ? AND model = 'm-small';
					CREATE TRIGGER model_usage_no_update BEFORE UPDATE ON model_usage BEGIN SELECT RAISE(ABORT, 'model usage is append-only'); END`, all[2].attemptID())
				return err
			},
			table:   "model_usage",
			key:     "attempt_id, model",
			id:      all[2].attemptID() + ", m-small",
			columns: []string{"output_tokens", "cost_usd"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dstPath := filepath.Join(dir, "dst.db")
			writeFile(t, dstPath, baseRun("run-a"), all[:3])
			if tc.table == "scores" {
				d := openDst(t, dstPath)
				if err := d.InsertScore(ctx, &Score{ScoreID: "score-x", AttemptID: all[0].attemptID(), ScoredAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), LabelsDigest: "d", TP: 1}); err != nil {
					t.Fatal(err)
				}
				d.Close()
			}
			// The source holds every cell, and one row that claims an id
			// the destination holds with other content.
			src := filepath.Join(dir, "src.db")
			writeFile(t, src, baseRun("run-a"), all)
			raw, err := sql.Open("sqlite", src)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.alter(raw); err != nil {
				t.Fatal(err)
			}
			raw.Close()

			before := dump(t, dstPath)
			dst := openDst(t, dstPath)
			_, err = mergeFile(ctx, dst, src)
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, ErrMergeConflict) {
				t.Fatalf("merge: %v, want a *ConflictError", err)
			}
			if diff := cmp.Diff([]any{src, tc.table, tc.key, tc.id, tc.columns}, []any{ce.Source, ce.Table, ce.Key, ce.ID, ce.Columns}); diff != "" {
				t.Errorf("conflict (-want +got):\n%s", diff)
			}
			for _, want := range []string{src, tc.table, tc.key, tc.id, tc.columns[0], "nothing was merged"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if diff := cmp.Diff(before, dump(t, dstPath)); diff != "" {
				t.Errorf("the refused merge changed the destination (-before +after):\n%s", diff)
			}
		})
	}
}

// TestShardsMergeToTheUnshardedRun is the contract of sharding: three shard
// files of one run merged into an empty file hold exactly what one
// unsharded run would, cell for cell, with one run row whose start is the
// earliest and finish the latest.
func TestShardsMergeToTheUnshardedRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	all := cells()
	whole := filepath.Join(dir, "whole.db")
	writeFile(t, whole, baseRun("run-s"), all)

	var shards []string
	for k := range 3 {
		// Shard 0 starts first, shard 2 finishes last: together they span
		// the whole run, and neither the first nor the last alone does.
		run := baseRun("run-s")
		run.StartedAt = t0.Add(time.Duration(k) * time.Minute)
		fin := t0.Add(time.Duration(6+2*k) * time.Minute)
		run.FinishedAt = &fin
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.db", k))
		// writeFile numbers start times by position: keep each cell's
		// time by writing the whole set and keeping this shard's slice.
		writeShard(t, path, run, all, func(i int) bool { return i%3 == k })
		shards = append(shards, path)
	}
	dstPath := filepath.Join(dir, "merged.db")
	dst := openDst(t, dstPath)
	stats, err := MergeFiles(ctx, dst, shards)
	if err != nil {
		t.Fatal(err)
	}
	got := []int{stats[0].Runs.Added, stats[1].Runs.Present, stats[2].Runs.Present, stats[1].RunsCombined, stats[2].RunsCombined}
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1}, got); diff != "" {
		t.Errorf("run added by shard 0, present in 1 and 2, combined by 1 and 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(dump(t, whole), dump(t, dstPath)); diff != "" {
		t.Errorf("merged shards differ from the unsharded run (-whole +merged):\n%s", diff)
	}
}

// writeShard writes the cells keep selects, each with the start time and
// numbers it has in the unsharded file.
func writeShard(t testing.TB, path string, run Run, all []cell, keep func(int) bool) {
	t.Helper()
	full := filepath.Join(t.TempDir(), "full.db")
	writeFile(t, full, run, all)
	ctx := context.Background()
	src, err := OpenReadOnly(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	results, err := src.Results(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	arts, err := src.Artifacts(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := src.Scores(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range results {
		if !keep(i) {
			continue
		}
		if err := d.InsertResult(ctx, &results[i]); err != nil {
			t.Fatal(err)
		}
		if err := d.InsertArtifact(ctx, arts[i].AttemptID, arts[i].Name, arts[i].Content); err != nil {
			t.Fatal(err)
		}
		if err := d.InsertScore(ctx, &scores[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShardRunStatusIsTheWorst stops a merged run from reporting complete
// when one of its shards was interrupted, aborted or is still running.
func TestShardRunStatusIsTheWorst(t *testing.T) {
	ctx := context.Background()
	fin := func(m int) *time.Time { x := t0.Add(time.Duration(m) * time.Minute); return &x }
	tests := []struct {
		name     string
		statuses []string
		finished []*time.Time
		want     []any // status, finished_at
	}{
		{"all complete", []string{wfb.RunComplete, wfb.RunComplete, wfb.RunComplete}, []*time.Time{fin(5), fin(9), fin(7)},
			[]any{wfb.RunComplete, "2026-11-30T02:49:31.123Z"}},
		{"one interrupted", []string{wfb.RunComplete, wfb.RunInterrupted, wfb.RunAborted}, []*time.Time{fin(5), fin(9), fin(7)},
			[]any{wfb.RunInterrupted, "2026-11-30T02:49:31.123Z"}},
		{"one aborted", []string{wfb.RunAborted, wfb.RunComplete, wfb.RunComplete}, []*time.Time{fin(5), fin(6), fin(7)},
			[]any{wfb.RunAborted, "2026-11-30T02:47:31.123Z"}},
		{"one still running", []string{wfb.RunComplete, wfb.RunRunning, wfb.RunComplete}, []*time.Time{fin(5), nil, fin(7)},
			[]any{wfb.RunRunning, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for k, st := range tc.statuses {
				run := baseRun("run-s")
				run.Status, run.FinishedAt = st, tc.finished[k]
				run.StartedAt = t0.Add(time.Duration(3-k) * time.Second)
				p := filepath.Join(dir, fmt.Sprintf("s%d.db", k))
				writeFile(t, p, run, nil)
				paths = append(paths, p)
			}
			dstPath := filepath.Join(dir, "dst.db")
			dst := openDst(t, dstPath)
			if _, err := MergeFiles(ctx, dst, paths); err != nil {
				t.Fatal(err)
			}
			got := queryOne(t, dst, `SELECT status, finished_at, started_at FROM runs`)
			want := append(tc.want, "2026-11-30T02:40:32.123Z")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status, finished_at, started_at (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergeRefusesWhatItCannotReadSafely stops a merge from reading a file
// a newer wfb wrote, merging a file into itself, or half-merging a list of
// sources when a later one is missing.
func TestMergeRefusesWhatItCannotReadSafely(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	writeFile(t, good, baseRun("run-a"), cells()[:2])
	newer := filepath.Join(dir, "newer.db")
	writeFile(t, newer, baseRun("run-b"), nil)
	raw, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (999, '0999_future', '2030-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	dstPath := filepath.Join(dir, "dst.db")
	dst := openDst(t, dstPath)

	tests := []struct {
		name    string
		sources []string
		want    string
		is      error
	}{
		{"newer schema", []string{good, newer}, "use a newer wfb", ErrSchemaTooNew},
		{"missing", []string{good, filepath.Join(dir, "missing.db")}, "no such file", nil},
		{"itself", []string{good, dstPath}, "it is the destination file itself", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MergeFiles(ctx, dst, tc.sources)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if got := queryOne(t, dst, `SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM results)`); !cmp.Equal([]any{int64(0)}, got) {
				t.Errorf("rows in the destination after a refused merge: %v", got)
			}
		})
	}
}

// BenchmarkMerge measures merging a shard of 900 attempts (with evidence,
// artifacts and scores) into an empty file.
func BenchmarkMerge(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	src := filepath.Join(dir, "src.db")
	var cs []cell
	for i := range 100 {
		for _, c := range cells() {
			c.rep = i
			cs = append(cs, c)
		}
	}
	writeFile(b, src, baseRun("run-a"), cs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("dst-%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mergeFile(ctx, dst, src); err != nil {
			b.Fatal(err)
		}
		dst.Close()
	}
	b.ReportMetric(float64(len(cs)*b.N)/b.Elapsed().Seconds(), "attempts/s")
}

// mergeFile merges the one results file at srcPath into dst (see
// MergeFiles) and says what it did.
func mergeFile(ctx context.Context, dst *DB, srcPath string) (MergeStats, error) {
	stats, err := MergeFiles(ctx, dst, []string{srcPath})
	if err != nil {
		return MergeStats{}, err
	}
	return stats[0], nil
}
