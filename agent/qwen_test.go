package agent

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// qwenOutcome runs the Qwen Code interpretation, for a session of model,
// on stdout as if a process had printed it and exited with code.
func qwenOutcome(model, stdout string, code int64) store.Result {
	return outcomeOf(&qwenOutput{model: model}, "qwen", stdout, code)
}

// What Qwen Code 0.24.4 printed (its init event trimmed) for a session
// that wrote a file and answered, against a stand-in that served prompt
// 1000 (200 cached) and completion 50, then 1100 (201) and 51.
const (
	qwInit  = `{"type":"system","subtype":"init","uuid":"6436c8fc","session_id":"6436c8fc","cwd":"/tmp/qw/work","tools":["write_file","glob"],"mcp_servers":[],"model":"gpt-4.1-mini","permission_mode":"yolo","qwen_code_version":"0.24.4"}`
	qwWrite = `{"type":"assistant","uuid":"fa3e893f","session_id":"6436c8fc","parent_tool_use_id":null,"message":{"id":"fa3e893f","type":"message","role":"assistant","model":"gpt-4.1-mini","content":[{"type":"tool_use","id":"call_0","name":"write_file","input":{"file_path":"/tmp/qw/art/review.json","content":"{}"}}],"stop_reason":"tool_use","usage":{"input_tokens":1000,"output_tokens":50,"cache_read_input_tokens":200,"total_tokens":1050}}}`
	qwDone  = `{"type":"user","uuid":"0db236c7","session_id":"6436c8fc","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_0","is_error":false,"content":"Successfully created and wrote to new file: /tmp/qw/art/review.json."}]}}`
	qwText  = `{"type":"assistant","uuid":"eaa173ce","session_id":"6436c8fc","parent_tool_use_id":null,"message":{"id":"eaa173ce","type":"message","role":"assistant","model":"gpt-4.1-mini","content":[{"type":"text","text":"review written 1"}],"stop_reason":null,"usage":{"input_tokens":1100,"output_tokens":51,"cache_read_input_tokens":201,"total_tokens":1151}}}`
	qwModel = "gpt-4.1-mini"
)

// qwResult is a result event with the given fields after its usual head.
func qwResult(fields string) string {
	return `{"type":"result","subtype":"success","uuid":"fe9b8132","session_id":"6436c8fc","is_error":false,"duration_ms":3167,"duration_api_ms":958,"num_turns":2,"result":"review written 1",` + fields + `,"permission_denials":[]}`
}

func qwSession(usage string) string {
	return qwInit + "\n" + qwWrite + "\n" + qwDone + "\n" + qwText + "\n" + qwResult(`"usage":`+usage)
}

// qwFailed is the result of a session that failed with message.
func qwFailed(message string) string {
	return qwInit + "\n" + `{"type":"assistant","session_id":"5d59cdc4","message":{"role":"assistant","content":[{"type":"text","text":` + message + `}],"usage":{"input_tokens":0,"output_tokens":0}}}` + "\n" +
		`{"type":"result","subtype":"error_during_execution","session_id":"5d59cdc4","is_error":true,"duration_ms":94852,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"error":{"message":` + message + `}}`
}

// TestQwenUsageIsNormalisedWithoutDoubleCounting stops Qwen Code's input
// (cached INCLUDED, as OpenAI counts it) from counting the cached tokens
// twice, an unreported cache write or reasoning count from becoming a
// measured zero (stream-json has neither), and cost from being anything
// but derived.
func TestQwenUsageIsNormalisedWithoutDoubleCounting(t *testing.T) {
	row := qwenOutcome(qwModel, qwSession(`{"input_tokens":2100,"output_tokens":101,"cache_read_input_tokens":401,"total_tokens":2201}`), 0)
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	want := rowTokens{wfb.SemanticsOpenAI, ptr(int64(1699)), ptr(int64(401)), nil, ptr(int64(101)),
		ptr(int64(2100)), ptr(int64(401)), nil, nil, "6436c8fc", "derived"}
	if diff := cmp.Diff(want, tokensOf(row)); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	// gpt-4.1-mini: $0.40 input, $0.10 cached, $1.60 output per million.
	if cost := (1699*0.40 + 401*0.10 + 101*1.60) / 1e6; row.CostUSD == nil || math.Abs(*row.CostUSD-cost) > 1e-15 {
		t.Errorf("cost %v, want %v", row.CostUSD, cost)
	}
	if row.NumTurns == nil || *row.NumTurns != 2 || row.AgentDurationMS == nil || *row.AgentDurationMS != 3167 ||
		row.PermissionDenials == nil || *row.PermissionDenials != 0 || row.APIRetries != nil {
		t.Errorf("turns %v duration %v denials %v retries %v", row.NumTurns, row.AgentDurationMS, row.PermissionDenials, row.APIRetries)
	}
	if row.ToolCalls == nil || *row.ToolCalls != 1 || row.ToolUses[0].Tool != "write_file" {
		t.Errorf("tool calls %v %+v, want the one write_file", row.ToolCalls, row.ToolUses)
	}
	// A total the provider did not send stays unchecked.
	if row := qwenOutcome(qwModel, qwSession(`{"input_tokens":2100,"output_tokens":101,"cache_read_input_tokens":401}`), 0); !row.OK {
		t.Errorf("no total_tokens: %s", row.ErrorDetail)
	}
}

