package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/store"
)

// budgetCell is what the stand-in charges for one cell of runOKScript:
// 100 input tokens at $100/MTok and 20 output at $400/MTok (see
// mock/agent/price.go) — $0.018, reported; the model "stand-in" has no
// price in wfb's table, so no metered cost competes with it.
const budgetCell = 0.018

// A budget stops new cells once the run's recorded cost reaches it: with
// the bench's budget of $0.03 the second cell ($0.036 so far) crosses it,
// the three cells left get a "not run: budget" row each (cancelled, no
// usage), and the run is aborted with exit 1 naming the reason. A resume
// with --max-cost counts the whole run's cost, the first invocation's
// included: at $0.06 only one more cell starts ($0.054, then $0.072).
func TestABudgetStopsNewCellsAndLeavesNotRunRows(t *testing.T) {
	bench, db := runFixture(t, runOKScript, `runs: 5
workers: 1
budget: 0.03
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: stand-in}]
`)
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db}, s); code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{
		"aborted: the run's budget of $0.03 was reached (cost $0.036 over 2 of 2 attempts)",
		"the run's budget is $0.03; its cost so far: $0.036 over 2 of 5 attempts (a lower bound)",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 || runs[0].Status != wfb.RunAborted {
		t.Fatalf("runs %+v; want one, aborted", runs)
	}
	// The hint names the bench file given, not a placeholder BENCH.
	if want := "Continue with a higher budget: wfb run " + bench + " --db " + db + " --resume " + runs[0].ID + " --max-cost USD"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	checkBudgetRows(t, rows, 2, 3, "not run: the run's budget of $0.03 was reached (cost $0.036 over 2 of 2 attempts)")
	integrityOK(t, db)

	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db, "--resume", runs[0].ID, "--max-cost", "0.06"}, s); code != exitFailed {
		t.Fatalf("resume: exit %d, want 1\n%s", code, errOut)
	}
	runs, rows = resultsOf(t, db)
	if runs[0].Status != wfb.RunAborted {
		t.Errorf("resumed run %s, want aborted", runs[0].Status)
	}
	// 2 ok + 3 not-run from the first invocation; 2 ok (cells 3 and 4;
	// the 4th's start saw $0.054) and 1 not-run (cell 5) now.
	checkBudgetRows(t, rows, 4, 4, "not run: the run's budget of $0.06 was reached (cost $0.072 over 4 of 7 attempts (a lower bound))")
	integrityOK(t, db)
}

// checkBudgetRows checks the rows of a budget-stopped run: ok ones with
// their measured cost, and not-run ones, cancelled, that never started and
// carry no usage (NULL, never 0); the last not-run row has detail.
func checkBudgetRows(t *testing.T, rows []store.Result, wantOK, wantNotRun int, detail string) {
	t.Helper()
	ok, notRun, last := 0, 0, ""
	for _, r := range rows {
		switch {
		case r.OK:
			ok++
			if r.CostUSD == nil || *r.CostUSD != budgetCell {
				t.Errorf("ok row %s cost %v, want %v", r.AttemptID, r.CostUSD, budgetCell)
			}
		case r.ErrorKind == wfb.KindCancelled && r.ProcessState == wfb.StateNotStarted:
			notRun++
			last = r.ErrorDetail
			if r.InputTokens != nil || r.OutputTokens != nil || r.CostUSD != nil || r.MeteredCostUSD != nil || r.NumTurns != nil || r.DurationMS != nil {
				t.Errorf("not-run row %s carries usage: %+v", r.AttemptID, r)
			}
		default:
			t.Errorf("unexpected row: ok=%v %s %s %q", r.OK, r.ErrorKind, r.ProcessState, r.ErrorDetail)
		}
	}
	if ok != wantOK || notRun != wantNotRun || last != detail {
		t.Errorf("%d ok and %d not-run rows, last detail %q; want %d, %d, %q", ok, notRun, last, wantOK, wantNotRun, detail)
	}
}

// A budget the run's last cell reaches cut nothing: the run is complete,
// exit 0, and the end note still says what was spent.
func TestABudgetReachedByTheLastCellCompletesTheRun(t *testing.T) {
	bench, db := runFixture(t, runOKScript, "runs: 2\nsandbox: host-unsafe\nprovider: {mock: replies.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in}]\n")
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db, "--max-cost", "0.03"}, s); code != exitOK {
		t.Fatalf("exit %d, want 0\n%s", code, errOut)
	}
	runs, rows := resultsOf(t, db)
	if runs[0].Status != wfb.RunComplete || len(rows) != 2 || strings.Contains(errOut.String(), "aborted") ||
		!strings.Contains(errOut.String(), "the run's budget is $0.03; its cost so far: $0.036 over 2 of 2 attempts") {
		t.Errorf("status %s, %d rows; want complete, 2 rows, no abort and the end note; stderr:\n%s", runs[0].Status, len(rows), errOut)
	}
}

// Attempts with no measured cost add nothing toward the budget, and the end
// note says how many attempts its sum covers: here two spawn failures (no
// agent ran), so none — not measured, never $0.
func TestUnmeasuredAttemptsAreCountedInTheBudgetNote(t *testing.T) {
	bench, db := runFixture(t, runOKScript, "runs: 2\nsandbox: host-unsafe\nprovider: {mock: replies.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in, agent_bin: /nonexistent/agent}]\n")
	s, _, errOut := testStreams("", nil)
	run(context.Background(), []string{"run", bench, "--db", db, "--max-cost", "0.01"}, s)
	runs, rows := resultsOf(t, db)
	if runs[0].Status != wfb.RunComplete || len(rows) != 2 ||
		!strings.Contains(errOut.String(), "the run's budget is $0.01; its cost so far: not measured (0 of 2 attempts)") {
		t.Errorf("status %s, %d rows; want complete, 2 rows and the note; stderr:\n%s", runs[0].Status, len(rows), errOut)
	}
}

