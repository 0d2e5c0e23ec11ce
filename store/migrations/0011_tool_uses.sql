-- 0011_tool_uses: the evidence that a workflow was used.
--
-- results.tool_calls is how many tool calls the agent's output showed in
-- the attempt: built-in tools, MCP tools and skills alike. NULL: not
-- measured (nothing ran, or the output could not be read); 0: measured,
-- the agent called no tool. tool_uses has one row per tool name the
-- attempt called, with how many times (always at least once): built-in
-- tools as the agent names them, an MCP server's tools as
-- mcp__SERVER__TOOL whatever the agent, a skill's use as skill:NAME. An
-- attempt's calls add up to its tool_calls.
--
-- A session that ended ok without calling what its arm's expect_tools
-- name is recorded with error_kind 'workflow-not-used': a failure of the
-- workflow (it counts against the arm), never its success.

ALTER TABLE results ADD COLUMN tool_calls INTEGER CHECK (tool_calls >= 0);

CREATE TABLE tool_uses (
    attempt_id TEXT NOT NULL REFERENCES results (attempt_id),
    tool       TEXT NOT NULL CHECK (length(tool) BETWEEN 1 AND 200),
    calls      INTEGER NOT NULL CHECK (calls >= 1),
    PRIMARY KEY (attempt_id, tool)
) STRICT;

CREATE TRIGGER tool_uses_no_update BEFORE UPDATE ON tool_uses
BEGIN SELECT RAISE(ABORT, 'tool uses are append-only'); END;
CREATE TRIGGER tool_uses_no_delete BEFORE DELETE ON tool_uses
BEGIN SELECT RAISE(ABORT, 'tool uses are append-only'); END;

-- results_v gains tool_calls at its end (scored_results_v, r.*, too).
DROP VIEW results_v;
CREATE VIEW results_v AS
SELECT r.run_id, u.label, r.attempt_id, r.task, r.arm, r.rep, r.attempt, r.retry_of,
       r.agent, r.agent_version, r.model, r.sandbox, r.started_at, r.duration_ms,
       r.ok, r.error_kind, r.error_detail, r.process_state, r.exit_code,
       r.input_tokens, r.output_tokens, r.cache_read_input_tokens,
       r.cache_creation_input_tokens, r.cost_usd, r.cost_source, r.num_turns,
       r.session_id, r.verdict, r.findings_count,
       r.usage_semantics, r.reported_input_tokens, r.reported_cached_input_tokens,
       r.reasoning_output_tokens, r.api_retries, r.permission_denials,
       r.metered_input_tokens, r.metered_output_tokens, r.metered_cache_read_input_tokens,
       r.metered_cache_creation_input_tokens, r.usage_source, r.usage_check,
       r.metered_cost_usd, r.cost_check, r.usage_verdict, r.cost_verdict,
       r.tool_calls
FROM results r JOIN runs u ON u.run_id = r.run_id;

-- arm_tools_v: per run, arm and tool, how many attempts called it
-- (attempts_using) and how often in all (calls), beside attempts_measured:
-- the arm's attempts whose tool calls were read at all (tool_calls not
-- NULL) — the denominator of "used in 5 of 6". An arm none of whose
-- attempts called any tool has no row here; arm_tool_calls_v has one row
-- per run and arm whatever they called.
CREATE VIEW arm_tool_calls_v AS
SELECT run_id, arm,
       COUNT(*)            AS attempts,
       COUNT(tool_calls)   AS attempts_measured,
       SUM(tool_calls)     AS tool_calls_sum,
       COUNT(*) FILTER (WHERE error_kind = 'workflow-not-used') AS workflow_not_used
FROM results GROUP BY run_id, arm;

CREATE VIEW arm_tools_v AS
SELECT r.run_id, r.arm, t.tool,
       COUNT(*)     AS attempts_using,
       SUM(t.calls) AS calls,
       c.attempts_measured
FROM tool_uses t
JOIN results r ON r.attempt_id = t.attempt_id
JOIN arm_tool_calls_v c ON c.run_id = r.run_id AND c.arm = r.arm
GROUP BY r.run_id, r.arm, t.tool;
