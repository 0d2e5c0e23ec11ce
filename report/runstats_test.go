package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/resultsgen"
	"github.com/wfbench/wfb/store"
)

// TestKeptRunFiguresAreTheViewsAfterEveryWriter stops the figures a file
// keeps of each finished run (run_stats, run_cell_stats) from ever showing
// something the views would not: over generated files of several sizes,
// what wfb runs and the run page's grid read (FillRunStats,
// LoadCellCounts, LoadToolUse) equals run_summary_v, cells_v and the
// tool counts computed over the attempts — after the runs finish, after a rescore, after a resume
// (reopened, a retry added, finished again), after rows land in a finished
// run behind the writers' back, and after a merge adds rows to a run — and
// each writer leaves the kept copy present or dropped as it should.
func TestKeptRunFiguresAreTheViewsAfterEveryWriter(t *testing.T) {
	ctx := context.Background()
	for _, rows := range []int{2, 9, 1000, 4003} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			db, dir := generatedFile(t, rows)
			both := []string{resultsgen.RunA, resultsgen.RunB}
			check := func(step string, kept ...string) {
				t.Helper()
				checkKeptFigures(t, db, step, both, kept)
			}
			check("generated and finished", both...)

			// A rescore adds scores only: the figures are the attempts'.
			err := db.InsertScore(ctx, &store.Score{AttemptID: resultsgen.RunA + "-0", ScoredAt: time.Now(), LabelsDigest: "d", TP: 1})
			if err != nil {
				t.Fatal(err)
			}
			check("rescored", both...)

			// A resume reopens the run: nothing kept until it ends again.
			before := runStats(t, db, resultsgen.RunB)
			calls := int64(3)
			if err := db.ReopenRun(ctx, resultsgen.RunB); err != nil {
				t.Fatal(err)
			}
			check("reopened", resultsgen.RunA)
			retry := &store.Result{RunID: resultsgen.RunB, AttemptID: resultsgen.RunB + "-retry", Task: "task0", Arm: "arm0",
				Rep: 0, Attempt: 2, RetryOf: resultsgen.RunB + "-0", Agent: "stand-in", Model: "model-x", Sandbox: "host-unsafe",
				StartedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), OK: false, ErrorKind: "timeout", ProcessState: "timeout",
				ToolCalls: &calls, ToolUses: []store.ToolUse{{Tool: "Bash", Calls: 1}, {Tool: "Read", Calls: 2}}}
			if err := db.InsertResult(ctx, retry); err != nil {
				t.Fatal(err)
			}
			check("resumed, a retry recorded", resultsgen.RunA)
			if err := db.FinishRun(ctx, resultsgen.RunB, wfb.RunAborted, time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			check("resumed and finished", both...)
			// gen-b-0 was ok: its cell now ends with the failed retry.
			if after := runStats(t, db, resultsgen.RunB); after.Attempts != before.Attempts+1 || after.OK != before.OK-1 || after.Cells != before.Cells {
				t.Errorf("after the retry the run counts %+v; before it %+v: want one attempt more, the same cells, one ok fewer", after.Tally, before.Tally)
			}

			// A row written into a finished run without reopening it (no
			// writer of wfb does): the kept copy is stale, and is not read.
			late := *retry
			late.RunID, late.AttemptID, late.RetryOf, late.Attempt = resultsgen.RunA, resultsgen.RunA+"-late", "", 1
			late.Rep = 1 << 20
			if err := db.InsertResult(ctx, &late); err != nil {
				t.Fatal(err)
			}
			check("a row landed behind the writers' back", resultsgen.RunB)

			// A merge of a larger file of the same runs adds their rows,
			// and counts the runs anew in its transaction.
			bigger := filepath.Join(dir, "bigger.db")
			if err := resultsgen.Generate(ctx, bigger, rows+500); err != nil {
				t.Fatal(err)
			}
			if _, err := store.MergeFiles(ctx, db, []string{bigger}); err != nil {
				t.Fatal(err)
			}
			check("merged", both...)
		})
	}
}

