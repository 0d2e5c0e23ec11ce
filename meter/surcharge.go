package meter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Surcharges name what a response says was billed beyond its four token
// counts at the model's standard rates: Anthropic's 1-hour cache writes
// (usage.cache_creation.ephemeral_1h_input_tokens, billed above the
// 5-minute rate), server tool calls (usage.server_tool_use: web searches
// and fetches, billed per call), a service tier other than standard; the
// Responses API's service_tier other than default. A price table of the
// four token rates cannot price such a request, so it must not try.

// anthropicSurcharges reads them from a Messages usage object.
func anthropicSurcharges(usage map[string]json.RawMessage) []string {
	var out []string
	var cache map[string]json.RawMessage
	if json.Unmarshal(usage["cache_creation"], &cache) == nil {
		if n := positive(cache["ephemeral_1h_input_tokens"]); n != "" {
			out = append(out, "usage.cache_creation.ephemeral_1h_input_tokens "+n+" (1-hour cache writes)")
		}
	}
	var tools map[string]json.RawMessage
	if json.Unmarshal(usage["server_tool_use"], &tools) == nil {
		names := make([]string, 0, len(tools))
		for k := range tools {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if n := positive(tools[k]); n != "" {
				out = append(out, "usage.server_tool_use."+k+" "+n)
			}
		}
	}
	if tier := tierOf(usage["service_tier"]); tier != "" && tier != "standard" {
		out = append(out, fmt.Sprintf("usage.service_tier %q", tier))
	}
	return out
}

// openAISurcharges reads them from a response object's service_tier.
func openAISurcharges(serviceTier json.RawMessage) []string {
	if tier := tierOf(serviceTier); tier != "" && tier != "default" {
		return []string{fmt.Sprintf("service_tier %q", tier)}
	}
	return nil
}

// positive returns the wire's text of a count above zero, or "" for zero,
// absent, null or anything that is no number (nothing to charge).
func positive(raw json.RawMessage) string {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f <= 0 {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

func tierOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
