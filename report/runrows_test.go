package report

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/resultsgen"
	"github.com/wfbench/wfb/store"
)

// TestTheLoaderSendsTheQueryTheCopiesHold stops the copies of finished
// runs' rows (store.RunRowsColumns) from silently never being read: the
// loader reads a copy only when it is the output of the very query it
// would send, so the two must be spelled alike for a file at this schema.
func TestTheLoaderSendsTheQueryTheCopiesHold(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := newLoader(cols, nil).copyQuery(); q != store.RunRowsColumns {
		t.Errorf("the loader's query for a run of this schema:\n%s\nstore.RunRowsColumns (what a run's copy holds):\n%s\n(make them one)", q, store.RunRowsColumns)
	}
}

// TestRowsReadFromACopyAreTheRowsAfterEveryWriter holds what LoadRows
// reads from the copies a file keeps of its finished runs' rows to what it
// reads from the results table, row for row and in order (a run's, and
// every run's), over generated files whose runs span one chunk and several,
// after each writer: the runs' end, scores landing behind the copy's back
// (the copy is not read) and a rescore's copy made anew with them, a
// resume, a finish, a row landing in a finished run, a merge; and it
// checks each step reads the copies it should.
func TestRowsReadFromACopyAreTheRowsAfterEveryWriter(t *testing.T) {
	ctx := context.Background()
	for _, rows := range []int{2, 9, 8200, 20001} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			if rows > 10000 && testing.Short() {
				t.Skip("-short: the larger file")
			}
			db, dir := generatedFile(t, rows)
			a, b := resultsgen.RunA, resultsgen.RunB
			check := func(step string, copied ...string) {
				t.Helper()
				checkCopiedRows(t, db, step, []string{a, b}, copied)
			}
			check("generated and finished", a, b)

			// Scores recorded behind the copy's back: it no longer holds
			// each attempt's latest score, and is not read.
			f1, recall := 0.25, 0.5
			for i := range min(3, rows/2) {
				s := &store.Score{AttemptID: fmt.Sprintf("%s-%d", a, i), ScoredAt: time.Now(), LabelsDigest: "d1",
					TP: 1, WeightedF1: &f1, Recall: &recall}
				if err := db.InsertScore(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			check("scored without a new copy", b)
			// A rescore makes the copy anew in the scores' transaction.
			f1 = 0.75
			err := db.Tx(ctx, func(tx *sql.Tx) error {
				s := &store.Score{AttemptID: a + "-0", ScoredAt: time.Now().Add(time.Second), LabelsDigest: "d2", TP: 2, WeightedF1: &f1}
				if err := db.InsertScoreTx(ctx, tx, s); err != nil {
					return err
				}
				return db.CopyRunRowsTx(ctx, tx, a)
			})
			if err != nil {
				t.Fatal(err)
			}
			check("rescored", a, b)

			if err := db.ReopenRun(ctx, b); err != nil {
				t.Fatal(err)
			}
			check("reopened", a)
			calls := int64(1)
			retry := &store.Result{RunID: b, AttemptID: b + "-retry", Task: "task0", Arm: "arm0", Rep: 0, Attempt: 2,
				RetryOf: b + "-0", Agent: "stand-in", Model: "model-x", Sandbox: "host-unsafe",
				StartedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), OK: false, ErrorKind: "timeout",
				ProcessState: "timeout", ToolCalls: &calls}
			if err := db.InsertResult(ctx, retry); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, b, wfb.RunAborted, time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			check("resumed and finished", a, b)

			late := *retry
			late.RunID, late.AttemptID, late.RetryOf, late.Attempt, late.Rep = a, a+"-late", "", 1, 1<<20
			if err := db.InsertResult(ctx, &late); err != nil {
				t.Fatal(err)
			}
			check("a row landed behind the writers' back", b)

			bigger := filepath.Join(dir, "bigger.db")
			if err := resultsgen.Generate(ctx, bigger, rows+500); err != nil {
				t.Fatal(err)
			}
			if _, err := store.MergeFiles(ctx, db, []string{bigger}); err != nil {
				t.Fatal(err)
			}
			check("merged", a, b)
		})
	}
}

// rowsOnly is a results file seen without its copies: LoadRows reads it
// from the results table.
type rowsOnly struct{ *store.DB }

func (r rowsOnly) Query(ctx context.Context, q string, args ...any) ([]string, [][]any, error) {
	return r.DB.Query(ctx, q, args...)
}

