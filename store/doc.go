// Package store keeps wfb's results in one SQLite file.
//
// The file is the product: every attempt of every cell becomes a row of
// results, whatever happened to it. NULL means "not measured" and 0 means
// "measured zero"; no code path in this package turns one into the other.
// Rows are append-only (triggers refuse UPDATE and DELETE on results and
// evidence). Secrets never reach the file: free text is passed through
// Redact, and evidence is bounded, before it is written.
//
// Open is the one writer: pragmas (busy_timeout first, foreign keys,
// synchronous=NORMAL) are in the DSN so every pooled connection has them,
// the pool holds one connection, which reads the file's schema version
// before it switches the file to WAL (recorded in the file, so every later
// connection has it too), and embedded migrations (migrations/*.sql)
// are each recorded in schema_migrations, all pending ones applied in one
// transaction, so a reader sees a schema whole or not at all. A file
// written by a newer schema is refused with ErrSchemaTooNew and not touched.
// Open creates a missing file, building its schema under a temporary name
// and linking it into place; OpenExisting is the same writer for a file
// that must already be there, and refuses a missing one with ErrNoSuchFile.
// OpenReadOnly is for queries: the engine refuses writes (mode=ro,
// query_only, and an authorizer that denies ATTACH, switching query_only
// off and journal or locking mode switches), it too refuses a missing file
// with ErrNoSuchFile, and it reads a file in a read-only place with
// SQLite's immutable open (DB.Immutable). A damaged file is ErrCorrupt.
//
// The schema holds the rules the writers follow: one row per attempt of a
// cell, no negative count or cost (migration 0005). MergeFiles copies other
// results files in one transaction, redacting every text value and
// refusing a row that breaks a rule (*InvalidRowError) or conflicts with
// the destination (*ConflictError).
//
// A finished run's figures (its run_summary_v row, its cells and its tool
// calls per task and arm) are counted once and kept in run_stats and the
// run_*_stats tables beside it (migration 0015): FinishRun counts them in
// the transaction that ends the run, ReopenRun drops them in its own,
// MergeFiles counts every run it touched in its transaction.
// FreshRunStatsSQL selects the kept figures that still describe their run;
// readers compute the others from the views and queries (RunStatsSQL,
// CellStatsSQL, ToolStatsSQL, ToolUseStatsSQL).
//
// Query returns a query's rows boxed ([]any), for ad hoc SQL and small
// lookups; Each streams them to a callback that scans typed values, for
// readers of many rows (a report over a million attempts).
//
// The stable interface for ad hoc SQL is the set of tables and views
// documented in docs/sql.md: runs, results, and the views results_v and
// arm_summary_v. Times are text, "2006-01-02T15:04:05.000Z" (UTC).
package store
