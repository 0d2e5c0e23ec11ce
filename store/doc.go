// Package store keeps wfb's results in one SQLite file.
//
// The file is the product: every attempt of every cell becomes a row of
// results, whatever happened to it. NULL means "not measured" and 0 means
// "measured zero"; no code path in this package turns one into the other.
// Rows are append-only (triggers refuse UPDATE and DELETE on results and
// evidence). Secrets never reach the file: free text is passed through
// Redact, and evidence is bounded, before it is written.
//
// Open is the one writer: pragmas (busy_timeout first, WAL, foreign keys,
// synchronous=NORMAL) are in the DSN so every pooled connection has them,
// the pool holds one connection, and embedded migrations (migrations/*.sql)
// run each in its own transaction, recorded in schema_migrations. A file
// written by a newer schema is refused with ErrSchemaTooNew and not touched.
// Open creates a missing file; OpenExisting is the same writer for a file
// that must already be there, and refuses a missing one with ErrNoSuchFile.
// OpenReadOnly is for queries: the engine refuses writes (mode=ro,
// query_only, and an authorizer that denies ATTACH and switching query_only
// off), and it too refuses a missing file with ErrNoSuchFile.
//
// Query returns a query's rows boxed ([]any), for ad hoc SQL and small
// lookups; Each streams them to a callback that scans typed values, for
// readers of many rows (a report over a million attempts).
//
// The stable interface for ad hoc SQL is the set of tables and views
// documented in the README: runs, results, and the views results_v and
// arm_summary_v. Times are text, "2006-01-02T15:04:05.000Z" (UTC).
package store
