-- 0006_metered: the provider's wire as a second witness of each attempt's
-- usage, beside what the agent reported.
--
-- When wfb meters a session (the default), every request the agent sends
-- goes through a loopback proxy that reads the provider's own usage report
-- (rows of requests, migration 0004, whose attempt_id is the result row's).
-- After the session the sum over the attempt's billed requests is compared
-- with the agent's report:
--
--   metered_input_tokens, metered_output_tokens,
--   metered_cache_read_input_tokens, metered_cache_creation_input_tokens:
--     the wire's sums, in the token columns' semantics (input is UNCACHED
--     input; the cache columns ADD to it). NULL when not measured: the
--     session was not metered, no request was billed (a 529-only attempt),
--     the wire refused the figure, or the protocol does not report it
--     (OpenAI's cache writes).
--   usage_source: which witness the reports use — 'metered' (the wire's
--     columns above), 'reported' (the agent's: input_tokens and the rest,
--     when the session was not metered or the wire saw no model request),
--     NULL when neither is a measurement.
--   usage_check: NULL = not checked; 'agree'; or the verdict and, for each
--     field in question, both values: 'disagree: input_tokens wire 1200,
--     agent 1100', 'refused: cache_read_input_tokens: request 1 (...):
--     usage.cache_read_input_tokens is negative (-5) (wire -5, agent 0)'.
--     A refusal (a figure the wire never sent or sent as nonsense) makes the
--     row ok = 0, session-error, and its token columns NULL, whatever the
--     agent printed. The agent's zeros for a failed attempt whose requests
--     were never billed are NULL too: invented, not measured.
--   metered_cost_usd: the wire's usage priced with wfb's price table for
--     the model the attempt ran (runner/prices.go, each price with its
--     source and date); NULL when not measured or the model is not priced.
--   cost_check: NULL = not checked (either cost missing); 'agree' (within
--     rounding: 1% or $0.000001); else 'disagree: wire $X, agent $Y'.

ALTER TABLE results ADD COLUMN metered_input_tokens INTEGER CHECK (metered_input_tokens >= 0);
ALTER TABLE results ADD COLUMN metered_output_tokens INTEGER CHECK (metered_output_tokens >= 0);
ALTER TABLE results ADD COLUMN metered_cache_read_input_tokens INTEGER CHECK (metered_cache_read_input_tokens >= 0);
ALTER TABLE results ADD COLUMN metered_cache_creation_input_tokens INTEGER CHECK (metered_cache_creation_input_tokens >= 0);
ALTER TABLE results ADD COLUMN usage_source TEXT CHECK (usage_source IN ('metered', 'reported'));
ALTER TABLE results ADD COLUMN usage_check TEXT;
ALTER TABLE results ADD COLUMN metered_cost_usd REAL CHECK (metered_cost_usd >= 0 AND metered_cost_usd <= 1.7976931348623157e308);
ALTER TABLE results ADD COLUMN cost_check TEXT;

-- results_v gains the new columns at its end (scored_results_v, r.*, too).
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
       r.metered_cost_usd, r.cost_check
FROM results r JOIN runs u ON u.run_id = r.run_id;

-- measured_results_v: each attempt's usage as the reports use it — the
-- wire's figures where usage_source is 'metered', else the agent's.
CREATE VIEW measured_results_v AS
SELECT r.*,
       CASE WHEN usage_source = 'metered' THEN metered_input_tokens ELSE input_tokens END AS usage_input_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_output_tokens ELSE output_tokens END AS usage_output_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_cache_read_input_tokens ELSE cache_read_input_tokens END AS usage_cache_read_input_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_cache_creation_input_tokens ELSE cache_creation_input_tokens END AS usage_cache_creation_input_tokens
FROM results r;

-- arm_summary_v sums the usage the reports use (the wire's where metered:
-- a row without usage_source sums as before), and counts the attempts the
-- wire measured and those whose check disagreed or refused.
DROP VIEW arm_summary_v;
CREATE VIEW arm_summary_v AS
SELECT run_id, arm,
       COUNT(*)                                 AS attempted,
       SUM(ok)                                  AS ok,
       COUNT(*) - SUM(ok)                       AS failed,
       COUNT(usage_input_tokens)                AS input_tokens_n,
       SUM(usage_input_tokens)                  AS input_tokens_sum,
       AVG(usage_input_tokens)                  AS input_tokens_avg,
       COUNT(usage_output_tokens)               AS output_tokens_n,
       SUM(usage_output_tokens)                 AS output_tokens_sum,
       AVG(usage_output_tokens)                 AS output_tokens_avg,
       COUNT(usage_cache_read_input_tokens)     AS cache_read_input_tokens_n,
       SUM(usage_cache_read_input_tokens)       AS cache_read_input_tokens_sum,
       AVG(usage_cache_read_input_tokens)       AS cache_read_input_tokens_avg,
       COUNT(usage_cache_creation_input_tokens) AS cache_creation_input_tokens_n,
       SUM(usage_cache_creation_input_tokens)   AS cache_creation_input_tokens_sum,
       AVG(usage_cache_creation_input_tokens)   AS cache_creation_input_tokens_avg,
       COUNT(cost_usd)                          AS cost_usd_n,
       SUM(cost_usd)                            AS cost_usd_sum,
       AVG(cost_usd)                            AS cost_usd_avg,
       COUNT(duration_ms)                       AS duration_ms_n,
       SUM(duration_ms)                         AS duration_ms_sum,
       AVG(duration_ms)                         AS duration_ms_avg,
       COUNT(*) FILTER (WHERE usage_source = 'metered')      AS usage_metered,
       COUNT(*) FILTER (WHERE usage_check LIKE 'disagree%')  AS usage_disagreements,
       COUNT(*) FILTER (WHERE usage_check LIKE 'refused%')   AS usage_refusals
FROM measured_results_v
GROUP BY run_id, arm;
