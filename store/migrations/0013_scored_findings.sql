-- 0012_scored_findings: a score keeps what it scored, so that a reader
-- (the viewer) marks each finding TP or FP and each label TP or FN from
-- the score alone, never parsing the artifact or scoring again.
--
-- findings: JSON [{"id", "severity", "path", "line", "end_line",
-- "category", "evidence", "recommendation", "blocking"}], the review's
-- findings as scored, redacted like the artifact. labels: JSON [{"id",
-- "severity", "path", "line_start", "line_end", "category"}], the labels
-- the review was scored against (labels_digest is their digest). Which
-- finding matched which label is in matches. NULL: not kept — a score
-- recorded before this migration; nothing older is rewritten.
ALTER TABLE scores ADD COLUMN findings TEXT;
ALTER TABLE scores ADD COLUMN labels TEXT;