// checkKeptFigures compares what FillRunStats and LoadCellCounts read for
// ids with the views over the attempts, and checks that exactly the runs
// kept have a current kept copy.
func checkKeptFigures(t *testing.T, db *store.DB, step string, ids, kept []string) {
	t.Helper()
	ctx := context.Background()
	_, fresh, err := db.Query(ctx, store.FreshRunStatsSQL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range fresh {
		got = append(got, asString(r[0]))
	}
	slices.Sort(got)
	if !slices.Equal(got, kept) {
		t.Errorf("%s: runs with current kept figures %v, want %v", step, got, kept)
	}
	runs, err := LoadRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{true, false} {
		infos := slices.Clone(runs)
		if err := FillRunStats(ctx, db, infos, all); err != nil {
			t.Fatal(err)
		}
		for _, ri := range infos {
			want := viewStats(t, db, ri.ID)
			if diff := cmp.Diff(want, ri, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("%s: run %s as read (all %v) differs from run_summary_v (-view +read):\n%s", step, ri.ID, all, diff)
			}
		}
	}
	for _, byTask := range []bool{false, true} {
		for _, sel := range [][]string{ids, ids[:1], ids[1:]} {
			got, err := LoadToolUse(ctx, db, NewColumns([]string{"tool_calls"}), Selection{RunIDs: sel}, byTask)
			if err != nil {
				t.Fatal(err)
			}
			// A filter every attempt passes makes LoadToolUse count over
			// the attempts.
			all := Selection{RunIDs: sel, Conds: []Cond{{Key: "agent", Values: []string{"stand-in"}}}}
			want, err := LoadToolUse(ctx, db, NewColumns([]string{"tool_calls"}), all, byTask)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" || len(want.Groups) == 0 {
				t.Errorf("%s: tool use of %v (by task %v) differs from the count over the attempts (-counted +read):\n%s", step, sel, byTask, diff)
			}
		}
	}
	for _, id := range ids {
		got, err := LoadCellCounts(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		var want []CellCount
		err = db.Each(ctx, store.CellStatsSQL, []any{id}, func(sc store.Scanner) error {
			var c CellCount
			err := sc.Scan(&c.Task, &c.Arm, &c.Cells, &c.OK)
			want = append(want, c)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sortCells := func(cs []CellCount) {
			slices.SortFunc(cs, func(a, b CellCount) int { return strings.Compare(a.Task+"\x00"+a.Arm, b.Task+"\x00"+b.Arm) })
		}
		sortCells(got)
		sortCells(want)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: run %s's cells per task and arm as read\n%v\nwant (cells_v, not empty)\n%v", step, id, got, want)
		}
	}
}

// runStats is run id as FillRunStats reads it.
func runStats(t *testing.T, db *store.DB, id string) RunInfo {
	t.Helper()
	runs, err := LoadRuns(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	rs := RunsOf(runs, []string{id})
	if err := FillRunStats(context.Background(), db, rs, false); err != nil {
		t.Fatal(err)
	}
	return rs[0]
}

// viewStats is run id with its counts read straight from run_summary_v.
func viewStats(t *testing.T, db *store.DB, id string) RunInfo {
	t.Helper()
	runs, err := LoadRuns(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ri := RunsOf(runs, []string{id})[0]
	_, rows, err := db.Query(context.Background(), `SELECT run_id, `+store.RunStatsColumns+` FROM run_summary_v WHERE run_id = ?`, id)
	if err != nil || len(rows) != 1 {
		t.Fatalf("run_summary_v of %s: %v, %d rows", id, err, len(rows))
	}
	r := rows[0]
	n := func(j int) int { return int(asFloat(r[j])) }
	ri.Tally = wfb.Tally{Cells: n(1), OK: n(2), Failed: n(3), Errored: n(4), Attempts: n(5)}
	ri.Cost = wfb.CostSum{N: n(6), USD: asFloat(r[7]), Metered: n(8), AgentN: n(9), AgentUSD: asFloat(r[10]), Of: n(5)}
	return ri
}
