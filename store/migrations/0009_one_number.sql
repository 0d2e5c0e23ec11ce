-- 0009_one_number: one definition of each figure the reports show, held by
-- the file itself so that ad hoc SQL gets the same answers as wfb's
-- commands (the rules are the vocabulary's: package wfb, cell.go and
-- cost.go; store's tests hold the two spellings to the same answers).
--
-- usage_verdict, cost_verdict: the typed outcome of the usage and cost
-- checks, beside their text (usage_check, cost_check name the figures in
-- question). NULL: not checked; 'agree'; 'disagree' (both measured, they
-- differ: the reports use the wire's); 'refused' (usage only: the wire
-- lacked a figure or carried nonsense). Query the verdict, never the text.
ALTER TABLE results ADD COLUMN usage_verdict TEXT;
ALTER TABLE results ADD COLUMN cost_verdict TEXT;

-- Rows written before this migration get their verdict from their text.
-- Rows are append-only, so the update runs with the guard lifted inside
-- this migration's transaction and the guard is put back before it ends.
DROP TRIGGER results_no_update;
UPDATE results SET
    usage_verdict = CASE WHEN usage_check = 'agree' THEN 'agree'
                         WHEN usage_check LIKE 'disagree%' THEN 'disagree'
                         WHEN usage_check LIKE 'refused%' THEN 'refused' END,
    cost_verdict  = CASE WHEN cost_check = 'agree' THEN 'agree'
                         WHEN cost_check LIKE 'disagree%' THEN 'disagree' END
WHERE usage_check IS NOT NULL OR cost_check IS NOT NULL;
CREATE TRIGGER results_no_update BEFORE UPDATE ON results
BEGIN SELECT RAISE(ABORT, 'results are append-only'); END;

-- A verdict is one of its words, and is set exactly when its text is.
-- (Triggers rather than CHECKs, as in 0005: a CHECK cannot be changed
-- without rebuilding the table, and the vocabulary may grow.)
CREATE TRIGGER results_usage_verdict_check BEFORE INSERT ON results
WHEN (NEW.usage_verdict IS NOT NULL AND NEW.usage_verdict NOT IN ('agree', 'disagree', 'refused'))
  OR ((NEW.usage_verdict IS NULL) <> (NEW.usage_check IS NULL))
BEGIN SELECT RAISE(ABORT, 'results.usage_verdict must be agree, disagree or refused, and set exactly when usage_check is'); END;
CREATE TRIGGER results_cost_verdict_check BEFORE INSERT ON results
WHEN (NEW.cost_verdict IS NOT NULL AND NEW.cost_verdict NOT IN ('agree', 'disagree'))
  OR ((NEW.cost_verdict IS NULL) <> (NEW.cost_check IS NULL))
BEGIN SELECT RAISE(ABORT, 'results.cost_verdict must be agree or disagree, and set exactly when cost_check is'); END;

-- results_v gains the verdicts at its end (scored_results_v, r.*, too).
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
       r.metered_cost_usd, r.cost_check, r.usage_verdict, r.cost_verdict
FROM results r JOIN runs u ON u.run_id = r.run_id;

-- measured_results_v: each attempt's usage and cost as every report uses
-- them. The cost rule (wfb.Cost): the wire's priced figure where the
-- attempt's usage is the wire's and the wire priced it (usage_cost_source
-- 'metered'), else the agent's own cost_usd ('reported'), else NULL — not
-- measured, never 0. cost_usd stays the agent's figure: surfaces show it as
-- "agent-reported" where it differs.
DROP VIEW arm_summary_v;
DROP VIEW measured_results_v;
CREATE VIEW measured_results_v AS
SELECT r.*,
       CASE WHEN usage_source = 'metered' THEN metered_input_tokens ELSE input_tokens END AS usage_input_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_output_tokens ELSE output_tokens END AS usage_output_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_cache_read_input_tokens ELSE cache_read_input_tokens END AS usage_cache_read_input_tokens,
       CASE WHEN usage_source = 'metered' THEN metered_cache_creation_input_tokens ELSE cache_creation_input_tokens END AS usage_cache_creation_input_tokens,
       CASE WHEN usage_source = 'metered' AND metered_cost_usd IS NOT NULL THEN metered_cost_usd ELSE cost_usd END AS usage_cost_usd,
       CASE WHEN usage_source = 'metered' AND metered_cost_usd IS NOT NULL THEN 'metered'
            WHEN cost_usd IS NOT NULL THEN 'reported' END AS usage_cost_source
FROM results r;

-- cells_v: one row per cell (run, task, arm, rep), by the cell rule
-- (wfb.Cell): its final attempt is the highest-numbered one, and its
-- outcome that attempt's — 'ok'; 'errored' when it ended with an error that
-- kept the workflow from being measured (infra-error, sandbox-refused,
-- spawn-failure, cancelled, provider-error, oracle-failed); else 'failed'
-- (a kind wfb does not know is a failure). attempts counts every attempt of
-- the cell, retries included; its cost is the sum over all of them (what
-- the cell cost), cost_usd_n how many were measured (fewer than attempts:
-- the sum is a lower bound). The bare columns take the values of the row
-- with MAX(attempt) (SQLite's rule for one min/max aggregate).
CREATE VIEW cells_v AS
SELECT run_id, task, arm, rep,
       COUNT(*)                AS attempts,
       MAX(attempt)            AS final_attempt,
       attempt_id              AS final_attempt_id,
       ok, error_kind,
       CASE WHEN ok = 1 THEN 'ok'
            WHEN error_kind IN ('infra-error', 'sandbox-refused', 'spawn-failure',
                                'cancelled', 'provider-error', 'oracle-failed') THEN 'errored'
            ELSE 'failed' END  AS outcome,
       COUNT(usage_cost_usd)   AS cost_usd_n,
       SUM(usage_cost_usd)     AS cost_usd_sum
FROM measured_results_v
GROUP BY run_id, task, arm, rep;

-- arm_summary_v: per run and arm, cells by outcome (cells, ok, failed,
-- errored: by the cell rule, as wfb report counts them) and, under its own
-- name, every attempt. Each SUM/AVG runs over measured (non-NULL) attempts
-- only, and the *_n column beside it says how many there were (fewer than
-- attempts: the sum is a lower bound; 0: the sum is NULL, never 0). Tokens
-- and cost are the reports' (measured_results_v); cost_usd_metered_n counts
-- the attempts whose cost is the wire's, and agent_cost_usd_* is what the
-- agents themselves reported. Before 0009 this view counted attempts in
-- ok/failed and named them attempted, and summed the agents' cost.
CREATE VIEW arm_summary_v AS
WITH c AS (
    SELECT run_id, arm, COUNT(*) AS cells,
           SUM(outcome = 'ok') AS ok, SUM(outcome = 'failed') AS failed, SUM(outcome = 'errored') AS errored
    FROM cells_v GROUP BY run_id, arm
), a AS (
    SELECT run_id, arm,
           COUNT(*)                                 AS attempts,
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
           COUNT(usage_cost_usd)                    AS cost_usd_n,
           SUM(usage_cost_usd)                      AS cost_usd_sum,
           AVG(usage_cost_usd)                      AS cost_usd_avg,
           COUNT(*) FILTER (WHERE usage_cost_source = 'metered') AS cost_usd_metered_n,
           COUNT(cost_usd)                          AS agent_cost_usd_n,
           SUM(cost_usd)                            AS agent_cost_usd_sum,
           COUNT(duration_ms)                       AS duration_ms_n,
           SUM(duration_ms)                         AS duration_ms_sum,
           AVG(duration_ms)                         AS duration_ms_avg,
           COUNT(*) FILTER (WHERE usage_source = 'metered')      AS usage_metered,
           COUNT(*) FILTER (WHERE usage_verdict = 'disagree')    AS usage_disagreements,
           COUNT(*) FILTER (WHERE usage_verdict = 'refused')     AS usage_refusals,
           COUNT(*) FILTER (WHERE cost_verdict = 'disagree')     AS cost_disagreements
    FROM measured_results_v GROUP BY run_id, arm
)
SELECT c.run_id, c.arm, c.cells, c.ok, c.failed, c.errored, a.attempts,
       a.input_tokens_n, a.input_tokens_sum, a.input_tokens_avg,
       a.output_tokens_n, a.output_tokens_sum, a.output_tokens_avg,
       a.cache_read_input_tokens_n, a.cache_read_input_tokens_sum, a.cache_read_input_tokens_avg,
       a.cache_creation_input_tokens_n, a.cache_creation_input_tokens_sum, a.cache_creation_input_tokens_avg,
       a.cost_usd_n, a.cost_usd_sum, a.cost_usd_avg, a.cost_usd_metered_n,
       a.agent_cost_usd_n, a.agent_cost_usd_sum,
       a.duration_ms_n, a.duration_ms_sum, a.duration_ms_avg,
       a.usage_metered, a.usage_disagreements, a.usage_refusals, a.cost_disagreements
FROM c JOIN a ON a.run_id = c.run_id AND a.arm = c.arm;

-- run_summary_v: one row per run, every run (a run with no attempt has
-- zero cells and NULL sums): cells by outcome, attempts, and the run's
-- cost by the one rule — what wfb runs, the viewer's runs page and a run's
-- closing line show.
CREATE VIEW run_summary_v AS
SELECT u.run_id, u.label, u.kind, u.started_at, u.finished_at, u.status,
       COALESCE(c.cells, 0) AS cells, COALESCE(c.ok, 0) AS ok,
       COALESCE(c.failed, 0) AS failed, COALESCE(c.errored, 0) AS errored,
       COALESCE(a.attempts, 0) AS attempts,
       COALESCE(a.cost_usd_n, 0) AS cost_usd_n, a.cost_usd_sum,
       COALESCE(a.cost_usd_metered_n, 0) AS cost_usd_metered_n,
       COALESCE(a.agent_cost_usd_n, 0) AS agent_cost_usd_n, a.agent_cost_usd_sum
FROM runs u
LEFT JOIN (
    SELECT run_id, COUNT(*) AS cells,
           SUM(outcome = 'ok') AS ok, SUM(outcome = 'failed') AS failed, SUM(outcome = 'errored') AS errored
    FROM cells_v GROUP BY run_id
) c ON c.run_id = u.run_id
LEFT JOIN (
    SELECT run_id, COUNT(*) AS attempts,
           COUNT(usage_cost_usd) AS cost_usd_n, SUM(usage_cost_usd) AS cost_usd_sum,
           COUNT(*) FILTER (WHERE usage_cost_source = 'metered') AS cost_usd_metered_n,
           COUNT(cost_usd) AS agent_cost_usd_n, SUM(cost_usd) AS agent_cost_usd_sum
    FROM measured_results_v GROUP BY run_id
) a ON a.run_id = u.run_id;
