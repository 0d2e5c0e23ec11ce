package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

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

// insertToolUses records an attempt's per-tool calls inside tx. Tool
// names are the agent's text and never cost the attempt its row: a name too
// long is clipped to MaxToolNameBytes (its marker included), an empty one
// named, and names that become one are counted as one. The calls must add
// up to tool_calls — the runner's own arithmetic, not the agent's.
func (d *DB) insertToolUses(ctx context.Context, tx *sql.Tx, r *Result) error {
	if len(r.ToolUses) == 0 {
		return nil
	}
	if r.ToolCalls == nil {
		return fmt.Errorf("tool uses: %d tools listed but tool_calls is not measured", len(r.ToolUses))
	}
	r.ToolUses = normalToolUses(r.ToolUses)
	var sum int64
	for _, u := range r.ToolUses {
		if u.Calls < 1 || u.Calls > wfb.MaxCount {
			return fmt.Errorf("tool uses: %q: calls %d is not a count of at least 1", u.Tool, u.Calls)
		}
		sum += u.Calls
		if _, err := d.execTx(ctx, tx, insertToolUseSQL, r.AttemptID, u.Tool, u.Calls); err != nil {
			return err
		}
	}
	if sum != *r.ToolCalls {
		return fmt.Errorf("tool uses: the calls by tool add up to %d, tool_calls says %d", sum, *r.ToolCalls)
	}
	return nil
}

// ClipToolName bounds a tool name to MaxToolNameBytes, a cut marked, and
// names an empty one.
func ClipToolName(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	if len(name) <= MaxToolNameBytes {
		return name
	}
	return wfb.Clip(name, MaxToolNameBytes-len("..."))
}

// normalToolUses clips each name and adds up the calls of names that are
// then one, in name order.
func normalToolUses(uses []ToolUse) []ToolUse {
	calls := map[string]int64{}
	for _, u := range uses {
		calls[ClipToolName(u.Tool)] += u.Calls
	}
	out := make([]ToolUse, 0, len(calls))
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		out = append(out, ToolUse{Tool: name, Calls: calls[name]})
	}
	return out
}

// attachToolUses fills in the per-tool calls of a run's results, in one
// query, tools in name order.
func (d *DB) attachToolUses(ctx context.Context, runID string, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	at := make(map[string]int, len(results))
	for i, r := range results {
		at[r.AttemptID] = i
	}
	rows, err := d.db.QueryContext(ctx, `SELECT t.attempt_id, t.tool, t.calls
		FROM tool_uses t JOIN results r ON r.attempt_id = t.attempt_id
		WHERE r.run_id = ? ORDER BY t.attempt_id, t.tool`, runID)
	if err != nil {
		return fmt.Errorf("tool uses: %w", d.classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var attempt string
		var u ToolUse
		if err := rows.Scan(&attempt, &u.Tool, &u.Calls); err != nil {
			return fmt.Errorf("tool uses: %w", err)
		}
		if i, ok := at[attempt]; ok {
			results[i].ToolUses = append(results[i].ToolUses, u)
		}
	}
	return rows.Err()
}
