package view

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/resultsgen"
	"github.com/wfbench/wfb/store"
)

// benchRows is the size of the generated results file: the issue's
// targets are the runs and run pages in 2 s, an attempt page in 100 ms.
const benchRows = 1000000

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchServer serves the file named by WFB_BENCH_DB, or one of benchRows
// generated attempts (once per test binary), before the timer starts.
func benchServer(b *testing.B) *Server {
	b.Helper()
	benchOnce.Do(func() {
		benchPath = os.Getenv("WFB_BENCH_DB")
		if benchPath == "" {
			dir, err := os.MkdirTemp("", "wfb-view-bench-")
			if err != nil {
				benchErr = err
				return
			}
			benchPath = filepath.Join(dir, "bench.db")
			benchErr = resultsgen.Generate(context.Background(), benchPath, benchRows)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, benchPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := New(ctx, db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchPage times one page; cpu-s/op (user + system CPU of the process)
// is the figure to read on a machine other work shares.
func benchPage(b *testing.B, path string) {
	s := benchServer(b)
	before := cpuSeconds()
	b.ResetTimer()
	defer func() { b.ReportMetric((cpuSeconds()-before)/float64(b.N), "cpu-s/op") }()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkViewRunsPage1M: the runs page, every run's cells and rates.
func BenchmarkViewRunsPage1M(b *testing.B) { benchPage(b, "/") }

// BenchmarkViewRunPage1M: the page of one run of 500,000 attempts.
func BenchmarkViewRunPage1M(b *testing.B) { benchPage(b, "/run/"+resultsgen.RunA) }

// BenchmarkViewAttemptPage1M: an attempt page (a failed attempt, row 800
// of run A) with its neighbours in the 1M-row file.
func BenchmarkViewAttemptPage1M(b *testing.B) { benchPage(b, "/attempt/"+resultsgen.RunA+"-800") }

// BenchmarkViewTrendPage1M: the trend of the cost by day over every
// attempt of the 1M-row file (two days).
func BenchmarkViewTrendPage1M(b *testing.B) { benchPage(b, "/trend?metric=cost_usd&by=day") }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkViewComparePage1M: the comparison of the two generated runs,
// 500,000 attempts a side, every metric's statistics.
func BenchmarkViewComparePage1M(b *testing.B) {
	benchPage(b, "/compare?a="+resultsgen.RunA+"&b="+resultsgen.RunB)
}
