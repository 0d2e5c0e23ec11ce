package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wfbench/wfb"
)

// A finished run's figures are counted once and kept (migration 0015):
// run_stats holds its run_summary_v row, run_cell_stats its cells per task
// and arm, run_tool_stats and run_tool_use_stats its tool calls per task
// and arm: copies of what the views and the reports' queries compute.
// Every writer that changes a run's status or rows calls countRunTx in the
// same transaction, so that the copies are made, dropped or made again
// with the change they describe; readers also check results_rowid (see
// FreshRunStatsSQL). The run's rows are copied with them (run_rows, see
// runrows.go).

// CellStatsSQL counts the cells and ok cells of run ? per task and arm,
// by the cell rule (cells_v): what run_cell_stats keeps, and what a reader
// computes for a run without them.
const CellStatsSQL = `SELECT task, arm, COUNT(*) AS cells, SUM(outcome = 'ok') AS ok FROM cells_v WHERE run_id = ?1 GROUP BY task, arm`

// ToolStatsSQL counts the tool calls of run ?1's attempts per task and arm
// (the counts of arm_tool_calls_v, by task too): attempts, those whose
// tool calls were measured, those that called a tool, the calls, and
// those that ended workflow-not-used. What run_tool_stats keeps.
const ToolStatsSQL = `SELECT r.task, r.arm, COUNT(*) AS attempts, COUNT(r.tool_calls) AS measured,
	COUNT(*) FILTER (WHERE r.tool_calls > 0) AS using_tools, COALESCE(SUM(r.tool_calls), 0) AS calls,
	COUNT(*) FILTER (WHERE r.error_kind = '` + wfb.KindWorkflowNotUsed + `') AS workflow_not_used
	FROM results r WHERE r.run_id = ?1 GROUP BY r.task, r.arm`

// ToolUseStatsSQL counts run ?1's attempts that called each tool, and its
// calls, per task and arm (tool_uses). What run_tool_use_stats keeps.
const ToolUseStatsSQL = `SELECT r.task, r.arm, t.tool, COUNT(*) AS attempts, SUM(t.calls) AS calls
	FROM tool_uses t JOIN results r ON r.attempt_id = t.attempt_id WHERE r.run_id = ?1 GROUP BY r.task, r.arm, t.tool`

// RunStatsColumns are run_summary_v's figures that run_stats keeps, in
// the order both hold them.
const RunStatsColumns = `cells, ok, failed, errored, attempts, cost_usd_n, cost_usd_sum, cost_usd_metered_n,
	agent_cost_usd_n, agent_cost_usd_sum`

// RunStatsSQL is run_summary_v's row of run ?1 (run_id and
// RunStatsColumns), its figures computed over that run's attempts alone:
// the view, selected by run, aggregates every run's first. The store's
// tests hold the two to the same figures.
const RunStatsSQL = `SELECT ?1 AS run_id, c.cells, c.ok, c.failed, c.errored, a.attempts, a.cost_usd_n, a.cost_usd_sum,
	a.cost_usd_metered_n, a.agent_cost_usd_n, a.agent_cost_usd_sum
	FROM (SELECT COUNT(*) AS cells, COALESCE(SUM(outcome = 'ok'), 0) AS ok, COALESCE(SUM(outcome = 'failed'), 0) AS failed,
	             COALESCE(SUM(outcome = 'errored'), 0) AS errored
	      FROM cells_v WHERE run_id = ?1) c,
	     (SELECT COUNT(*) AS attempts, COUNT(usage_cost_usd) AS cost_usd_n, SUM(usage_cost_usd) AS cost_usd_sum,
	             COUNT(*) FILTER (WHERE usage_cost_source = 'metered') AS cost_usd_metered_n,
	             COUNT(cost_usd) AS agent_cost_usd_n, SUM(cost_usd) AS agent_cost_usd_sum
	      FROM measured_results_v WHERE run_id = ?1) a`

// FreshRunStatsSQL selects run_id and RunStatsColumns of the runs whose
// kept figures still describe them: finished (complete or aborted), and
// no results row added since they were counted.
const FreshRunStatsSQL = `SELECT s.run_id, ` + RunStatsColumns + ` FROM run_stats s JOIN runs u ON u.run_id = s.run_id
	WHERE u.status IN ('` + wfb.RunComplete + `', '` + wfb.RunAborted + `')
	  AND s.results_rowid = COALESCE((SELECT max(rowid) FROM results WHERE run_id = s.run_id), 0)`

// countRunTx makes run id's kept figures agree with its status and rows:
// it drops what was kept, and counts them anew when the run is finished
// (complete or aborted). A run running or interrupted keeps none.
func countRunTx(ctx context.Context, tx *sql.Tx, id string) error {
	if err := dropRunRowsTx(ctx, tx, id); err != nil {
		return err
	}
	for _, q := range []string{`DELETE FROM run_cell_stats WHERE run_id = ?`, `DELETE FROM run_tool_stats WHERE run_id = ?`,
		`DELETE FROM run_tool_use_stats WHERE run_id = ?`, `DELETE FROM run_stats WHERE run_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("count run %s: %w", id, err)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_stats (run_id, results_rowid, `+RunStatsColumns+`)
		SELECT s.run_id, COALESCE((SELECT max(rowid) FROM results WHERE run_id = ?1), 0), `+RunStatsColumns+`
		FROM (`+RunStatsSQL+`) s
		WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?1 AND status IN ('`+wfb.RunComplete+`', '`+wfb.RunAborted+`'))`, id)
	kept := ` WHERE EXISTS (SELECT 1 FROM run_stats WHERE run_id = ?1)`
	for _, q := range []string{
		`INSERT INTO run_cell_stats (run_id, task, arm, cells, ok) SELECT ?1, c.* FROM (` + CellStatsSQL + `) c` + kept,
		`INSERT INTO run_tool_stats (run_id, task, arm, attempts, measured, using_tools, calls, workflow_not_used)
			SELECT ?1, c.* FROM (` + ToolStatsSQL + `) c` + kept,
		`INSERT INTO run_tool_use_stats (run_id, task, arm, tool, attempts, calls) SELECT ?1, c.* FROM (` + ToolUseStatsSQL + `) c` + kept,
	} {
		if err != nil {
			break
		}
		_, err = tx.ExecContext(ctx, q, id)
	}
	if err != nil {
		return fmt.Errorf("count run %s: %w", id, err)
	}
	// And its rows are copied as the reports read them (runrows.go).
	return copyRunRowsTx(ctx, tx, id)
}
