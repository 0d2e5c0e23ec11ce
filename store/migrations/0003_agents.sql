-- 0003_agents: what real agent CLIs report beyond the four usage fields.
--
-- Token semantics. The results token columns always hold Anthropic
-- semantics: input_tokens is UNCACHED input, and cache_read_input_tokens
-- and cache_creation_input_tokens ADD to it, so their sum is the whole
-- prompt. usage_semantics says what the agent reported:
--   'anthropic' (Claude Code): stored as reported.
--   'openai' (Codex): the agent reported input_tokens INCLUDING its cached
--     tokens. wfb stores input_tokens = reported input - cached,
--     cache_read_input_tokens = cached, cache_creation_input_tokens NULL
--     (OpenAI does not report cache writes: not measured, not zero), and
--     keeps the reported figures in reported_input_tokens and
--     reported_cached_input_tokens.
-- usage_semantics is NULL when no usage was recorded. Nothing is counted
-- twice: SUM(input_tokens + cache_read_input_tokens) is the prompt under
-- either semantics.
--
-- reasoning_output_tokens are PART of output_tokens (OpenAI semantics for
-- both), never added to it. api_retries counts provider retries the agent
-- reported (NULL when its output does not show them, e.g. Claude Code's
-- json format); permission_denials counts tool calls its permission policy
-- refused (NULL when the agent does not report denials, e.g. Codex).

ALTER TABLE results ADD COLUMN usage_semantics TEXT CHECK (usage_semantics IN ('anthropic', 'openai'));
ALTER TABLE results ADD COLUMN reported_input_tokens INTEGER CHECK (reported_input_tokens >= 0);
ALTER TABLE results ADD COLUMN reported_cached_input_tokens INTEGER CHECK (reported_cached_input_tokens >= 0);
ALTER TABLE results ADD COLUMN reasoning_output_tokens INTEGER CHECK (reasoning_output_tokens >= 0);
ALTER TABLE results ADD COLUMN api_retries INTEGER CHECK (api_retries >= 0);
ALTER TABLE results ADD COLUMN permission_denials INTEGER CHECK (permission_denials >= 0);

-- Per-model usage as the agent reported it (Claude Code's modelUsage, keyed
-- by the model name it requested; Anthropic semantics). An attempt's rows
-- add up to what the agent reported in total for it.
CREATE TABLE model_usage (
    attempt_id                  TEXT NOT NULL REFERENCES results (attempt_id),
    model                       TEXT NOT NULL,
    input_tokens                INTEGER CHECK (input_tokens >= 0),
    output_tokens               INTEGER CHECK (output_tokens >= 0),
    cache_read_input_tokens     INTEGER CHECK (cache_read_input_tokens >= 0),
    cache_creation_input_tokens INTEGER CHECK (cache_creation_input_tokens >= 0),
    cost_usd                    REAL CHECK (cost_usd >= 0),
    PRIMARY KEY (attempt_id, model)
) STRICT;

CREATE TRIGGER model_usage_no_update BEFORE UPDATE ON model_usage
BEGIN SELECT RAISE(ABORT, 'model usage is append-only'); END;
CREATE TRIGGER model_usage_no_delete BEFORE DELETE ON model_usage
BEGIN SELECT RAISE(ABORT, 'model usage is append-only'); END;

-- results_v gains the new columns at its end; scored_results_v selects
-- results_v's columns by r.*, so it gains them too.
DROP VIEW results_v;
CREATE VIEW results_v AS
SELECT r.run_id, u.label, r.attempt_id, r.task, r.arm, r.rep, r.attempt, r.retry_of,
       r.agent, r.agent_version, r.model, r.sandbox, r.started_at, r.duration_ms,
       r.ok, r.error_kind, r.error_detail, r.process_state, r.exit_code,
       r.input_tokens, r.output_tokens, r.cache_read_input_tokens,
       r.cache_creation_input_tokens, r.cost_usd, r.cost_source, r.num_turns,
       r.session_id, r.verdict, r.findings_count,
       r.usage_semantics, r.reported_input_tokens, r.reported_cached_input_tokens,
       r.reasoning_output_tokens, r.api_retries, r.permission_denials
FROM results r JOIN runs u ON u.run_id = r.run_id;

-- The agent CLI versions each run used, from its rows: a run that mixed
-- versions (an upgrade mid-sweep) shows every one, with how many attempts
-- each ran.
CREATE VIEW run_agents_v AS
SELECT run_id, agent, agent_version, COUNT(*) AS attempts
FROM results
WHERE agent IS NOT NULL
GROUP BY run_id, agent, agent_version;
