package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// BenchmarkSweepOfflineCells measures whole cells per second offline: a
// workspace copy, the sandbox's preflight, a mock provider, the stand-in
// agent as a subprocess and the row's commit, with 1 and 2 workers.
//
//	go test ./runner -run '^$' -bench SweepOfflineCells -benchtime 5x
func BenchmarkSweepOfflineCells(b *testing.B) {
	const cells = 16
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			dir, err := os.MkdirTemp("", "wfb-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			os.Chmod(dir, 0o755)
			os.Mkdir(filepath.Join(dir, "ws"), 0o755)
			os.WriteFile(filepath.Join(dir, "ws", "source.ts"), []byte("export const answer = 42;\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(okScript), 0o644)
			path := filepath.Join(dir, "bench.yaml")
			os.WriteFile(path, []byte(fmt.Sprintf(`runs: %d
workers: %d
sandbox: host-unsafe
provider: {mock: ok.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`, cells, workers)), 0o644)
			bn, err := bench.Load(path, checkScript)
			if err != nil {
				b.Fatal(err)
			}
			db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "wfb.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			r := &benchRig{dir: dir, db: db, env: map[string]string{}}
			o := SweepOptions{Bench: bn, DB: db, Harness: "bench", Getenv: func(string) string { return "" },
				StartMock: r.startMock, StartMeter: StartTestMeter, StandInBin: testBinary(b), StandInArgs: []string{"mock", "agent"},
				AgentEnv: map[string]string{"WFB_TEST_AGENT": "1"}, TempDir: dir}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sw, err := NewSweep(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := sw.Run(context.Background())
				sw.Close()
				if err != nil || sum.OK != cells {
					b.Fatalf("sweep: %+v, %v", sum, err)
				}
			}
			b.ReportMetric(float64(cells*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
