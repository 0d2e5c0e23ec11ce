package store

import "strings"

// UsageCostSQL is the cost rule (wfb.Cost) as an SQL expression over a
// results row named alias: the wire's priced figure where the row's usage
// is the wire's and the wire priced it, else the agent's cost_usd, else
// NULL. It is measured_results_v.usage_cost_usd (migration 0009) for
// queries that read results directly; store's tests hold the three — Go,
// this expression and the view — to one answer.
func UsageCostSQL(alias string) string {
	return strings.ReplaceAll(`CASE WHEN r.usage_source = 'metered' AND r.metered_cost_usd IS NOT NULL THEN r.metered_cost_usd ELSE r.cost_usd END`, "r.", alias+".")
}

// UsageCostSourceSQL is the source of UsageCostSQL's figure: 'metered',
// 'reported' or NULL (measured_results_v.usage_cost_source).
func UsageCostSourceSQL(alias string) string {
	return strings.ReplaceAll(`CASE WHEN r.usage_source = 'metered' AND r.metered_cost_usd IS NOT NULL THEN 'metered' WHEN r.cost_usd IS NOT NULL THEN 'reported' END`, "r.", alias+".")
}
