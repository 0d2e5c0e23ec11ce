package agent

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

func ptr[T any](v T) *T { return &v }

// testMaxLine is the line limit the runner reads an agent's stdout with
// (proc.MaxLineBytes).
const testMaxLine = 16 << 20

// exited interprets what out read as the runner does for a process that
// exited on its own with code: its tool calls counted, the row ok, then
// the strict reading.
func exited(row *store.Result, out Output, code int64) {
	out.Tools().Record(row)
	row.OK = true
	out.Interpret(row, Process{ExitCode: &code, Exit: "exit code " + strconv.FormatInt(code, 10), MaxLine: testMaxLine})
}

// outcome runs interpret on stdout as if a process had printed it and
// exited with code.
func outcome(stdout string, code int64) store.Result {
	out := &claudeOutput{}
	for _, l := range strings.Split(stdout, "\n") {
		if l != "" {
			out.Line([]byte(l), false)
		}
	}
	row := store.Result{}
	exited(&row, out, code)
	return row
}

const okUsage = `"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}`

func result(fields string) string {
	return `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"session_id":"s1","result":"done",` + fields + `}`
}

// Every way a result can be unusable is refused: ok=false, session-error,
// the reason named, tokens NULL — never a zero-filled measurement.
func TestStrictParseRefusesWhatIsNotAMeasurement(t *testing.T) {
	cases := []struct {
		name, stdout string
		code         int64
		kind, reason string
	}{
		{"no output", "", 0, wfb.KindSessionError, "no result event"},
		{"not json", "hello there\n", 0, wfb.KindSessionError, "not JSON"},
		{"two results", result(okUsage) + "\n" + result(okUsage), 0, wfb.KindSessionError, "2 result events"},
		{"missing cache read", result(`"usage":{"input_tokens":1,"output_tokens":1,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "usage.cache_read_input_tokens is missing"},
		{"negative", result(`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":-5,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "cache_read_input_tokens is negative (-5)"},
		{"boolean", result(`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":true,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "is a boolean (true)"},
		{"string", result(`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":"1200","cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, `is a string ("1200")`},
		{"float", result(`"usage":{"input_tokens":1.5,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "input_tokens is not a whole number (1.5)"},
		{"exponent", result(`"usage":{"input_tokens":2e3,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "not a whole number (2e3)"},
		{"null", result(`"usage":{"input_tokens":null,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":1}`), 0, wfb.KindSessionError, "input_tokens is null"},
		{"no usage", result(`"x":1`), 0, wfb.KindSessionError, "usage is missing"},
		{"is_error api", `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded",` + okUsage + `}`, 1, wfb.KindProviderError, "API Error: 529"},
		{"is_error other", `{"type":"result","subtype":"success","is_error":true,"result":"tool crashed",` + okUsage + `}`, 1, wfb.KindSessionError, "tool crashed"},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":false,"errors":["max turns reached"],` + okUsage + `}`, 0, wfb.KindSessionError, `subtype is "error_max_turns"`},
		{"nonzero exit", result(okUsage), 1, wfb.KindSessionError, "exit code 1"},
		{"no is_error", `{"type":"result","subtype":"success",` + okUsage + `}`, 0, wfb.KindSessionError, "no is_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := outcome(c.stdout, c.code)
			if row.OK {
				t.Fatalf("ok = true for %s", c.name)
			}
			if row.ErrorKind != c.kind {
				t.Errorf("error kind = %q, want %q (%s)", row.ErrorKind, c.kind, row.ErrorDetail)
			}
			if !strings.Contains(row.ErrorDetail, c.reason) {
				t.Errorf("detail %q does not name %q", row.ErrorDetail, c.reason)
			}
			if strings.Contains(c.reason, "usage") || strings.Contains(c.reason, "whole number") || strings.Contains(c.reason, "is a ") || strings.Contains(c.reason, "null") || strings.Contains(c.reason, "negative") {
				if row.InputTokens != nil || row.CacheReadInputTokens != nil || row.CostUSD != nil {
					t.Errorf("a refused usage still recorded measurements")
				}
			}
		})
	}
}

func TestAWellFormedResultIsAMeasurement(t *testing.T) {
	row := outcome(`{"type":"system","subtype":"init"}`+"\n"+result(okUsage+`,"total_cost_usd":0.42`), 0)
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	for name, got := range map[string]*int64{"input": row.InputTokens, "output": row.OutputTokens, "cache read": row.CacheReadInputTokens, "cache creation": row.CacheCreationInputTokens, "turns": row.NumTurns} {
		if got == nil {
			t.Errorf("%s not recorded", name)
		}
	}
	if *row.InputTokens != 2000 || *row.OutputTokens != 300 || *row.CacheReadInputTokens != 7000 || *row.CacheCreationInputTokens != 1000 {
		t.Errorf("tokens %d/%d/%d/%d", *row.InputTokens, *row.OutputTokens, *row.CacheReadInputTokens, *row.CacheCreationInputTokens)
	}
	if row.CostUSD == nil || *row.CostUSD != 0.42 || row.CostSource != "reported" {
		t.Errorf("cost = %v (%s), want 0.42 reported", row.CostUSD, row.CostSource)
	}
	if row.SessionID != "s1" || row.ResultEvent == "" {
		t.Errorf("session id %q, evidence %q", row.SessionID, row.ResultEvent)
	}
}

// Cost is measured or NULL: a measured 0 stays 0, nonsense is NULL, never 0.
func TestCostIsNullUnlessFiniteAndNonNegative(t *testing.T) {
	cases := []struct {
		cost string
		want *float64
	}{
		{`"total_cost_usd":0`, ptr(0.0)},
		{`"total_cost_usd":1.25`, ptr(1.25)},
		{`"total_cost_usd":-1`, nil},
		{`"total_cost_usd":"0.4"`, nil},
		{`"total_cost_usd":null`, nil},
		{`"total_cost_usd":true`, nil},
		{`"no_cost":1`, nil},
	}
	for _, c := range cases {
		t.Run(c.cost, func(t *testing.T) {
			row := outcome(result(okUsage+","+c.cost), 0)
			if !row.OK {
				t.Fatalf("cost problems must not fail the session: %s", row.ErrorDetail)
			}
			switch {
			case c.want == nil && row.CostUSD != nil:
				t.Errorf("cost = %v, want NULL", *row.CostUSD)
			case c.want != nil && (row.CostUSD == nil || *row.CostUSD != *c.want):
				t.Errorf("cost = %v, want %v", row.CostUSD, *c.want)
			case c.want == nil && row.CostSource != "":
				t.Errorf("cost source %q for an unmeasured cost", row.CostSource)
			}
		})
	}
}

const zeroUsage = `"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`

// TestAnErrorStringIsTheDetailAndOverloadedIsTheProvider stops a
// Claude-shaped agent's own explanation — an "error" string in its result
// event — from being dropped, and an overloaded provider named there from
// passing as the agent's fault.
func TestAnErrorStringIsTheDetailAndOverloadedIsTheProvider(t *testing.T) {
	for _, c := range []struct {
		name, errField, kind string
	}{
		{"overloaded", `"Overloaded: the provider answered 529 three times"`, wfb.KindProviderError},
		{"object", `{"type":"overloaded_error","message":"Overloaded"}`, wfb.KindProviderError},
		{"agent's own", `"the tool loop gave up: no progress"`, wfb.KindSessionError},
	} {
		t.Run(c.name, func(t *testing.T) {
			row := outcome(`{"type":"result","subtype":"error_during_execution","is_error":true,"error":`+c.errField+`,`+okUsage+`}`, 1)
			if row.OK || row.ErrorKind != c.kind {
				t.Fatalf("ok %v kind %q, want %q: %s", row.OK, row.ErrorKind, c.kind, row.ErrorDetail)
			}
			want := strings.Trim(c.errField, `"`)
			if !strings.Contains(row.ErrorDetail, want) {
				t.Errorf("detail %q does not carry the agent's error %q", row.ErrorDetail, want)
			}
		})
	}
}

// TestAProviderFailuresZeroUsageIsNotMeasured stops the zeros a CLI prints
// for a 529 (no request was answered) from being recorded as measured
// usage and cost, even unmetered; a failure with real usage keeps it.
func TestAProviderFailuresZeroUsageIsNotMeasured(t *testing.T) {
	row := outcome(`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: Repeated 529 Overloaded errors",`+zeroUsage+`,"total_cost_usd":0}`, 1)
	if row.ErrorKind != wfb.KindProviderError {
		t.Fatalf("kind %q: %s", row.ErrorKind, row.ErrorDetail)
	}
	if row.InputTokens != nil || row.OutputTokens != nil || row.CostUSD != nil || row.CostSource != "" {
		t.Errorf("tokens %v/%v cost %v (%q): invented zeros recorded", row.InputTokens, row.OutputTokens, row.CostUSD, row.CostSource)
	}
	if !strings.Contains(row.ErrorDetail, "not a measurement") {
		t.Errorf("detail %q does not say why the usage is not recorded", row.ErrorDetail)
	}
	kept := outcome(`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: 529",`+okUsage+`}`, 1)
	if kept.InputTokens == nil || *kept.InputTokens != 2000 {
		t.Errorf("real usage of a failed session: %v", kept.InputTokens)
	}
}

// TestTheAgentsOwnDurationIsKeptBesideWfbsClock stops the agent's own
// duration_ms from being dropped (issue 11 item 17), and anything but a
// non-negative integer from being coerced into one: NULL, and the session
// is still ok — it is a report, not the measurement.
func TestTheAgentsOwnDurationIsKeptBesideWfbsClock(t *testing.T) {
	cases := []struct {
		field string
		want  *int64
	}{
		{`"duration_ms":1234`, ptr(int64(1234))},
		{`"duration_ms":0`, ptr(int64(0))},
		{`"duration_ms":-5`, nil},
		{`"duration_ms":"1234"`, nil},
		{`"duration_ms":12.5`, nil},
		{`"duration_ms":null`, nil},
		{`"no_duration":1`, nil},
	}
	for _, c := range cases {
		t.Run(c.field, func(t *testing.T) {
			row := outcome(result(okUsage+","+c.field), 0)
			if !row.OK {
				t.Fatalf("a duration must not fail the session: %s", row.ErrorDetail)
			}
			if (row.AgentDurationMS == nil) != (c.want == nil) || (c.want != nil && *row.AgentDurationMS != *c.want) {
				t.Errorf("agent_duration_ms = %s, want %s", showInt(row.AgentDurationMS), showInt(c.want))
			}
		})
	}
}

func showInt(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}
