-- 0015_run_stats: each finished run's figures, counted once when it ends,
-- so that listing runs, drawing a run's grid and counting its tool calls
-- read a few rows instead of every attempt.
--
-- run_stats holds a run's run_summary_v row (cells by outcome, attempts,
-- the one cost), run_cell_stats its cells and ok cells per task and arm,
-- by the cell rule (cells_v), and run_tool_stats and run_tool_use_stats its
-- tool calls per task and arm (below). They are copies of what the views
-- compute, never another definition: wfb fills them from the views, in
-- the transaction that finishes the run (complete or aborted), and again
-- in the one that merges rows into it; reopening a run (--resume) drops
-- them in its own. A run running or interrupted has none, and readers
-- compute its figures from the views. results_rowid is the run's greatest
-- results rowid when they were counted (0: no attempt): results are
-- append-only, so a reader that finds another one knows rows landed since
-- and computes from the views instead — a stale copy is never shown. Only
-- results rows go into these figures; a rescore (new scores) leaves them
-- exact.
CREATE TABLE run_stats (
    run_id             TEXT PRIMARY KEY REFERENCES runs (run_id),
    results_rowid      INTEGER NOT NULL CHECK (results_rowid >= 0),
    cells              INTEGER NOT NULL CHECK (cells >= 0),
    ok                 INTEGER NOT NULL CHECK (ok >= 0),
    failed             INTEGER NOT NULL CHECK (failed >= 0),
    errored            INTEGER NOT NULL CHECK (errored >= 0),
    attempts           INTEGER NOT NULL CHECK (attempts >= 0),
    cost_usd_n         INTEGER NOT NULL CHECK (cost_usd_n >= 0),
    cost_usd_sum       REAL,
    cost_usd_metered_n INTEGER NOT NULL CHECK (cost_usd_metered_n >= 0),
    agent_cost_usd_n   INTEGER NOT NULL CHECK (agent_cost_usd_n >= 0),
    agent_cost_usd_sum REAL
);

CREATE TABLE run_cell_stats (
    run_id TEXT NOT NULL REFERENCES run_stats (run_id),
    task   TEXT NOT NULL,
    arm    TEXT NOT NULL,
    cells  INTEGER NOT NULL CHECK (cells >= 1),
    ok     INTEGER NOT NULL CHECK (ok >= 0),
    PRIMARY KEY (run_id, task, arm)
) WITHOUT ROWID;

-- run_tool_stats: a finished run's tool calls per task and arm, as the
-- reports count them (arm_tool_calls_v's counts, by task too): attempts,
-- those whose tool calls were measured, those that called a tool, the
-- calls, and the attempts that ended workflow-not-used; run_tool_use_stats
-- the same per tool (tool_uses: attempts that called it, and its calls).
CREATE TABLE run_tool_stats (
    run_id            TEXT NOT NULL REFERENCES run_stats (run_id),
    task              TEXT NOT NULL,
    arm               TEXT NOT NULL,
    attempts          INTEGER NOT NULL CHECK (attempts >= 1),
    measured          INTEGER NOT NULL CHECK (measured >= 0),
    using_tools       INTEGER NOT NULL CHECK (using_tools >= 0),
    calls             INTEGER NOT NULL CHECK (calls >= 0),
    workflow_not_used INTEGER NOT NULL CHECK (workflow_not_used >= 0),
    PRIMARY KEY (run_id, task, arm)
) WITHOUT ROWID;
CREATE TABLE run_tool_use_stats (
    run_id   TEXT NOT NULL REFERENCES run_stats (run_id),
    task     TEXT NOT NULL,
    arm      TEXT NOT NULL,
    tool     TEXT NOT NULL,
    attempts INTEGER NOT NULL CHECK (attempts >= 1),
    calls    INTEGER NOT NULL CHECK (calls >= 1),
    PRIMARY KEY (run_id, task, arm, tool)
) WITHOUT ROWID;

-- The runs a file already holds, finished, get theirs now.
INSERT INTO run_stats
SELECT s.run_id, COALESCE((SELECT max(rowid) FROM results WHERE run_id = s.run_id), 0),
       s.cells, s.ok, s.failed, s.errored, s.attempts, s.cost_usd_n, s.cost_usd_sum,
       s.cost_usd_metered_n, s.agent_cost_usd_n, s.agent_cost_usd_sum
FROM run_summary_v s WHERE s.status IN ('complete', 'aborted');
INSERT INTO run_cell_stats
SELECT c.run_id, c.task, c.arm, COUNT(*), SUM(c.outcome = 'ok')
FROM cells_v c WHERE c.run_id IN (SELECT run_id FROM run_stats)
GROUP BY c.run_id, c.task, c.arm;
INSERT INTO run_tool_stats
SELECT r.run_id, r.task, r.arm, COUNT(*), COUNT(r.tool_calls), COUNT(*) FILTER (WHERE r.tool_calls > 0),
       COALESCE(SUM(r.tool_calls), 0), COUNT(*) FILTER (WHERE r.error_kind = 'workflow-not-used')
FROM results r WHERE r.run_id IN (SELECT run_id FROM run_stats)
GROUP BY r.run_id, r.task, r.arm;
INSERT INTO run_tool_use_stats
SELECT r.run_id, r.task, r.arm, t.tool, COUNT(*), SUM(t.calls)
FROM tool_uses t JOIN results r ON r.attempt_id = t.attempt_id WHERE r.run_id IN (SELECT run_id FROM run_stats)
GROUP BY r.run_id, r.task, r.arm, t.tool;
