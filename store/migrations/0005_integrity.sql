-- 0005_integrity: rules the first schema left to the Go code, now held by
-- the file itself, for every writer (a merge of a tampered file, raw SQL).
-- It touches only tables of 0001-0003.
--
-- One row per attempt of a cell: two processes that both believed they held
-- a run (its lock reached through two paths to one file) wrote attempt 1 of
-- one cell twice, under two attempt ids. A file that already holds such a
-- pair cannot take this index: its upgrade is refused, and the file is left
-- at its old version.
CREATE UNIQUE INDEX results_cell_attempt ON results (run_id, task, arm, rep, attempt);

-- Counts, durations and costs are never negative, and a cost is finite
-- (9e999 is +Inf to SQLite; NaN is stored as NULL). The 0003 columns and
-- model_usage have CHECK constraints for this; the 0001 columns get it
-- here. A CHECK cannot be added to an existing table without rebuilding it
-- (and every view and trigger that names it), so BEFORE INSERT triggers
-- refuse the row instead, naming the column. Rows are append-only (the
-- *_no_update triggers), so an insert is the only way in.
CREATE TRIGGER results_duration_ms_check BEFORE INSERT ON results WHEN NEW.duration_ms < 0
BEGIN SELECT RAISE(ABORT, 'results.duration_ms must not be negative'); END;
CREATE TRIGGER results_input_tokens_check BEFORE INSERT ON results WHEN NEW.input_tokens < 0
BEGIN SELECT RAISE(ABORT, 'results.input_tokens must not be negative'); END;
CREATE TRIGGER results_output_tokens_check BEFORE INSERT ON results WHEN NEW.output_tokens < 0
BEGIN SELECT RAISE(ABORT, 'results.output_tokens must not be negative'); END;
CREATE TRIGGER results_cache_read_input_tokens_check BEFORE INSERT ON results WHEN NEW.cache_read_input_tokens < 0
BEGIN SELECT RAISE(ABORT, 'results.cache_read_input_tokens must not be negative'); END;
CREATE TRIGGER results_cache_creation_input_tokens_check BEFORE INSERT ON results WHEN NEW.cache_creation_input_tokens < 0
BEGIN SELECT RAISE(ABORT, 'results.cache_creation_input_tokens must not be negative'); END;
CREATE TRIGGER results_num_turns_check BEFORE INSERT ON results WHEN NEW.num_turns < 0
BEGIN SELECT RAISE(ABORT, 'results.num_turns must not be negative'); END;
CREATE TRIGGER results_findings_count_check BEFORE INSERT ON results WHEN NEW.findings_count < 0
BEGIN SELECT RAISE(ABORT, 'results.findings_count must not be negative'); END;
CREATE TRIGGER results_cost_usd_check BEFORE INSERT ON results
WHEN NEW.cost_usd < 0 OR NEW.cost_usd > 1.7976931348623157e308
BEGIN SELECT RAISE(ABORT, 'results.cost_usd must be a finite number, not negative'); END;
CREATE TRIGGER model_usage_cost_usd_check BEFORE INSERT ON model_usage
WHEN NEW.cost_usd > 1.7976931348623157e308
BEGIN SELECT RAISE(ABORT, 'model_usage.cost_usd must be a finite number'); END;
