package bench

import (
	"testing"

	"github.com/wfbench/wfb/internal/strictyaml"
)

// FuzzParse feeds the bench loader any bytes. It must never panic, must
// refuse only with an *Error whose every problem names the file, and a
// bench it accepts must be one a sweep can run: tasks and arms, at least
// one run and one worker.
func FuzzParse(f *testing.F) {
	f.Add([]byte("runs: 3\nprovider: {base_url: \"https://api.anthropic.com\"}\ntasks:\n  - {id: t1, workspace: /tmp, prompt: p}\narms:\n  - {id: a, agent: stand-in}\n"))
	f.Add([]byte("runs: 0\nworkers: 100000\ntimeout: 1x\ntasks: [{id: t, review: true, labels: [{id: L, severity: high, path: a.go, line_start: 2}]}]\narms: [{id: a, agent: codex, env: [GH_TOKEN]}]\n"))
	f.Add([]byte("x: &a [*a]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse("bench.yaml", dir, data, nil)
		if err != nil {
			if bad := strictyaml.CheckRefusal(err); bad != nil {
				t.Fatal(bad)
			}
			return
		}
		if len(b.Tasks) == 0 || len(b.Arms) == 0 || b.Runs < 1 || b.Workers < 1 || b.Runs > MaxRuns || b.Workers > MaxWorkers {
			t.Fatalf("accepted a bench no sweep can run: %d tasks, %d arms, runs %d, workers %d", len(b.Tasks), len(b.Arms), b.Runs, b.Workers)
		}
	})
}
