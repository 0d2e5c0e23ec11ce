package agent

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// The fuzz targets feed the agents' output parsers what a hostile or
// broken agent could print. Whatever it is, the row they make must be one
// the store accepts and that says what happened: ok exactly when no error
// kind is set, a known kind, and measurements that are measurements. Seeds
// are in testdata/fuzz; `.ci/run` runs each target for a bounded time.

// outputRow runs out over stdout as if a process had printed it and exited
// with code, as the session does.
func outputRow(out Output, stdout []byte, code int64) store.Result {
	for _, l := range strings.Split(string(stdout), "\n") {
		out.Line([]byte(l), false)
	}
	row := store.Result{}
	exited(&row, out, code)
	return row
}

// checkRow fails t when row is not one the store would accept as a true
// account: the invariants of store.validateResult, and of the usage
// columns (all of a measurement or none).
func checkRow(t *testing.T, row store.Result) {
	t.Helper()
	switch {
	case row.OK != (row.ErrorKind == ""):
		t.Fatalf("ok=%v with error kind %q", row.OK, row.ErrorKind)
	case !row.OK && !slices.Contains(wfb.ErrorKinds, row.ErrorKind):
		t.Fatalf("unknown error kind %q", row.ErrorKind)
	case !row.OK && row.ErrorDetail == "":
		t.Fatal("a failure without a detail")
	}
	for name, v := range map[string]*int64{
		"input": row.InputTokens, "output": row.OutputTokens, "cache read": row.CacheReadInputTokens,
		"cache creation": row.CacheCreationInputTokens, "turns": row.NumTurns, "reported input": row.ReportedInputTokens,
		"reported cached": row.ReportedCachedInputTokens, "reasoning": row.ReasoningOutputTokens,
		"retries": row.APIRetries, "denials": row.PermissionDenials,
	} {
		if v != nil && *v < 0 {
			t.Fatalf("%s tokens %d", name, *v)
		}
	}
	if (row.InputTokens == nil) != (row.OutputTokens == nil) || (row.InputTokens == nil) != (row.CacheReadInputTokens == nil) {
		t.Fatalf("a partial measurement: input %v output %v cache read %v", row.InputTokens, row.OutputTokens, row.CacheReadInputTokens)
	}
	if c := row.CostUSD; c != nil && (*c < 0 || math.IsNaN(*c) || math.IsInf(*c, 0) || row.CostSource == "") {
		t.Fatalf("cost %v from %q", *c, row.CostSource)
	}
	if row.CostUSD != nil && row.InputTokens == nil {
		t.Fatal("a cost without the usage it was measured with")
	}
	for _, m := range row.ModelUsage {
		if m.Model == "" {
			t.Fatal("a per-model row without a model")
		}
		for i, v := range []*int64{m.InputTokens, m.OutputTokens, m.CacheReadInputTokens, m.CacheCreationInputTokens} {
			// A cache-write count may be unreported (Gemini, Codex): NULL.
			if (v == nil && i < 3) || (v != nil && *v < 0) {
				t.Fatalf("model %q: count %v", m.Model, v)
			}
		}
	}
}

func FuzzClaudeOutput(f *testing.F) {
	f.Add([]byte(`{"type":"system","subtype":"init"}`+"\n"+result(`"total_cost_usd":0.5,"usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}`)), int64(0))
	f.Add([]byte(`{"type":"result","is_error":true,"result":"API Error: 529"}`), int64(1))
	f.Fuzz(func(t *testing.T, stdout []byte, code int64) {
		out := &claudeCLIOutput{claudeOutput: &claudeOutput{version: "2.0.0"}}
		checkRow(t, outputRow(out, stdout, code))
	})
}

func FuzzCodexOutput(f *testing.F) {
	f.Add([]byte(codexDone(`{"input_tokens":400,"cached_input_tokens":300,"output_tokens":20,"reasoning_output_tokens":5}`)), int64(0))
	f.Add([]byte(codexStart+`{"type":"turn.failed","error":{"message":"unexpected status 529"}}`), int64(1))
	f.Fuzz(func(t *testing.T, stdout []byte, code int64) {
		row := outputRow(&codexOutput{model: "gpt-5-codex"}, stdout, code)
		checkRow(t, row)
		if row.CacheCreationInputTokens != nil {
			t.Fatal("codex reports no cache writes, yet one was recorded")
		}
	})
}

func FuzzGeminiOutput(f *testing.F) {
	f.Add([]byte(geminiDone(geminiTwoModels)), int64(0))
	f.Add([]byte(geminiFailed(`,"error":{"type":"unknown","message":"[API Error: terminated]"}`)), int64(1))
	f.Fuzz(func(t *testing.T, stdout []byte, code int64) {
		row := outputRow(&geminiOutput{}, stdout, code)
		checkRow(t, row)
		if row.CacheCreationInputTokens != nil {
			t.Fatal("gemini reports no cache writes, yet one was recorded")
		}
	})
}

func FuzzOpencodeOutput(f *testing.F) {
	f.Add([]byte(ocTwoSteps), int64(0))
	f.Add([]byte(ocStart+"\n"+ocErr529), int64(1))
	f.Add([]byte(ocStart+"\n"+ocStep(`{"total":45,"input":0,"output":43,"reasoning":7,"cache":{"write":0,"read":200}}`, "-1")), int64(0))
	f.Fuzz(func(t *testing.T, stdout []byte, code int64) {
		row := outputRow(&opencodeOutput{model: ocModel, servers: []string{"everything"}}, stdout, code)
		checkRow(t, row)
		if row.CacheCreationInputTokens != nil {
			t.Fatal("opencode's OpenAI-compatible provider reports no cache writes, yet one was recorded")
		}
	})
}

func FuzzQwenOutput(f *testing.F) {
	f.Add([]byte(qwSession(`{"input_tokens":2100,"output_tokens":101,"cache_read_input_tokens":401,"total_tokens":2201}`)), int64(0))
	f.Add([]byte(qwFailed(`"[API Error: 529 stand-in error 529]"`)), int64(1))
	f.Fuzz(func(t *testing.T, stdout []byte, code int64) {
		row := outputRow(&qwenOutput{model: qwModel}, stdout, code)
		checkRow(t, row)
		if row.CacheCreationInputTokens != nil || row.ReasoningOutputTokens != nil {
			t.Fatal("qwen's stream-json reports no cache writes or reasoning, yet one was recorded")
		}
	})
}

// FuzzParseUsage stops usage validation from accepting anything but a
// count written as one: every value it accepts is a non-negative integer
// whose JSON text is exactly its decimal form.
func FuzzParseUsage(f *testing.F) {
	f.Add([]byte(`{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":4}`))
	f.Add([]byte(`{"input_tokens":1.0,"output_tokens":"2","cache_read_input_tokens":-1,"cache_creation_input_tokens":null}`))
	f.Add([]byte(`{"input_tokens":99999999999999999999,"output_tokens":2e3,"cache_read_input_tokens":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var usage map[string]json.RawMessage
		if json.Unmarshal(data, &usage) != nil {
			return
		}
		vals, problems := parseUsage(usage)
		for i, field := range UsageFields {
			raw, ok := usage[field]
			n, err := wfb.ParseCount(raw)
			if ok && err == nil && strconv.FormatInt(n, 10) != strings.TrimSpace(string(raw)) {
				t.Fatalf("%s: %s accepted as %d", field, raw, n)
			}
			if len(problems) == 0 && (vals[i] != n || n < 0 || !ok) {
				t.Fatalf("%s: %s accepted as %d", field, raw, vals[i])
			}
		}
	})
}
