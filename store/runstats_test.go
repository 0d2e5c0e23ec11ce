package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnUpgradedFileKeepsTheFiguresOfItsFinishedRuns: a file written
// before runs' figures were kept (schema 11) is read as before once
// upgraded, and the upgrade counts its finished runs (complete, aborted)
// from the views — the same figures — and none of a run still running or
// interrupted, whose figures readers compute from its attempts.
func TestAnUpgradedFileKeepsTheFiguresOfItsFinishedRuns(t *testing.T) {
	ctx := context.Background()
	path, raw := fileAtVersion(t, 11)
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
