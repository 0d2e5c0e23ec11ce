// Package store keeps wfb's results in one SQLite file.
//
// The file is the product: every attempt of every cell becomes a row of
// results, whatever happened to it. NULL means "not measured" and 0 means
// "measured zero"; no code path in this package turns one into the other.
// Rows are append-only. Secrets never reach the file: evidence is redacted
// before it is written.
//
// The stable interface for ad hoc SQL is the set of tables and views
// documented in the README (runs, results, and the *_v views).
package store