func (r rowsOnly) Each(ctx context.Context, q string, args []any, fn func(store.Scanner) error) error {
	return r.DB.Each(ctx, q, args, fn)
}

// checkCopiedRows compares LoadRows over db with LoadRows over its
// results table, for each run alone, both, and every run, and checks that
// exactly the runs copied have a current copy.
func checkCopiedRows(t *testing.T, db *store.DB, step string, ids, copied []string) {
	t.Helper()
	ctx := context.Background()
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := newLoader(cols, nil).copyQuery()
	for _, id := range ids {
		_, fresh, err := db.RunRows(ctx, id, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := contains(copied, id); fresh != want {
			t.Errorf("%s: run %s has a current copy: %v, want %v", step, id, fresh, want)
		}
	}
	load := func(src Source, sel Selection) []Row {
		var out []Row
		if err := LoadRows(ctx, src, cols, sel, func(r *Row) { out = append(out, *r) }); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return out
	}
	for _, sel := range []Selection{{RunIDs: ids[:1]}, {RunIDs: ids[1:]}, {RunIDs: ids}, {}} {
		want := load(rowsOnly{db}, sel)
		got := load(db, sel)
		if len(want) == 0 {
			t.Fatalf("%s: %v: no rows", step, sel.RunIDs)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v: %d rows read with the copies, %d from the results table", step, sel.RunIDs, len(got), len(want))
			continue
		}
		for i := range want {
			if !sameRow(want[i], got[i]) {
				t.Errorf("%s: %v: row %d as read with the copies differs from the results table's (-table +read):\n%s",
					step, sel.RunIDs, i, cmp.Diff(want[i], got[i], cmpopts.EquateNaNs()))
				break
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// sameRow is cmp.Equal with NaN equal to NaN, at a thousandth of its cost.
func sameRow(a, b Row) bool {
	va, vb := a.Values, b.Values
	a.Values, b.Values = [NumMetrics]float64{}, [NumMetrics]float64{}
	if a != b {
		return false
	}
	for i := range va {
		if va[i] != vb[i] && !(math.IsNaN(va[i]) && math.IsNaN(vb[i])) {
			return false
		}
	}
	return true
}

// TestRowsComeInTheirOrderWhileTheReaderRunsAhead: with more than one CPU,
// LoadRows reads on a goroutine of its own, batches ahead of fn; fn still
// gets every row in the file's order, the rows the one-goroutine loader
// gives. And when fn panics, LoadRows stops the reader before the panic
// leaves it: nothing is left reading the file (a viewer recovers from a
// handler's panic and goes on serving).
func TestRowsComeInTheirOrderWhileTheReaderRunsAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	const rows = 8200 // eight batches and a part
	db, _ := generatedFile(t, rows)
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []Source{db, rowsOnly{db}} {
		for _, sel := range []Selection{{}, {RunIDs: []string{resultsgen.RunB}}} {
			var want, got []Row
			if err := loadRows(ctx, src, cols, sel, func(r *Row) { want = append(want, *r) }); err != nil {
				t.Fatal(err)
			}
			if err := LoadRows(ctx, src, cols, sel, func(r *Row) { got = append(got, *r) }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(want) < rows/2 {
				t.Fatalf("%T %v: %d rows read ahead, %d on one goroutine", src, sel.RunIDs, len(got), len(want))
			}
			for i := range want {
				if !sameRow(want[i], got[i]) {
					t.Fatalf("%T %v: row %d differs (-one goroutine +read ahead):\n%s", src, sel.RunIDs, i, cmp.Diff(want[i], got[i], cmpopts.EquateNaNs()))
				}
			}
		}
	}

	before := runtime.NumGoroutine()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("fn's panic did not reach LoadRows' caller")
			}
		}()
		n := 0
		_ = LoadRows(ctx, db, cols, Selection{}, func(*Row) {
			if n++; n == 1500 {
				panic("fn gives up")
			}
		})
	}()
	// The reader closed its channel as it ended; it may take a moment to
	// be gone from the count.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines after fn's panic, %d before: the reader was left behind", after, before)
	}
}

// generatedFile is a results file of rows generated attempts (resultsgen's
// two runs), open for writing until the test ends, and its directory.
func generatedFile(t *testing.T, rows int) (*store.DB, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	if err := resultsgen.Generate(ctx, path, rows); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}
