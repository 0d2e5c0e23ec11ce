package report

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/golden"
)

// checkGolden compares got with testdata/name (see internal/testkit/golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// N is a NULL metric value: not measured.
var N = math.NaN()

// fx is one fixture attempt: the columns a report reads, with NaN for NULL.
type fx struct {
	run, task, arm                   string
	rep, attempt                     int
	version                          string
	kind                             string // "" = ok
	in, out, cr, cw, cost, turns, ms float64
}

func (f fx) row() Row {
	r := Row{RunID: f.run, Task: f.task, Arm: f.arm, Rep: f.rep, Attempt: f.attempt, AgentVersion: f.version,
		OK: f.kind == "", ErrorKind: f.kind, Values: Unmeasured()}
	r.Values[InputTokens], r.Values[OutputTokens] = f.in, f.out
	r.Values[CacheReadTokens], r.Values[CacheWriteTokens] = f.cr, f.cw
	r.Values[CostUSD], r.Values[Turns], r.Values[WallTime] = f.cost, f.turns, f.ms
	return r
}

// fixture is a small, fixed set of attempts from two runs of one bench
// (r1 "base" and r2 "cand"), two tasks, two arms, three repetitions, with
// what real runs contain: a provider error that was retried, a refused
// sandbox, a timeout, an attempt whose cost was not measured, a measured
// zero cache read.
var fixture = []fx{
	// run r1: agent 1.0
	{"r1", "t1", "baseline", 0, 1, "1.0", "", 1000, 200, 0, 100, 0.10, 3, 20000},
	{"r1", "t1", "baseline", 1, 1, "1.0", "", 1100, 210, 500, 100, 0.11, 4, 21000},
	{"r1", "t1", "baseline", 2, 1, "1.0", "provider-error", N, N, N, N, N, N, 900},
	{"r1", "t1", "baseline", 2, 2, "1.0", "", 1050, 190, 500, 100, 0.105, 3, 19000},
	{"r1", "t2", "baseline", 0, 1, "1.0", "verify-failed", 2000, 400, 1000, 200, 0.20, 6, 40000},
	{"r1", "t2", "baseline", 1, 1, "1.0", "", 2100, 380, 1000, 200, N, 6, 42000},
	{"r1", "t2", "baseline", 2, 1, "1.0", "timeout", 2500, 500, 1000, 200, 0.25, 9, 600000},
	{"r1", "t1", "candidate", 0, 1, "1.0", "", 800, 150, 600, 80, 0.08, 2, 15000},
	{"r1", "t1", "candidate", 1, 1, "1.0", "", 820, 160, 600, 80, 0.082, 2, 15500},
	{"r1", "t1", "candidate", 2, 1, "1.0", "", 790, 140, 600, 80, 0.079, 2, 14000},
	{"r1", "t2", "candidate", 0, 1, "1.0", "", 1500, 300, 900, 150, 0.15, 4, 30000},
	{"r1", "t2", "candidate", 1, 1, "1.0", "sandbox-refused", N, N, N, N, N, N, N},
	{"r1", "t2", "candidate", 2, 1, "1.0", "", 1550, 310, 900, 150, 0.155, 5, 31000},
	// run r2: agent 1.1
	{"r2", "t1", "baseline", 0, 1, "1.1", "", 1020, 205, 0, 100, 0.102, 3, 20500},
	{"r2", "t1", "baseline", 1, 1, "1.1", "", 1080, 200, 500, 100, 0.108, 3, 20800},
	{"r2", "t1", "baseline", 2, 1, "1.1", "", 990, 195, 500, 100, 0.099, 3, 19500},
	{"r2", "t2", "baseline", 0, 1, "1.1", "", 2050, 390, 1000, 200, 0.205, 6, 41000},
	{"r2", "t2", "baseline", 1, 1, "1.1", "verify-failed", 2150, 410, 1000, 200, 0.215, 7, 43000},
	{"r2", "t2", "baseline", 2, 1, "1.1", "", 2200, 420, 1000, 200, 0.22, 6, 44000},
	{"r2", "t1", "candidate", 0, 1, "1.1", "", 700, 120, 600, 80, 0.07, 2, 12000},
	{"r2", "t1", "candidate", 1, 1, "1.1", "", 710, 125, 600, 80, 0.071, 2, 12500},
	{"r2", "t1", "candidate", 2, 1, "1.1", "", 690, 118, 600, 80, 0.069, 2, 11800},
	{"r2", "t2", "candidate", 0, 1, "1.1", "", 1300, 260, 900, 150, 0.13, 4, 26000},
	{"r2", "t2", "candidate", 1, 1, "1.1", "", 1320, 270, 900, 150, 0.132, 4, 26500},
	{"r2", "t2", "candidate", 2, 1, "1.1", "", 1280, 250, 900, 150, 0.128, 4, 25500},
}

var fixtureRuns = []RunInfo{
	{ID: "r1", Label: "base", Kind: "run", StartedAt: "2026-11-29T10:00:00.000Z", FinishedAt: "2026-11-29T10:20:00.000Z",
		Status: "complete", Fingerprint: "fp-1", Tally: wfb.Tally{Cells: 12, Attempts: 13, OK: 9, Failed: 2, Errored: 1}, Cost: wfb.CostSum{N: 10, USD: 1.311, Of: 13, AgentN: 10, AgentUSD: 1.311}},
	{ID: "r2", Label: "cand", Kind: "run", StartedAt: "2026-11-30T10:00:00.000Z", FinishedAt: "2026-11-30T10:18:00.000Z",
		Status: "complete", Fingerprint: "fp-2", Tally: wfb.Tally{Cells: 12, Attempts: 12, OK: 11, Failed: 1}, Cost: wfb.CostSum{N: 12, USD: 1.549, Of: 12, AgentN: 12, AgentUSD: 1.549}, Budget: 2.5},
	{ID: "r3", Kind: "run", StartedAt: "2026-11-30T12:00:00.000Z", Status: "interrupted", Tally: wfb.Tally{Cells: 1, Attempts: 1, Errored: 1}, Cost: wfb.CostSum{Of: 1}},
}

func fixtureRowsWhere(keep func(fx) bool) []Row {
	var rows []Row
	for _, f := range fixture {
		if keep == nil || keep(f) {
			rows = append(rows, f.row())
		}
	}
	return rows
}

// baseMetrics are the metrics of a file without review-quality columns.
var baseMetrics = []Metric{InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens, CostUSD, Turns, WallTime}

// eachFixtureSide calls add with every fixture row, run r1 as side A and r2
// as side B.
func eachFixtureSide(add func(side int, r *Row)) {
	for i := range fixture {
		r := fixture[i].row()
		side := SideA
		if r.RunID == "r2" {
			side = SideB
		}
		add(side, &r)
	}
}
