package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// TestAnUpgradedFileKeepsTheFiguresOfItsFinishedRuns: a file written
// before runs' figures were kept (schema 14) is read as before once
// upgraded, and the upgrade counts its finished runs (complete, aborted)
// from the views — the same figures — and none of a run still running or
// interrupted, whose figures readers compute from its attempts.
func TestAnUpgradedFileKeepsTheFiguresOfItsFinishedRuns(t *testing.T) {
	ctx := context.Background()
	path, raw := fileAtVersion(t, 14)
	for i, status := range []string{"complete", "aborted", "running", "interrupted"} {
		id := fmt.Sprintf("run-%s", status)
		if _, err := raw.Exec(`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES (?, 'run', '2026-01-01T00:00:00.000Z', ?, 'old')`, id, status); err != nil {
			t.Fatal(err)
		}
		for rep := range 3 + i {
			_, err := raw.Exec(`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, agent, model, sandbox, started_at,
				ok, error_kind, process_state, cost_usd, cost_source)
				VALUES (?, ?, 't', 'a', ?, 1, 'stand-in', 'm', 'host-unsafe', '2026-01-01T00:00:01.000Z', ?, ?, 'exited', ?, 'reported')`,
				id, fmt.Sprintf("%s-%d", id, rep), rep, rep%2 == 0, map[bool]any{true: nil, false: "verify-failed"}[rep%2 == 0], 0.25*float64(rep))
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	raw.Close()
	if _, _, err := Upgrade(ctx, path); err != nil {
		t.Fatal(err)
	}
	d, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, kept, err := d.Query(ctx, FreshRunStatsSQL+` ORDER BY s.run_id`)
	if err != nil {
		t.Fatal(err)
	}
	_, views, err := d.Query(ctx, `SELECT run_id, `+RunStatsColumns+` FROM run_summary_v WHERE status IN ('complete', 'aborted') ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 {
		t.Errorf("kept figures of %d runs, want the 2 finished ones", len(kept))
	}
	if diff := cmp.Diff(views, kept); diff != "" {
		t.Errorf("kept figures differ from run_summary_v's (-views +kept):\n%s", diff)
	}
	for _, id := range []string{"run-complete", "run-aborted"} {
		got := queryOne(t, d, `SELECT count(*), sum(cells), sum(ok) FROM run_cell_stats WHERE run_id = ?`, id)
		want := queryOne(t, d, `SELECT count(*), sum(cells), sum(ok) FROM (`+CellStatsSQL+`)`, id)
		if diff := cmp.Diff(want, got); diff != "" || got[0] != int64(1) {
			t.Errorf("run %s: kept cells %v, want cells_v's %v", id, got, want)
		}
		got = queryOne(t, d, `SELECT count(*), sum(attempts), sum(workflow_not_used) FROM run_tool_stats WHERE run_id = ?`, id)
		want = queryOne(t, d, `SELECT count(*), sum(attempts), sum(workflow_not_used) FROM (`+ToolStatsSQL+`)`, id)
		if diff := cmp.Diff(want, got); diff != "" || got[0] != int64(1) {
			t.Errorf("run %s: kept tool counts %v, want %v", id, got, want)
		}
	}
}

// TestARunsFiguresSelectedByRunAreTheViewsRow holds RunStatsSQL, which
// counts one run over its own attempts (what FinishRun keeps and readers
// compute for a run without a kept copy), to run_summary_v's row of that
// run: cells ending in every kind after a retry, costs the wire priced,
// the agent reported or nobody measured, in two runs, and a run with no
// attempt (zero counts, NULL sums). The kept copy FinishRun makes is the
// same row.
func TestARunsFiguresSelectedByRunAreTheViewsRow(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, id := range []string{"run-2", "run-empty"} {
		if err := d.CreateRun(ctx, Run{ID: id, Kind: "run", StartedAt: t0, Status: wfb.RunRunning, Harness: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	kinds := append(append([]string{""}, wfb.ErrorKinds...), "a-kind-wfb-does-not-know")
	costs := []*float64{nil, ptr(0.0), ptr(0.25), ptr(1.0 / 3)}
	sources := []string{"", wfb.UsageMetered, wfb.UsageReported}
	n := 0
	for ki, kind := range kinds {
		for attempt := 1; attempt <= 2; attempt++ {
			n++
			r := okResult(fmt.Sprintf("att-%d", n))
			r.RunID = []string{"run-1", "run-2"}[n%2]
			r.Task, r.Rep, r.Attempt = fmt.Sprintf("t%d", ki%3), ki, attempt
			r.OK, r.ErrorKind = kind == "", kind
			if attempt == 1 {
				r.OK, r.ErrorKind = false, wfb.KindProviderError
			}
			r.UsageSource, r.MeteredCostUSD, r.CostUSD = sources[n%3], costs[(n/3)%4], costs[(n/12)%4]
			if r.CostUSD != nil {
				r.CostSource = "reported"
			}
			if err := insertAnyKind(ctx, d, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, id := range []string{"run-1", "run-2", "run-empty"} {
		view := queryOne(t, d, `SELECT run_id, `+RunStatsColumns+` FROM run_summary_v WHERE run_id = ?`, id)
		byRun := queryOne(t, d, RunStatsSQL, id)
		if diff := cmp.Diff(view, byRun); diff != "" {
			t.Errorf("run %s: RunStatsSQL differs from run_summary_v (-view +RunStatsSQL):\n%s", id, diff)
		}
		if err := d.FinishRun(ctx, id, wfb.RunComplete, t0); err != nil {
			t.Fatal(err)
		}
		kept := queryOne(t, d, `SELECT run_id, `+RunStatsColumns+` FROM run_stats WHERE run_id = ?`, id)
		if diff := cmp.Diff(view, kept); diff != "" {
			t.Errorf("run %s: the kept copy differs from run_summary_v (-view +kept):\n%s", id, diff)
		}
	}
}
