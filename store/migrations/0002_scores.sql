-- 0002_scores: stored review artifacts (re-scorable after the sandbox is gone)
-- and review scores, several per attempt (a rescore adds one, never updates).
--
-- NULL means "not measured": precision is NULL when the review had no
-- findings, recall when the task had no labels, weighted_f1 when it had
-- neither, verdict_correct when no verdict was read. tp, fp and fn are
-- always counted.

CREATE TABLE artifacts (
    attempt_id TEXT PRIMARY KEY REFERENCES results (attempt_id),
    name       TEXT NOT NULL,
    content    BLOB NOT NULL, -- redacted, at most the first 1 MiB
    sha256     TEXT NOT NULL, -- of the artifact as the session wrote it
    bytes      INTEGER NOT NULL CHECK (bytes >= 0) -- its size as written
) STRICT;

CREATE TABLE scores (
    score_id        TEXT PRIMARY KEY,
    attempt_id      TEXT NOT NULL REFERENCES results (attempt_id),
    scored_at       TEXT NOT NULL,
    labels_digest   TEXT NOT NULL,
    tp              INTEGER NOT NULL CHECK (tp >= 0),
    fp              INTEGER NOT NULL CHECK (fp >= 0),
    fn              INTEGER NOT NULL CHECK (fn >= 0),
    precision       REAL CHECK (precision BETWEEN 0 AND 1),
    recall          REAL CHECK (recall BETWEEN 0 AND 1),
    weighted_f1     REAL CHECK (weighted_f1 BETWEEN 0 AND 1),
    verdict_correct INTEGER CHECK (verdict_correct IN (0, 1)),
    matches         TEXT -- JSON [{"label_id", "finding_id"}], the pairs counted as tp
) STRICT;

CREATE INDEX scores_attempt ON scores (attempt_id, scored_at);

CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts
BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
CREATE TRIGGER scores_no_update BEFORE UPDATE ON scores
BEGIN SELECT RAISE(ABORT, 'scores are append-only'); END;
CREATE TRIGGER scores_no_delete BEFORE DELETE ON scores
BEGIN SELECT RAISE(ABORT, 'scores are append-only'); END;

-- The newest score of each attempt: latest scored_at, then the greatest
-- score_id, so two scorings in one millisecond still give one row.
CREATE VIEW latest_scores_v AS
SELECT score_id, attempt_id, scored_at, labels_digest, tp, fp, fn,
       precision, recall, weighted_f1, verdict_correct, matches
FROM (
    SELECT s.*, row_number() OVER (PARTITION BY attempt_id ORDER BY scored_at DESC, score_id DESC) AS rn
    FROM scores s
)
WHERE rn = 1;

-- Every attempt with its latest score; the score columns are NULL for an
-- attempt never scored (no labels, no valid artifact).
CREATE VIEW scored_results_v AS
SELECT r.*, s.score_id, s.scored_at, s.labels_digest, s.tp, s.fp, s.fn,
       s.precision, s.recall, s.weighted_f1, s.verdict_correct
FROM results_v r LEFT JOIN latest_scores_v s ON s.attempt_id = r.attempt_id;