// TestQwenRefusesWhatIsNotAMeasurement stops what Qwen Code makes of a
// provider's usage from passing: zeros for a usage never sent, a
// negative passed on, a string count concatenated ("001000"), a null
// count made 0 (only total_tokens keeps it); an error result whatever its
// exit code, the provider's error taken as the answer, more or fewer than
// one result, a failed process after a good result.
func TestQwenRefusesWhatIsNotAMeasurement(t *testing.T) {
	cases := []struct {
		name, stdout string
		code         int64
		kind, reason string
	}{
		{"no usage sent", qwSession(`{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0}`), 0, wfb.KindSessionError, "usage.input_tokens is 0"},
		{"negative", qwSession(`{"input_tokens":-5,"output_tokens":50,"cache_read_input_tokens":200,"total_tokens":1050}`), 0, wfb.KindSessionError, "usage.input_tokens is negative (-5)"},
		{"string concatenated", qwSession(`{"input_tokens":"001000","output_tokens":50,"cache_read_input_tokens":200,"total_tokens":1050}`), 0, wfb.KindSessionError, `usage.input_tokens is a string ("001000")`},
		{"bool summed to 1", qwSession(`{"input_tokens":1000,"output_tokens":50,"cache_read_input_tokens":true,"total_tokens":1050}`), 0, wfb.KindSessionError, "is a boolean"},
		{"null made 0", qwSession(`{"input_tokens":0,"output_tokens":50,"cache_read_input_tokens":200,"total_tokens":1050}`), 0, wfb.KindSessionError, "usage.total_tokens 1050 is not input_tokens 0 + output_tokens 50"},
		{"cached beyond input", qwSession(`{"input_tokens":100,"output_tokens":5,"cache_read_input_tokens":200,"total_tokens":105}`), 0, wfb.KindSessionError, "exceeds input_tokens"},
		{"missing field", qwSession(`{"input_tokens":100,"output_tokens":5}`), 0, wfb.KindSessionError, "usage.cache_read_input_tokens is missing"},
		{"529 after retries", qwFailed(`"[API Error: 529 stand-in error 529]"`), 1, wfb.KindProviderError, "[API Error: 529"},
		{"no finish reason", qwFailed(`"[API Error: Model stream ended without a finish reason.]"`), 1, wfb.KindProviderError, "finish reason"},
		{"no auth", qwFailed(`"No auth type is selected."`), 1, wfb.KindSessionError, "No auth type"},
		{"the error as the answer", qwInit + "\n" + strings.Replace(qwResult(`"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0}`), `"result":"review written 1"`, `"result":"[API Error: 400 bad]"`, 1), 0, wfb.KindProviderError, "passed on as text"},
		{"no result", qwInit + "\n" + qwText, 0, wfb.KindSessionError, "no result event"},
		{"two results", qwSession(`{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0}`) + "\n" + qwResult(`"usage":{}`), 0, wfb.KindSessionError, "2 result events"},
		{"exit 1 after success", qwSession(`{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0}`), 1, wfb.KindSessionError, "exit code 1"},
		{"MCP server down", strings.Replace(qwSession(`{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0}`), `"mcp_servers":[]`, `"mcp_servers":[{"name":"everything","status":"disconnected"}]`, 1), 0, wfb.KindInfraError, "everything (disconnected)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := qwenOutcome(qwModel, c.stdout, c.code)
			if row.OK {
				t.Fatalf("ok = true")
			}
			if row.ErrorKind != c.kind {
				t.Errorf("error kind %q, want %q (%s)", row.ErrorKind, c.kind, row.ErrorDetail)
			}
			if !strings.Contains(row.ErrorDetail, c.reason) {
				t.Errorf("detail %q does not name %q", row.ErrorDetail, c.reason)
			}
			measured := c.name == "exit 1 after success" || c.name == "MCP server down"
			if measured != (row.InputTokens != nil) {
				t.Errorf("input tokens %v; want recorded only when the usage itself is valid", row.InputTokens)
			}
			if !measured && (row.OutputTokens != nil || row.CostUSD != nil || row.UsageSemantics != "") {
				t.Errorf("a refused or failed session still recorded measurements")
			}
		})
	}
}

