package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

func cliOutcome(stdout string, code int64, version, named string) store.Result {
	out := &claudeCLIOutput{claudeOutput: &claudeOutput{version: version}, named: named}
	for _, l := range strings.Split(stdout, "\n") {
		if l != "" {
			out.Line([]byte(l), false)
		}
	}
	row := store.Result{AgentVersion: named}
	exited(&row, out, code)
	return row
}

const realModelUsage = `"modelUsage":{` +
	`"claude-sonnet-4-5":{"inputTokens":200,"outputTokens":25,"cacheReadInputTokens":300,"cacheCreationInputTokens":40,"costUSD":0.001,"contextWindow":200000},` +
	`"claude-haiku-4-5":{"inputTokens":10,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.0001}}`

// TestClaudeCLIRecordsPerModelUsageDenialsRetriesAndVersion stops what the
// real CLI reports beyond the four usage fields from being dropped: each
// model's usage, the permission denials it still calls "success", the
// api_retry events of stream-json, and the version that actually ran.
func TestClaudeCLIRecordsPerModelUsageDenialsRetriesAndVersion(t *testing.T) {
	stdout := `{"type":"system","subtype":"init"}
{"type":"system","subtype":"api_retry","attempt":1}
{"type":"system","subtype":"api_retry","attempt":2}
` + result(`"usage":{"input_tokens":210,"output_tokens":27,"cache_read_input_tokens":300,"cache_creation_input_tokens":40},"total_cost_usd":0.0011,`+realModelUsage+
		`,"permission_denials":[{"tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"/elsewhere/x"}}]`)
	row := cliOutcome(stdout, 0, "2.1.332", "2.1.300")
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	wantMU := []store.ModelUsage{
		{Model: "claude-haiku-4-5", InputTokens: ptr(int64(10)), OutputTokens: ptr(int64(2)), CacheReadInputTokens: ptr(int64(0)), CacheCreationInputTokens: ptr(int64(0)), CostUSD: ptr(0.0001)},
		{Model: "claude-sonnet-4-5", InputTokens: ptr(int64(200)), OutputTokens: ptr(int64(25)), CacheReadInputTokens: ptr(int64(300)), CacheCreationInputTokens: ptr(int64(40)), CostUSD: ptr(0.001)},
	}
	if diff := cmp.Diff(wantMU, row.ModelUsage); diff != "" {
		t.Errorf("model usage (-want +got):\n%s", diff)
	}
	type extras struct {
		Semantics, Version       string
		Reported, Retries, Denie *int64
	}
	want := extras{wfb.SemanticsAnthropic, "2.1.332", ptr(int64(210)), ptr(int64(2)), ptr(int64(1))}
	got := extras{row.UsageSemantics, row.AgentVersion, row.ReportedInputTokens, row.APIRetries, row.PermissionDenials}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("extras (-want +got):\n%s", diff)
	}
	for _, s := range []string{"denied 1 tool call", "names agent version 2.1.300 but the binary reports 2.1.332"} {
		if !strings.Contains(row.ErrorDetail, s) {
			t.Errorf("detail %q does not say %q", row.ErrorDetail, s)
		}
	}
}

// TestClaudeCLILeavesUnobservableCountsNull stops a json-format session
// (which shows no api_retry events) from claiming zero retries, and an
// absent permission_denials from claiming zero denials.
func TestClaudeCLILeavesUnobservableCountsNull(t *testing.T) {
	row := cliOutcome(result(okUsage), 0, "", "")
	if !row.OK {
		t.Fatalf("not ok: %s", row.ErrorDetail)
	}
	if row.APIRetries != nil || row.PermissionDenials != nil || row.ModelUsage != nil {
		t.Errorf("retries %v, denials %v, model usage %v; want NULL, NULL, none", row.APIRetries, row.PermissionDenials, row.ModelUsage)
	}
	if row.AgentVersion != "" {
		t.Errorf("version %q from nowhere", row.AgentVersion)
	}
}

// TestClaudeCLIRefusesNonsenseModelUsage stops a malformed per-model entry
// from being stored, without failing a session whose totals are fine.
func TestClaudeCLIRefusesNonsenseModelUsage(t *testing.T) {
	row := cliOutcome(result(okUsage+`,"modelUsage":{"m":{"inputTokens":-1,"outputTokens":1,"cacheReadInputTokens":0}}`), 0, "", "")
	if !row.OK {
		t.Fatalf("not ok: %s", row.ErrorDetail)
	}
	if row.ModelUsage != nil {
		t.Errorf("stored %v", row.ModelUsage)
	}
	for _, s := range []string{`modelUsage["m"].inputTokens is negative`, `modelUsage["m"].cacheCreationInputTokens is missing`} {
		if !strings.Contains(row.ErrorDetail, s) {
			t.Errorf("detail %q does not name %q", row.ErrorDetail, s)
		}
	}
}

// TestClaudeCLIRefusesUsageUnderNoModelName stops a modelUsage entry keyed
// by an empty name (found by FuzzClaudeOutput) from reaching the store,
// which refuses it and would lose the whole row.
func TestClaudeCLIRefusesUsageUnderNoModelName(t *testing.T) {
	counts := `{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}`
	for _, name := range []string{"", " "} {
		row := cliOutcome(result(okUsage+`,"modelUsage":{"m":`+counts+`,"`+name+`":`+counts+`}`), 0, "", "")
		if !row.OK {
			t.Fatalf("name %q: not ok: %s", name, row.ErrorDetail)
		}
		if row.ModelUsage != nil {
			t.Errorf("name %q: stored %v", name, row.ModelUsage)
		}
		if want := `modelUsage["` + name + `"]: usage under no model name`; !strings.Contains(row.ErrorDetail, want) {
			t.Errorf("detail %q does not name %q", row.ErrorDetail, want)
		}
	}
}

// TestAnAPIErrorResultIsAProviderError stops the real CLI's API failures —
// subtype "success" with is_error true — from passing.
func TestAnAPIErrorResultIsAProviderError(t *testing.T) {
	stdout := `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"num_turns":1,"result":"API Error: Repeated 529 Overloaded errors",` + okUsage + `,"modelUsage":{},"permission_denials":[]}`
	row := cliOutcome(stdout, 1, "2.1.332", "")
	if row.OK || row.ErrorKind != wfb.KindProviderError {
		t.Fatalf("ok %v kind %q (%s), want provider-error", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.PermissionDenials == nil || *row.PermissionDenials != 0 {
		t.Errorf("denials %v, want a measured 0", row.PermissionDenials)
	}
}
