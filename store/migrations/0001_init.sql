-- 0001_init: runs, results (one row per attempt), evidence, and the public views.
--
-- Column names of runs, results and the *_v views are the stable SQL interface
-- documented in the README. NULL means "not measured"; 0 means "measured zero".
-- Times are RFC 3339 UTC text with milliseconds: 2006-01-02T15:04:05.000Z.

PRAGMA application_id = 2003199537; -- 0x77666231, "wfb1": marks a wfb results file

CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY,
    label       TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('run', 'session')),
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'aborted', 'interrupted')),
    fingerprint TEXT,
    harness     TEXT NOT NULL,
    config      TEXT
) STRICT;

CREATE INDEX runs_started_at ON runs (started_at);

CREATE TABLE results (
    run_id                      TEXT NOT NULL REFERENCES runs (run_id),
    attempt_id                  TEXT PRIMARY KEY,
    task                        TEXT NOT NULL,
    arm                         TEXT NOT NULL,
    rep                         INTEGER NOT NULL CHECK (rep >= 0),
    attempt                     INTEGER NOT NULL CHECK (attempt >= 1),
    retry_of                    TEXT, -- no FK: a retry row must never be lost to a missing original
    agent                       TEXT,
    agent_version               TEXT,
    model                       TEXT,
    sandbox                     TEXT,
    started_at                  TEXT NOT NULL,
    duration_ms                 INTEGER,
    ok                          INTEGER NOT NULL CHECK (ok IN (0, 1)),
    error_kind                  TEXT,
    error_detail                TEXT,
    process_state               TEXT,
    exit_code                   INTEGER,
    input_tokens                INTEGER,
    output_tokens               INTEGER,
    cache_read_input_tokens     INTEGER,
    cache_creation_input_tokens INTEGER,
    cost_usd                    REAL,
    cost_source                 TEXT,
    num_turns                   INTEGER,
    session_id                  TEXT,
    verdict                     TEXT,
    findings_count              INTEGER,
    -- An ok attempt has no error kind, and a failed one always says why.
    CHECK ((ok = 1 AND error_kind IS NULL) OR (ok = 0 AND error_kind IS NOT NULL))
) STRICT;

CREATE INDEX results_run ON results (run_id);
CREATE INDEX results_run_arm ON results (run_id, arm);

-- Bulky raw evidence lives apart so that scans of results stay fast.
CREATE TABLE evidence (
    attempt_id   TEXT PRIMARY KEY REFERENCES results (attempt_id),
    result_event TEXT,
    stdout_tail  TEXT,
    stderr_tail  TEXT
) STRICT;

-- Rows are append-only: a retry is a new attempt, never an overwrite.
CREATE TRIGGER results_no_update BEFORE UPDATE ON results
BEGIN SELECT RAISE(ABORT, 'results are append-only'); END;
CREATE TRIGGER results_no_delete BEFORE DELETE ON results
BEGIN SELECT RAISE(ABORT, 'results are append-only'); END;
CREATE TRIGGER evidence_no_update BEFORE UPDATE ON evidence
BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;
CREATE TRIGGER evidence_no_delete BEFORE DELETE ON evidence
BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;

CREATE VIEW results_v AS
SELECT r.run_id, u.label, r.attempt_id, r.task, r.arm, r.rep, r.attempt, r.retry_of,
       r.agent, r.agent_version, r.model, r.sandbox, r.started_at, r.duration_ms,
       r.ok, r.error_kind, r.error_detail, r.process_state, r.exit_code,
       r.input_tokens, r.output_tokens, r.cache_read_input_tokens,
       r.cache_creation_input_tokens, r.cost_usd, r.cost_source, r.num_turns,
       r.session_id, r.verdict, r.findings_count
FROM results r JOIN runs u ON u.run_id = r.run_id;

-- Each SUM/AVG runs over measured (non-NULL) values only, and the *_n column
-- next to it says how many there were: an arm with no measured cost has
-- cost_usd_n = 0 and NULL sum/avg, never a fabricated 0.
CREATE VIEW arm_summary_v AS
SELECT run_id, arm,
       COUNT(*)                           AS attempted,
       SUM(ok)                            AS ok,
       COUNT(*) - SUM(ok)                 AS failed,
       COUNT(input_tokens)                AS input_tokens_n,
       SUM(input_tokens)                  AS input_tokens_sum,
       AVG(input_tokens)                  AS input_tokens_avg,
       COUNT(output_tokens)               AS output_tokens_n,
       SUM(output_tokens)                 AS output_tokens_sum,
       AVG(output_tokens)                 AS output_tokens_avg,
       COUNT(cache_read_input_tokens)     AS cache_read_input_tokens_n,
       SUM(cache_read_input_tokens)       AS cache_read_input_tokens_sum,
       AVG(cache_read_input_tokens)       AS cache_read_input_tokens_avg,
       COUNT(cache_creation_input_tokens) AS cache_creation_input_tokens_n,
       SUM(cache_creation_input_tokens)   AS cache_creation_input_tokens_sum,
       AVG(cache_creation_input_tokens)   AS cache_creation_input_tokens_avg,
       COUNT(cost_usd)                    AS cost_usd_n,
       SUM(cost_usd)                      AS cost_usd_sum,
       AVG(cost_usd)                      AS cost_usd_avg,
       COUNT(duration_ms)                 AS duration_ms_n,
       SUM(duration_ms)                   AS duration_ms_sum,
       AVG(duration_ms)                   AS duration_ms_avg
FROM results
GROUP BY run_id, arm;
