package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wfbench/wfb/store"
)

func ptrInt(v float64) *int64 {
	if math.IsNaN(v) {
		return nil
	}
	n := int64(v)
	return &n
}

func ptrFloat(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// writeFixture writes the fixture into a real results file under
// t.TempDir(): runs r1 and r2 as the fixture describes them, every attempt
// through store.InsertResult, and review scores for two attempts of r1 (one
// of them scored twice: the later score must win).
func writeFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, r := range fixtureRuns[:2] {
		started, _ := time.Parse(store.TimeLayout, r.StartedAt)
		finished, _ := time.Parse(store.TimeLayout, r.FinishedAt)
		// A run's cap is in its config, as wfb run records it; a run
		// without one has a config that is not even JSON.
		config := "(none)"
		if r.Budget > 0 {
			config = fmt.Sprintf(`{"command":"run","meter":"on","budget":{"usd":%v,"from":"max-cost"}}`, r.Budget)
		}
		err := db.CreateRun(ctx, store.Run{ID: r.ID, Label: r.Label, Kind: "run", StartedAt: started, FinishedAt: &finished,
			Status: r.Status, Fingerprint: r.Fingerprint, Harness: "test", Config: config})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range fixture {
		day := "2026-11-29"
		if f.run == "r2" {
			day = "2026-11-30"
		}
		started, _ := time.Parse(time.RFC3339, fmt.Sprintf("%sT10:%02d:00Z", day, i))
		res := &store.Result{RunID: f.run, AttemptID: fmt.Sprintf("%s-%02d", f.run, i), Task: f.task, Arm: f.arm, Rep: f.rep, Attempt: f.attempt,
			Agent: "stand-in", AgentVersion: f.version, Sandbox: "host-unsafe", StartedAt: started,
			OK: f.kind == "", ErrorKind: f.kind, DurationMS: ptrInt(f.ms),
			InputTokens: ptrInt(f.in), OutputTokens: ptrInt(f.out), CacheReadInputTokens: ptrInt(f.cr), CacheCreationInputTokens: ptrInt(f.cw),
			CostUSD: ptrFloat(f.cost), NumTurns: ptrInt(f.turns)}
		if res.CostUSD != nil {
			res.CostSource = "reported"
		}
		if err := db.InsertResult(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	yes := true
	for _, s := range []store.Score{
		{ScoreID: "s1", AttemptID: "r1-00", ScoredAt: at, LabelsDigest: "l1", TP: 1, FP: 1, FN: 1, Precision: ptrFloat(0.5), Recall: ptrFloat(0.5), WeightedF1: ptrFloat(0.5)},
		{ScoreID: "s2", AttemptID: "r1-00", ScoredAt: at.Add(time.Hour), LabelsDigest: "l2", TP: 2, FP: 0, FN: 1, Precision: ptrFloat(1), Recall: ptrFloat(2.0 / 3), WeightedF1: ptrFloat(0.8), VerdictCorrect: &yes},
		{ScoreID: "s3", AttemptID: "r1-01", ScoredAt: at, LabelsDigest: "l2", TP: 0, FP: 0, FN: 2, Recall: ptrFloat(0)},
	} {
		if err := db.InsertScore(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func openFixture(t *testing.T) (*store.DB, Columns, []RunInfo) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, writeFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := LoadRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return db, cols, runs
}

var nanEqual = cmp.Comparer(func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) })

// TestLoadedRowsAreTheStoredRows stops the loader from losing, duplicating
// or zero-filling rows: what comes back from a real file, run by run or in
// one scan of every run, is exactly what was written, NULL as NaN and 0 as
// 0, with the latest review score of each attempt (r1 is scored, r2 not).
func TestLoadedRowsAreTheStoredRows(t *testing.T) {
	db, cols, _ := openFixture(t)
	want := fixtureRowsWhere(nil)
	want[0].Values[Precision], want[0].Values[Recall], want[0].Values[WeightedF1], want[0].Values[VerdictCorrect] = 1, 2.0/3, 0.8, 1
	want[1].Values[Recall] = 0
	want[0].LabelsDigest, want[1].LabelsDigest = "l2", "l2"
	for _, sel := range []Selection{
		{Spec: "r1 r2", RunIDs: []string{"r1", "r2"}},
		{Spec: "every run"},
	} {
		t.Run(sel.Spec, func(t *testing.T) {
			var got []Row
			if err := LoadRows(context.Background(), db, cols, sel, func(r *Row) { got = append(got, *r) }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, nanEqual); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
	stats, err := LoadRunStats(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixtureRuns[:2], stats); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// TestAMetricThatIsNotANumberIsAnError stops the typed loader from turning
// a value it cannot read into NaN ("not measured") or 0 without a word.
func TestAMetricThatIsNotANumberIsAnError(t *testing.T) {
	tests := []struct {
		src     any
		want    float64
		wantErr string
	}{
		{src: nil, want: math.NaN()},
		{src: int64(0), want: 0},
		{src: int64(1200), want: 1200},
		{src: 0.25, want: 0.25},
		{src: "1200", wantErr: `column input_tokens: string value "1200", want a number or NULL`},
		{src: []byte("x"), wantErr: `column input_tokens: []uint8 value "x", want a number or NULL`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T %v", tt.src, tt.src), func(t *testing.T) {
			got := -1.0
			err := metricDest{&got, "input_tokens"}.Scan(tt.src)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, nanEqual); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSelectionsNameRunsLabelsAndFilters stops a selection from matching
// the wrong attempts, and a typo from matching nothing silently.
func TestSelectionsNameRunsLabelsAndFilters(t *testing.T) {
	db, cols, runs := openFixture(t)
	type picked struct{ Runs, Arms, Days map[string]int }
	tests := []struct {
		spec string
		want picked
	}{
		{"r1", picked{Runs: map[string]int{"r1": 13}}},
		{"cand", picked{Runs: map[string]int{"r2": 12}}},
		{"arm=candidate", picked{Runs: map[string]int{"r1": 6, "r2": 6}, Arms: map[string]int{"candidate": 12}}},
		{"arm=candidate,label=base", picked{Runs: map[string]int{"r1": 6}, Arms: map[string]int{"candidate": 6}}},
		{"day=2026-11-30,task=t1", picked{Runs: map[string]int{"r2": 6}}},
		{"arm=baseline,arm=candidate,run=r2,rep=0", picked{Runs: map[string]int{"r2": 4}}},
		{"error_kind=timeout", picked{Runs: map[string]int{"r1": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			sel, err := ResolveSelection(context.Background(), db, cols, runs, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			got := picked{Runs: map[string]int{}}
			if tt.want.Arms != nil {
				got.Arms = map[string]int{}
			}
			err = LoadRows(context.Background(), db, cols, sel, func(r *Row) {
				got.Runs[r.RunID]++
				if got.Arms != nil {
					got.Arms[r.Arm]++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("picked (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBadSelectionsSayWhatIsWrong stops a typo in a run id or filter key
// from reading as "no data" or failing without saying what exists.
func TestBadSelectionsSayWhatIsWrong(t *testing.T) {
	db, cols, runs := openFixture(t)
	tests := []struct{ spec, want string }{
		{"r9", `no run or label "r9"; latest runs: r2 (cand), r1 (base)`},
		{"colour=blue", `unknown key "colour"; use day, run, label or a results column (run_id, attempt_id, task`},
		{"arm=x,=y", `condition 2 "=y": want key=value`},
		{"label=nope,arm=x", `no run or label "nope"`},
		{"  ", "empty run, label or filter"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ResolveSelection(context.Background(), db, cols, runs, tt.spec)
			if !errors.Is(err, ErrSelection) {
				t.Fatalf("err = %v; want ErrSelection", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

// exportPinned are the columns whose exported values the golden files pin.
// The full header is checked against the schema instead, so that a
// migration adding columns changes the header check, not every golden line.
var exportPinned = []string{"run_id", "attempt_id", "task", "arm", "rep", "attempt", "retry_of", "agent_version",
	"started_at", "duration_ms", "ok", "error_kind", "input_tokens", "output_tokens", "cache_read_input_tokens",
	"cache_creation_input_tokens", "cost_usd", "cost_source", "num_turns", "scored_at", "tp", "precision", "recall",
	"weighted_f1", "verdict_correct"}

// TestExportWritesEveryColumnNullAsNull stops an export that drops columns,
// reorders them, or writes NULL as 0 — the export is what pandas and
// DuckDB users analyse.
func TestExportWritesEveryColumnNullAsNull(t *testing.T) {
	db, cols, _ := openFixture(t)
	wantHeader := append(append(slices.Clone(cols.Names), "usage_cost_usd", "usage_cost_source", "tool_uses"), cols.Scores...)
	for _, f := range []ExportFormat{ExportCSV, ExportJSONL} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Export(context.Background(), db, cols, []string{"r1"}, f, &buf); err != nil {
				t.Fatal(err)
			}
			var header []string
			var records []map[string]string
			if f == ExportCSV {
				all, err := csv.NewReader(&buf).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				header = all[0]
				for _, rec := range all[1:] {
					m := map[string]string{}
					for i, v := range rec {
						m[header[i]] = v
					}
					records = append(records, m)
				}
			} else {
				for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
					dec := json.NewDecoder(strings.NewReader(line))
					dec.UseNumber()
					// Keys in the order written: read the object token by token.
					if _, err := dec.Token(); err != nil {
						t.Fatal(err)
					}
					var keys []string
					m := map[string]string{}
					for dec.More() {
						k, _ := dec.Token()
						var v any
						if err := dec.Decode(&v); err != nil {
							t.Fatal(err)
						}
						keys = append(keys, k.(string))
						switch x := v.(type) {
						case nil:
							m[k.(string)] = "null"
						case json.Number:
							m[k.(string)] = x.String()
						default:
							m[k.(string)] = fmt.Sprintf("%q", x)
						}
					}
					header = keys
					records = append(records, m)
				}
			}
			if diff := cmp.Diff(wantHeader, header); diff != "" {
				t.Errorf("columns are not every results column, the one cost and its source, the tool uses, then the score columns, in schema order (-want +got):\n%s", diff)
			}
			if len(records) != 13 {
				t.Errorf("%d records; want one per attempt of r1 (13)", len(records))
			}
			var pinned strings.Builder
			for _, m := range records {
				for i, c := range exportPinned {
					if i > 0 {
						pinned.WriteString("\t")
					}
					pinned.WriteString(m[c])
				}
				pinned.WriteString("\n")
			}
			checkGolden(t, "export_r1_"+string(f)+".golden", []byte(strings.Join(exportPinned, "\t")+"\n"+pinned.String()))
		})
	}
}

// TestLatestRunPrefersTheNewestBenchRun stops a bare `wfb report` from
// reporting the one-cell ad-hoc session someone ran after a bench run: the
// newest kind "run" is picked, and the newest session only where the file
// holds nothing else.
func TestLatestRunPrefersTheNewestBenchRun(t *testing.T) {
	for _, c := range []struct {
		name string
		runs []RunInfo
		want string
	}{
		{"a session after runs", []RunInfo{{ID: "r1", Kind: "run"}, {ID: "r2", Kind: "run"}, {ID: "s1", Kind: "session"}}, "r2"},
		{"a run last", []RunInfo{{ID: "s1", Kind: "session"}, {ID: "r1", Kind: "run"}}, "r1"},
		{"sessions only", []RunInfo{{ID: "s1", Kind: "session"}, {ID: "s2", Kind: "session"}}, "s2"},
	} {
		sel, err := LatestRun(c.runs)
		if err != nil || len(sel.RunIDs) != 1 || sel.RunIDs[0] != c.want {
			t.Errorf("%s: %v, %v; want %s", c.name, sel.RunIDs, err, c.want)
		}
	}
	if _, err := LatestRun(nil); !errors.Is(err, ErrSelection) {
		t.Errorf("no runs: %v, want ErrSelection", err)
	}
}