// --max-cost that is not a positive number of dollars is bad input, named,
// before anything is recorded.
func TestABadMaxCostIsBadInput(t *testing.T) {
	bench, db := runFixture(t, runOKScript, "provider: {mock: replies.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in}]\n")
	for _, v := range []string{"0", "-1", "abc", "NaN", "+Inf"} {
		s, _, errOut := testStreams("", nil)
		if code := run(context.Background(), []string{"run", bench, "--db", db, "--max-cost", v}, s); code != exitBadInput || !strings.Contains(errOut.String(), "--max-cost") {
			t.Errorf("--max-cost %s: exit %d, want 2 naming the flag; stderr:\n%s", v, code, errOut)
		}
	}
	if countRows(db) > 0 {
		t.Errorf("rows were recorded")
	}
}

// budgetOfRun reads the cap runs.config records for the file's only run,
// and the cap `wfb runs --format json` shows for it.
func budgetOfRun(t *testing.T, db string) (recorded *runner.BudgetConfig, shown any) {
	t.Helper()
	runs, _ := resultsOf(t, db)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	var c runner.RunConfig
	if err := json.Unmarshal([]byte(runs[0].Config), &c); err != nil {
		t.Fatalf("runs.config %q: %v", runs[0].Config, err)
	}
	out, errOut, code := wfbCmd(t, "runs", "--db", db, "--format", "json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("wfb runs: exit %d %s\n%s", code, errOut, out)
	}
	return c.Budget, rows[0]["budget_usd"]
}

// The cap a run had is recorded in runs.config, as --meter is, so that a
// report can say what the run was allowed to spend: the bench's budget
// (from "bench"), --max-cost (from "max-cost", which wins), the new cap
// when a resume raises it, and nothing at all for a run without one.
func TestTheRunsConfigRecordsItsBudget(t *testing.T) {
	t.Parallel()
	benchText := "runs: 2\nworkers: 1\nsandbox: host-unsafe\nprovider: {mock: replies.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in}]\n"
	t.Run("bench budget, then a resume with --max-cost", func(t *testing.T) {
		bench, db := runFixture(t, runOKScript, "budget: 0.01\n"+benchText)
		if _, errOut, code := wfbCmd(t, "run", bench, "--db", db); code != exitFailed {
			t.Fatalf("exit %d, want 1 (the budget stops the run)\n%s", code, errOut)
		}
		got, shown := budgetOfRun(t, db)
		if got == nil || *got != (runner.BudgetConfig{USD: 0.01, From: "bench"}) || shown != 0.01 {
			t.Errorf("recorded %+v, wfb runs shows %v; want $0.01 from the bench", got, shown)
		}
		runs, _ := resultsOf(t, db)
		// A field this wfb does not know (another version wrote it) must
		// survive the budget's update.
		execSQL(t, db, `UPDATE runs SET config = json_set(config, '$.written_by_a_later_wfb', 'kept')`)
		if _, errOut, code := wfbCmd(t, "run", bench, "--db", db, "--resume", runs[0].ID, "--max-cost", "5"); code != 0 {
			t.Fatalf("resume: exit %d\n%s", code, errOut)
		}
		if cfg := runConfigOf(t, db); !strings.Contains(cfg, `"written_by_a_later_wfb":"kept"`) {
			t.Errorf("the resume dropped a field it does not know: %s", cfg)
		}
		got, shown = budgetOfRun(t, db)
		if got == nil || *got != (runner.BudgetConfig{USD: 5, From: "max-cost"}) || shown != 5.0 {
			t.Errorf("after the resume: recorded %+v, wfb runs shows %v; want $5 from --max-cost", got, shown)
		}
	})
	t.Run("--max-cost over the bench's budget", func(t *testing.T) {
		bench, db := runFixture(t, runOKScript, "budget: 0.01\n"+benchText)
		if _, errOut, code := wfbCmd(t, "run", bench, "--db", db, "--max-cost", "2.5"); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		if got, shown := budgetOfRun(t, db); got == nil || *got != (runner.BudgetConfig{USD: 2.5, From: "max-cost"}) || shown != 2.5 {
			t.Errorf("recorded %+v, wfb runs shows %v; want $2.5 from --max-cost", got, shown)
		}
		if out, _, _ := wfbCmd(t, "report", "--db", db, "--format", "markdown"); !strings.Contains(strings.SplitN(out, "\n", 2)[0], ", complete, budget $2.5") {
			t.Errorf("wfb report's title does not name the cap:\n%s", out)
		}
	})
	t.Run("no cap", func(t *testing.T) {
		bench, db := runFixture(t, runOKScript, benchText)
		if _, errOut, code := wfbCmd(t, "run", bench, "--db", db); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		if got, shown := budgetOfRun(t, db); got != nil || shown != nil {
			t.Errorf("recorded %+v, wfb runs shows %v; want no budget and null", got, shown)
		}
	})
}

// execSQL runs q on the results file db through a plain SQLite handle.
func execSQL(t *testing.T, db, q string) {
	t.Helper()
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// runConfigOf returns the one run's config as recorded.
func runConfigOf(t *testing.T, db string) string {
	t.Helper()
	runs, _ := resultsOf(t, db)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	return runs[0].Config
}
