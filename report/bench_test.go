package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/resultsgen"
	"github.com/wfbench/wfb/store"
)

// benchRows is the size of the generated results file.
const benchRows = 1000000

// benchDB returns a results file of benchRows generated attempts: the file
// named by WFB_BENCH_DB (scripts/bench-report.sh generates it once), or one
// generated into the benchmark's temp dir before the timer starts.
func benchDB(b *testing.B) (*store.DB, Columns, []RunInfo) {
	b.Helper()
	path := os.Getenv("WFB_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "bench.db")
		if err := resultsgen.Generate(context.Background(), path, benchRows); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	runs, err := LoadRuns(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	return db, cols, runs
}

// peakHeap samples the live heap while f runs, at each chunk of rows, and
// reports the largest figure as MB-peak-heap.
type peakHeap struct{ peak uint64 }

func (p *peakHeap) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	p.peak = max(p.peak, m.HeapInuse)
}

// BenchmarkReport1M times `wfb report` over both runs of the generated
// file (1,000,000 attempts): loading, tabulating by arm, building the
// tables and rendering CSV.
func BenchmarkReport1M(b *testing.B) {
	db, cols, _ := benchDB(b)
	sel := Selection{Spec: "all", RunIDs: []string{resultsgen.RunA, resultsgen.RunB}}
	var p peakHeap
	b.ResetTimer()
	for b.Loop() {
		tab := NewTabulator(TabulateOptions{Metrics: cols.Metrics()})
		n := 0
		err := LoadRows(context.Background(), db, cols, sel, func(r *Row) {
			tab.Add(r)
			if n++; n%100000 == 0 {
				p.sample()
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		if n != benchRows {
			b.Fatalf("loaded %d rows; want %d", n, benchRows)
		}
		if err := RenderAll(io.Discard, tab.Result().Tables("bench", FormatCSV), FormatCSV); err != nil {
			b.Fatal(err)
		}
		p.sample()
	}
	b.ReportMetric(float64(p.peak)/(1<<20), "MB-peak-heap")
}

// BenchmarkDiff1M times `wfb diff day-1 day-2` over the generated file:
// loading both sides (500,000 attempts each), pairing 500,000 cells,
// running every test and rendering CSV.
func BenchmarkDiff1M(b *testing.B) {
	db, cols, runs := benchDB(b)
	var p peakHeap
	b.ResetTimer()
	for b.Loop() {
		d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: cols.Metrics()})
		for side, id := range []string{resultsgen.RunA, resultsgen.RunB} {
			n := 0
			err := LoadRows(context.Background(), db, cols, Selection{Spec: id, RunIDs: []string{id}}, func(r *Row) {
				d.Add(side, r)
				if n++; n%100000 == 0 {
					p.sample()
				}
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := RenderAll(io.Discard, d.Result(runs).Tables("day-1", "day-2", FormatCSV), FormatCSV); err != nil {
			b.Fatal(err)
		}
		p.sample()
	}
	b.ReportMetric(float64(p.peak)/(1<<20), "MB-peak-heap")
}

// loadAll reads every generated row into memory, for the builder-only
// benchmarks.
func loadAll(b *testing.B, db *store.DB, cols Columns) []Row {
	rows := make([]Row, 0, benchRows)
	err := LoadRows(context.Background(), db, cols, Selection{Spec: "all"}, func(r *Row) { rows = append(rows, *r) })
	if err != nil {
		b.Fatal(err)
	}
	return rows
}

// BenchmarkTabulate1M times the pure report builder alone over 1,000,000
// rows already in memory: the cost of the statistics, not of SQLite.
func BenchmarkTabulate1M(b *testing.B) {
	db, cols, _ := benchDB(b)
	rows := loadAll(b, db, cols)
	b.ResetTimer()
	for b.Loop() {
		tabulate(rows, TabulateOptions{Metrics: cols.Metrics()}).Tables("bench", FormatCSV)
	}
}

// BenchmarkDiffBuild1M times the pure diff builder alone over 1,000,000
// rows already in memory.
func BenchmarkDiffBuild1M(b *testing.B) {
	db, cols, runs := benchDB(b)
	rows := loadAll(b, db, cols)
	b.ResetTimer()
	for b.Loop() {
		d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: cols.Metrics()})
		for i := range rows {
			side := SideA
			if rows[i].RunID == resultsgen.RunB {
				side = SideB
			}
			d.Add(side, &rows[i])
		}
		d.Result(runs).Tables("day-1", "day-2", FormatCSV)
	}
}
