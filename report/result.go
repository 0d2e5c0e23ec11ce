package report

import (
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// ResultTable builds the table of one result row as `wfb session` prints
// it for people (table, tsv, markdown): field/value pairs, one per line, in
// the order people read them. Programs (csv, json) get AttemptRecord, the
// attempt as wfb export writes it. A value that was not measured is NULL,
// never zero.
func ResultTable(r store.Result) *Table {
	t := &Table{Columns: []string{"field", "value"}}
	for _, kv := range resultFields(r) {
		t.Rows = append(t.Rows, []any{kv.name, kv.value})
	}
	return t
}

// resultField is one named value of a result row.
type resultField struct {
	name  string
	value any
}

// resultFields lists the fields of r that a session's outcome is read
// from, in the order people read them: who ran, what happened, what it
// used, what it said. usage_cost_usd is its cost by the one rule
// (wfb.Cost), the figure every report shows; cost_usd is the agent's own.
func resultFields(r store.Result) []resultField {
	ok := int64(0)
	if r.OK {
		ok = 1
	}
	cost, source := wfb.Cost(r.UsageSource, r.MeteredCostUSD, r.CostUSD)
	return []resultField{
		{"run_id", r.RunID}, {"attempt_id", r.AttemptID}, {"task", r.Task}, {"arm", r.Arm},
		{"agent", r.Agent}, {"model", nullIfEmpty(r.Model)}, {"sandbox", r.Sandbox},
		{"ok", ok}, {"error_kind", nullIfEmpty(r.ErrorKind)}, {"error_detail", nullIfEmpty(r.ErrorDetail)},
		{"process_state", r.ProcessState}, {"exit_code", nullable(r.ExitCode)}, {"duration_ms", nullable(r.DurationMS)},
		{"input_tokens", nullable(r.InputTokens)}, {"output_tokens", nullable(r.OutputTokens)},
		{"cache_read_input_tokens", nullable(r.CacheReadInputTokens)},
		{"cache_creation_input_tokens", nullable(r.CacheCreationInputTokens)},
		{"usage_cost_usd", nullable(cost)}, {"usage_cost_source", nullIfEmpty(string(source))},
		{"cost_usd", nullable(r.CostUSD)}, {"cost_source", nullIfEmpty(r.CostSource)},
		{"metered_cost_usd", nullable(r.MeteredCostUSD)}, {"cost_verdict", nullIfEmpty(string(r.CostVerdict))},
		{"usage_source", nullIfEmpty(r.UsageSource)}, {"usage_verdict", nullIfEmpty(string(r.UsageVerdict))},
		{"num_turns", nullable(r.NumTurns)},
		{"tool_calls", nullable(r.ToolCalls)}, {"tool_uses", attemptTools(r)},
		{"session_id", nullIfEmpty(r.SessionID)}, {"verdict", nullIfEmpty(r.Verdict)}, {"findings_count", nullable(r.FindingsCount)},
	}
}

// nullable is a cell for a measurement that may be missing: NULL (nil)
// rather than a zero.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// attemptTools is an attempt's calls by tool as a cell: NULL when its tool
// calls were not measured, an empty list ("none") when it called none.
func attemptTools(r store.Result) any {
	if r.ToolCalls == nil {
		return nil
	}
	it := Items{Keys: []string{"tool", "calls"}, Text: "none"}
	var parts []string
	for _, u := range r.ToolUses {
		it.Rows = append(it.Rows, []any{u.Tool, u.Calls})
		parts = append(parts, fmt.Sprintf("%s ×%d", u.Tool, u.Calls))
	}
	if len(parts) > 0 {
		it.Text = strings.Join(parts, ", ")
	}
	return it
}
