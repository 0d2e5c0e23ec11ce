package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wfbench/wfb"
	sqlite3 "modernc.org/sqlite/lib"
)

// insertModelUsage records an attempt's per-model usage rows inside tx.
func (d *DB) insertModelUsage(ctx context.Context, tx *sql.Tx, attemptID string, mu []ModelUsage) error {
	for _, m := range mu {
		if m.Model == "" {
			return fmt.Errorf("model usage: model name is empty")
		}
		for _, c := range []struct {
			col string
			v   *int64
		}{{"input_tokens", m.InputTokens}, {"output_tokens", m.OutputTokens},
			{"cache_read_input_tokens", m.CacheReadInputTokens}, {"cache_creation_input_tokens", m.CacheCreationInputTokens}} {
			if c.v != nil && *c.v > wfb.MaxCount { // a negative count is the schema's to refuse
				return fmt.Errorf("model usage %q: %w", m.Model, checkCount(c.col, c.v))
			}
		}
		_, err := d.execTx(ctx, tx, insertModelUsageSQL,
			attemptID, m.Model, nullInt(m.InputTokens), nullInt(m.OutputTokens),
			nullInt(m.CacheReadInputTokens), nullInt(m.CacheCreationInputTokens), nullFloat(m.CostUSD))
		if err != nil {
			if sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
				return fmt.Errorf("model usage: model %q is listed twice", m.Model)
			}
			return err
		}
	}
	return nil
}

// attachModelUsage fills in the per-model usage of a run's results, in one
// query, models in name order.
func (d *DB) attachModelUsage(ctx context.Context, runID string, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	at := make(map[string]int, len(results))
	for i, r := range results {
		at[r.AttemptID] = i
	}
	rows, err := d.db.QueryContext(ctx, `SELECT m.attempt_id, m.model, m.input_tokens, m.output_tokens,
			m.cache_read_input_tokens, m.cache_creation_input_tokens, m.cost_usd
		FROM model_usage m JOIN results r ON r.attempt_id = m.attempt_id
		WHERE r.run_id = ? ORDER BY m.attempt_id, m.model`, runID)
	if err != nil {
		return fmt.Errorf("model usage: %w", d.classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			attempt, model             string
			in, out, cacheRead, create sql.NullInt64
			cost                       sql.NullFloat64
		)
		if err := rows.Scan(&attempt, &model, &in, &out, &cacheRead, &create, &cost); err != nil {
			return fmt.Errorf("model usage: %w", err)
		}
		i, ok := at[attempt]
		if !ok {
			continue
		}
		m := ModelUsage{
			Model: model, InputTokens: intPtr(in), OutputTokens: intPtr(out),
			CacheReadInputTokens: intPtr(cacheRead), CacheCreationInputTokens: intPtr(create),
		}
		if cost.Valid {
			c := cost.Float64
			m.CostUSD = &c
		}
		results[i].ModelUsage = append(results[i].ModelUsage, m)
	}
	return rows.Err()
}