// TestQwenToolNamesAreWfbs stops a skill's use from being counted under
// the skill tool's name, and a failed call from counting as used.
func TestQwenToolNamesAreWfbs(t *testing.T) {
	skill := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c1","name":"skill","input":{"skill":"review"}},{"type":"tool_use","id":"c2","name":"mcp__everything__echo","input":{}}]}}`
	failed := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"c2","is_error":true,"content":"no"}]}}`
	row := qwenOutcome(qwModel, qwInit+"\n"+skill+"\n"+failed+"\n"+qwResult(`"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0}`), 0)
	out := &qwenOutput{}
	for _, l := range []string{qwInit, skill, failed} {
		out.Line([]byte(l), false)
	}
	if !out.tools.Used("skill:review") || out.tools.Used("mcp__everything__echo") || row.ToolCalls == nil || *row.ToolCalls != 2 {
		t.Errorf("tools %+v: want skill:review used and the failed MCP call not", row.ToolUses)
	}
}

// TestQwenCommandIsHeadlessOfflineAndBounded stops the command from losing
// what keeps Qwen Code headless, offline and honest about usage: the
// prompt on stdin, stream-json, yolo, the base URL as a flag and the key
// only in the environment, and a system settings file (which a
// workspace's .qwen/settings.json cannot override) with OpenAI auth, no
// statistics, telemetry, update, sleep inhibitor, memory extraction (a
// second model call whose tokens join the session's), SDK retries or
// ripgrep, and the version key that keeps Qwen Code from rewriting it; the
// kit's servers and settings in it.
func TestQwenCommandIsHeadlessOfflineAndBounded(t *testing.T) {
	home := t.TempDir()
	spec := Session{
		Bin: "/opt/qwen", Model: "gpt-4.1-mini", MaxTurns: 5,
		Env: map[string]string{"HOME": home, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/m/a1/", "ANTHROPIC_API_KEY": "sk-cell"},
		Kit: Kit{
			MCPServers: []MCPServer{{Name: "everything", Command: "/opt/mcp", Args: []string{"stdio"}, Env: []ServerVar{{Name: "TOKEN"}}}},
			Settings:   map[string]any{"general": map[string]any{"outputStyle": "Concise"}},
		},
	}
	cmd, err := (&qwenAdapter{}).Command(spec, "Review it.")
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := []string{"/opt/qwen", "-o", "stream-json", "--approval-mode", "yolo", "--openai-base-url", "http://127.0.0.1:9/m/a1/v1", "-m", "gpt-4.1-mini", "--max-session-turns", "5"}
	if diff := cmp.Diff(wantArgv, cmd.Argv); diff != "" || cmd.Stdin != "Review it." {
		t.Errorf("argv (-want +got):\n%s\nstdin %q", diff, cmd.Stdin)
	}
	path := cmd.Env["QWEN_CODE_SYSTEM_SETTINGS_PATH"]
	if cmd.Env["OPENAI_API_KEY"] != "sk-cell" || !strings.HasPrefix(path, home+"/") {
		t.Errorf("env %v", cmd.Env)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"$version":  4.0,
		"security":  map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"general":   map[string]any{"enableAutoUpdate": false, "chatRecording": false, "preventSystemSleep": false, "outputStyle": "Concise"},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"memory":    map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
		"model":     map[string]any{"generationConfig": map[string]any{"maxRetries": 0.0}},
		"tools":     map[string]any{"useRipgrep": false},
		"mcpServers": map[string]any{"everything": map[string]any{"command": "/opt/mcp", "args": []any{"stdio"},
			"env": map[string]any{"TOKEN": "$TOKEN"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if strings.Contains(string(raw), "sk-cell") || strings.Contains(strings.Join(cmd.Argv, " "), "sk-cell") {
		t.Error("the key is written down")
	}
	for _, bad := range []struct {
		mutate func(*Session)
		want   string
	}{
		{func(s *Session) { s.AllowedTools = []string{"write_file"} }, "allowed tools"},
		{func(s *Session) { s.Permission = "acceptEdits" }, `permission "acceptEdits"`},
		{func(s *Session) { s.OutputFormat = "json" }, "stream-json only"},
		{func(s *Session) { s.Env = map[string]string{"HOME": t.TempDir()} }, "needs a provider base URL"},
		{func(s *Session) { s.Env = map[string]string{"ANTHROPIC_BASE_URL": "http://x"} }, "needs HOME"},
	} {
		s := spec
		s.Env = map[string]string{"HOME": t.TempDir(), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
		bad.mutate(&s)
		if _, err := (&qwenAdapter{}).Command(s, "x"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v", bad.want, err)
		}
	}
}
