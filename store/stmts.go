package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The inserts every recorded attempt makes. A writer prepares them once,
// when it opens the file (see prepareInserts), instead of SQLite parsing
// and planning them again for every row: a 42-column INSERT's prepare
// costs more than its execution.
const (
	insertResultSQL = `INSERT INTO results (
		run_id, attempt_id, task, arm, rep, attempt, retry_of,
		agent, agent_version, model, sandbox, started_at, duration_ms,
		ok, error_kind, error_detail, process_state, exit_code,
		input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens,
		cost_usd, cost_source, num_turns, session_id, verdict, findings_count,
		usage_semantics, reported_input_tokens, reported_cached_input_tokens,
		reasoning_output_tokens, api_retries, permission_denials,
		metered_input_tokens, metered_output_tokens, metered_cache_read_input_tokens, metered_cache_creation_input_tokens,
		usage_source, usage_check, metered_cost_usd, cost_check, agent_duration_ms,
		usage_verdict, cost_verdict, tool_calls
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertEvidenceSQL   = `INSERT INTO evidence (attempt_id, result_event, stdout_tail, stderr_tail) VALUES (?, ?, ?, ?)`
	insertModelUsageSQL = `INSERT INTO model_usage
		(attempt_id, model, input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, cost_usd)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	insertToolUseSQL    = `INSERT INTO tool_uses (attempt_id, tool, calls) VALUES (?, ?, ?)`
	insertTranscriptSQL = `INSERT INTO transcripts
		(attempt_id, codec, data, raw_size, kept_size, truncated, sha256, prompt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// cachedInserts are the statements prepareInserts prepares.
var cachedInserts = []string{insertResultSQL, insertEvidenceSQL, insertModelUsageSQL, insertToolUseSQL, insertTranscriptSQL}

// prepareInserts prepares cachedInserts on the writer. It must run before
// any transaction: the writer has one connection, which a transaction
// holds until it ends.
func (d *DB) prepareInserts(ctx context.Context) error {
	d.stmts = make(map[string]*sql.Stmt, len(cachedInserts))
	for _, q := range cachedInserts {
		st, err := d.db.PrepareContext(ctx, q)
		if err != nil {
			d.closeStmts()
			return fmt.Errorf("open results %s: %w", d.path, d.classify(err))
		}
		d.stmts[q] = st
	}
	return nil
}

func (d *DB) closeStmts() {
	for _, st := range d.stmts {
		st.Close()
	}
	d.stmts = nil
}

// execTx runs query in tx, through its prepared statement when the writer
// has one.
func (d *DB) execTx(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := d.stmts[query]; st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}
