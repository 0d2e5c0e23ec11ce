package agent

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// opencodeOutcome runs the opencode interpretation, for a session of
// model, on stdout as if a process had printed it and exited with code.
func opencodeOutcome(model, stdout string, code int64, servers ...string) store.Result {
	return outcomeOf(&opencodeOutput{model: model, servers: servers}, "opencode", stdout, code)
}

// Lines opencode 1.18.33 printed (trimmed of ids and times it repeats):
// a step that wrote a file and a step that answered, against a stand-in
// that served prompt 1000 (200 cached), completion 50 (7 reasoning), then
// 1100 (201), 51 (8).
const (
	ocStart     = `{"type":"step_start","timestamp":1796222130143,"sessionID":"ses_dc8d1726","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_dc8d1726","type":"step-start"}}`
	ocWrite     = `{"type":"tool_use","timestamp":1796222130230,"sessionID":"ses_dc8d1726","part":{"type":"tool","tool":"write","callID":"call_0","state":{"status":"completed","input":{"filePath":"/tmp/oc/art/review.json","content":"{}"},"output":"Wrote file successfully."}}}`
	ocToolStep  = `{"type":"step_finish","timestamp":1796222130230,"sessionID":"ses_dc8d1726","part":{"reason":"tool-calls","type":"step-finish","tokens":{"total":1050,"input":800,"output":43,"reasoning":7,"cache":{"write":0,"read":200}},"cost":0}}`
	ocText      = `{"type":"text","timestamp":1796222130346,"sessionID":"ses_dc8d1726","part":{"type":"text","text":"review written 1"}}`
	ocLastStep  = `{"type":"step_finish","timestamp":1796222130346,"sessionID":"ses_dc8d1726","part":{"reason":"stop","type":"step-finish","tokens":{"total":1151,"input":899,"output":43,"reasoning":8,"cache":{"write":0,"read":201}},"cost":0}}`
	ocErr529    = `{"type":"error","timestamp":1796222329984,"sessionID":"ses_dc8ce726","error":{"name":"APIError","data":{"message":"stand-in error 529","statusCode":529,"isRetryable":true,"responseBody":"{\"error\": {\"message\": \"stand-in error 529\"}}"}}}`
	ocStrUsage  = `{"type":"error","timestamp":1796222466381,"sessionID":"ses_dc8cc5b5","error":{"name":"UnknownError","data":{"message":"Type validation failed: Value: {\"usage\":{\"prompt_tokens\":\"1000\"}}.\nError message: expected number, received string"}}}`
	ocRefusal   = `{"type":"tool_use","timestamp":1796222200000,"sessionID":"ses_x","part":{"type":"tool","tool":"write","callID":"call_1","state":{"status":"error","input":{"filePath":"/tmp/oc/art/review.json","content":"{}"},"error":"The user rejected permission to use this specific tool call."}}}`
	ocModel     = "gpt-4.1"
	ocTwoSteps  = ocStart + "\n" + ocWrite + "\n" + ocToolStep + "\n" + ocStart + "\n" + ocText + "\n" + ocLastStep
	ocOneAnswer = ocStart + "\n" + ocText + "\n" + ocLastStep
)

// ocStep is a finished step with the given tokens object and cost.
func ocStep(tokens, cost string) string {
	return `{"type":"step_finish","sessionID":"ses_x","part":{"reason":"stop","type":"step-finish","tokens":` + tokens + `,"cost":` + cost + `}}`
}

// TestOpencodeStepsAreSummedInWfbsTerms stops opencode's arithmetic from
// reaching the row as it prints it: its input leaves the cached tokens
// out and its output the reasoning, per request, with no session total.
// The row holds the sum of the steps as the provider counted (the prompt
// − cached, the completion with its reasoning), the prompt and the cached
// part as reported, the reasoning apart, no cache writes (NULL, not
// opencode's 0), and a cost derived from the price table, not opencode's
// 0 for a model it has no price for.
func TestOpencodeStepsAreSummedInWfbsTerms(t *testing.T) {
	row := opencodeOutcome(ocModel, ocTwoSteps, 0)
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	want := rowTokens{wfb.SemanticsOpenAI, ptr(int64(1699)), ptr(int64(401)), nil, ptr(int64(101)),
		ptr(int64(2100)), ptr(int64(401)), ptr(int64(15)), nil, "ses_dc8d1726", "derived"}
	if diff := cmp.Diff(want, tokensOf(row)); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	// gpt-4.1: $2 input, $0.50 cached, $8 output per million.
	if cost := (1699*2 + 401*0.5 + 101*8.0) / 1e6; row.CostUSD == nil || math.Abs(*row.CostUSD-cost) > 1e-15 {
		t.Errorf("cost %v, want %v", row.CostUSD, cost)
	}
	if row.PermissionDenials == nil || *row.PermissionDenials != 0 || row.ToolCalls == nil || *row.ToolCalls != 1 {
		t.Errorf("denials %v, tool calls %v: want measured 0 and 1", row.PermissionDenials, row.ToolCalls)
	}
	if !strings.Contains(row.ResultEvent, `"total":1050`) || !strings.Contains(row.ResultEvent, `"total":1151`) {
		t.Errorf("the evidence lacks a step: %s", row.ResultEvent)
	}

	// An arm that gives opencode prices gets opencode's cost, reported.
	priced := strings.Replace(strings.Replace(ocTwoSteps, `"cost":0}`, `"cost":0.00321}`, 1), `"cost":0}`, `"cost":0.0035223}`, 1)
	row = opencodeOutcome("no-such-model", priced, 0)
	if row.CostUSD == nil || math.Abs(*row.CostUSD-0.0067323) > 1e-12 || row.CostSource != "reported" {
		t.Errorf("cost %v (%q), want opencode's 0.0067323 reported", row.CostUSD, row.CostSource)
	}
	// Unpriced by both: NULL, and the row says why.
	row = opencodeOutcome("no-such-model", ocTwoSteps, 0)
	if !row.OK || row.CostUSD != nil || !strings.Contains(row.ErrorDetail, `prices a model it has no price for at 0`) {
		t.Errorf("ok %v cost %v detail %q, want NULL and why", row.OK, row.CostUSD, row.ErrorDetail)
	}
}

// TestOpencodeRefusesWhatIsNotAMeasurement stops the ways opencode's
// output misleads from becoming a passing row: zeros for a usage the
// provider never sent (only a missing total says so), a count it clamped
// (a negative or null prompt becomes 0, and only its total keeps the raw
// sum), an error event whatever the exit code, a session its permission
// rules ended (exit 0), steps that never finished, and a failed process
// after a good step.
func TestOpencodeRefusesWhatIsNotAMeasurement(t *testing.T) {
	cases := []struct {
		name, stdout string
		code         int64
		kind, reason string
	}{
		{"no usage sent", ocStart + "\n" + ocStep(`{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0, wfb.KindSessionError, "tokens.total is missing: the provider sent no usage"},
		{"negative prompt clamped", ocStart + "\n" + ocStep(`{"total":45,"input":0,"output":43,"reasoning":7,"cache":{"write":0,"read":200}}`, "0"), 0, wfb.KindSessionError, "tokens.total 45 is not input 0 + output 43 + reasoning 7 + cache.read 200 + cache.write 0 (250): opencode clamped"},
		{"null prompt", ocStart + "\n" + ocStep(`{"total":50,"input":0,"output":43,"reasoning":7,"cache":{"write":0,"read":200}}`, "0"), 0, wfb.KindSessionError, "tokens.total 50 is not"},
		{"zero input", ocStart + "\n" + ocStep(`{"total":9,"input":0,"output":9,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0, wfb.KindSessionError, "the steps' input is 0"},
		{"a string count", ocStart + "\n" + ocStep(`{"total":"9","input":9,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0, wfb.KindSessionError, "step 1: tokens.total is a string"},
		{"no cache object", ocStart + "\n" + ocStep(`{"total":9,"input":9,"output":0,"reasoning":0}`, "0"), 0, wfb.KindSessionError, "tokens.cache is not an object"},
		{"one bad step of two", ocStart + "\n" + ocToolStep + "\n" + ocStart + "\n" + ocStep(`{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0, wfb.KindSessionError, "step 2: tokens.total is missing"},
		{"string usage from the provider", ocStart + "\n" + ocStrUsage, 1, wfb.KindSessionError, "Type validation failed"},
		{"529 after retries", ocErr529, 1, wfb.KindProviderError, "APIError: stand-in error 529 (status 529)"},
		{"400", strings.ReplaceAll(ocErr529, "529", "400"), 1, wfb.KindProviderError, "(status 400)"},
		{"permission rejected, exit 0", ocStart + "\n" + ocRefusal + "\n" + strings.Replace(ocToolStep, `"reason":"tool-calls"`, `"reason":"tool-calls"`, 1), 0, wfb.KindSessionError, `finish reason is "tool-calls" after its permission rules rejected 1 tool call`},
		{"no step finished", ocStart, 0, wfb.KindSessionError, "no step_finish event"},
		{"a step never finished", ocOneAnswer + "\n" + ocStart, 0, wfb.KindSessionError, "started 2 steps and finished 1"},
		{"exit 1 after an answer", ocOneAnswer, 1, wfb.KindSessionError, "exit code 1"},
		{"not json", "Warning: something\n" + ocOneAnswer, 0, wfb.KindSessionError, "not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := opencodeOutcome(ocModel, c.stdout, c.code)
			if row.OK {
				t.Fatalf("ok = true")
			}
			if row.ErrorKind != c.kind {
				t.Errorf("error kind %q, want %q (%s)", row.ErrorKind, c.kind, row.ErrorDetail)
			}
			if !strings.Contains(row.ErrorDetail, c.reason) {
				t.Errorf("detail %q does not name %q", row.ErrorDetail, c.reason)
			}
			// Valid usage stays recorded beside a failure that is not about it.
			measured := strings.Contains("a step never finished|exit 1 after an answer|not json|permission rejected, exit 0", c.name)
			if measured != (row.InputTokens != nil) {
				t.Errorf("input tokens %v; want recorded only when the usage itself is valid", row.InputTokens)
			}
			if !measured && (row.OutputTokens != nil || row.CostUSD != nil || row.UsageSemantics != "") {
				t.Errorf("a refused or failed session still recorded measurements")
			}
		})
	}
	row := opencodeOutcome(ocModel, ocStart+"\n"+ocRefusal+"\n"+ocToolStep, 0)
	if row.PermissionDenials == nil || *row.PermissionDenials != 1 || row.ToolUses[0].Tool != "write" {
		t.Errorf("denials %v, tools %+v: want the rejected write counted", row.PermissionDenials, row.ToolUses)
	}
}

// TestOpencodeSubagentUsageIsNotPassedOffAsTheSessions stops a session
// whose task tool ran a subagent from recording opencode's count, which
// leaves the subagent's requests out: the tokens are NULL and the row says
// why (the wire, when metered, has them all).
func TestOpencodeSubagentUsageIsNotPassedOffAsTheSessions(t *testing.T) {
	task := strings.Replace(strings.Replace(ocWrite, `"tool":"write"`, `"tool":"task"`, 1), `"callID":"call_0"`, `"callID":"call_9"`, 1)
	row := opencodeOutcome(ocModel, ocStart+"\n"+task+"\n"+ocToolStep+"\n"+ocOneAnswer, 0)
	if !row.OK || row.InputTokens != nil || row.CostUSD != nil || !strings.Contains(row.ErrorDetail, "1 subagent task(s), whose requests opencode leaves out") {
		t.Errorf("ok %v input %v cost %v detail %q", row.OK, row.InputTokens, row.CostUSD, row.ErrorDetail)
	}
}

// TestOpencodeToolNamesAreWfbs stops an MCP tool from being counted under
// opencode's SERVER_TOOL, where an arm's expect_tools (mcp__SERVER__TOOL)
// would never find it, and a skill's use under the skill tool's name.
func TestOpencodeToolNamesAreWfbs(t *testing.T) {
	for _, c := range []struct {
		name, input, want string
	}{
		{"everything_echo", `{}`, "mcp__everything__echo"},
		{"code_search_find", `{}`, "mcp__code_search__find"}, // the longest server
		{"my_srv_x", `{}`, "mcp__my.srv__x"},                 // opencode writes '.' as '_'
		{"skill", `{"name":"review"}`, "skill:review"},
		{"write", `{"filePath":"/a"}`, "write"},
		{"bash", `{}`, "bash"},
	} {
		if got := opencodeToolName(c.name, json.RawMessage(c.input), []string{"everything", "code", "code_search", "my.srv"}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOpencodeCommandIsHeadlessOfflineAndConfiguredByWfb stops the command
// from losing what makes opencode run headless against the cell's
// provider and nothing else: the prompt on stdin, --title (else a request
// of its own names the session), the model as wfb's provider's, the
// configuration in OPENCODE_CONFIG_CONTENT (which a workspace's
// opencode.json cannot override) with the base URL, the key only by
// reference, usage asked for, the model listed and made the small model,
// the artifact directory granted, the kit's servers and settings; the
// models.dev fetch and the update check off; and the plugin lock seeded so
// that it installs nothing from npm.
func TestOpencodeCommandIsHeadlessOfflineAndConfiguredByWfb(t *testing.T) {
	home := t.TempDir()
	spec := Session{
		Bin: "/opt/opencode", Model: "gpt-4.1",
		Env:   map[string]string{"HOME": home, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/m/a1/", "ANTHROPIC_API_KEY": "sk-cell"},
		Grant: []string{"/art"},
		Kit: Kit{
			MCPServers: []MCPServer{
				{Name: "everything", Command: "/opt/mcp", Args: []string{"stdio"}, Env: []ServerVar{{Name: "TOKEN"}, {Name: "MODE", Value: "fast", Literal: true}}},
				{Name: "docs", URL: "http://127.0.0.1:7/mcp"},
			},
			Settings: map[string]any{"provider": map[string]any{"wfb": map[string]any{"models": map[string]any{"gpt-4.1": map[string]any{"cost": map[string]any{"input": 2}}}}}},
		},
	}
	cmd, err := (&opencodeAdapter{}).Command(spec, "Review it.")
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := []string{"/opt/opencode", "run", "--format", "json", "--title", "wfb", "-m", "wfb/gpt-4.1"}
	if diff := cmp.Diff(wantArgv, cmd.Argv); diff != "" || cmd.Stdin != "Review it." {
		t.Errorf("argv (-want +got):\n%s\nstdin %q", diff, cmd.Stdin)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(cmd.Env["OPENCODE_CONFIG_CONTENT"]), &cfg); err != nil {
		t.Fatalf("OPENCODE_CONFIG_CONTENT: %v", err)
	}
	want := map[string]any{
		"provider": map[string]any{"wfb": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "wfb",
			"options": map[string]any{"baseURL": "http://127.0.0.1:9/m/a1/v1", "apiKey": "{env:OPENAI_API_KEY}", "includeUsage": true},
			"models":  map[string]any{"gpt-4.1": map[string]any{"name": "gpt-4.1", "cost": map[string]any{"input": 2.0}}},
		}},
		"model": "wfb/gpt-4.1", "small_model": "wfb/gpt-4.1", "autoupdate": false, "share": "disabled",
		"permission": map[string]any{"external_directory": map[string]any{"/art/*": "allow"}},
		"mcp": map[string]any{
			"everything": map[string]any{"type": "local", "command": []any{"/opt/mcp", "stdio"}, "enabled": true,
				"environment": map[string]any{"TOKEN": "{env:TOKEN}", "MODE": "fast"}},
			"docs": map[string]any{"type": "remote", "url": "http://127.0.0.1:7/mcp", "enabled": true},
		},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("configuration (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"OPENAI_API_KEY": "sk-cell", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"} {
		if cmd.Env[k] != v {
			t.Errorf("env %s=%q, want %q", k, cmd.Env[k], v)
		}
	}
	lock, err := os.ReadFile(filepath.Join(home, ".config", "opencode", "package-lock.json"))
	if err != nil || string(lock) != opencodePluginLock {
		t.Errorf("plugin lock %q (%v)", lock, err)
	}
	if fi, err := os.Stat(filepath.Join(home, ".config", "opencode", "node_modules")); err != nil || !fi.IsDir() {
		t.Errorf("no node_modules beside the lock: %v", err)
	}
	if (&opencodeAdapter{}).SkillsDir(home) != filepath.Join(home, ".config", "opencode", "skills") {
		t.Error("skills go where opencode looks for them")
	}
	for _, bad := range []struct {
		mutate func(*Session)
		want   string
	}{
		{func(s *Session) { s.MaxTurns = 3 }, "no turn limit"},
		{func(s *Session) { s.AllowedTools = []string{"write"} }, "allowed tools"},
		{func(s *Session) { s.Model = "" }, "needs a model"},
		{func(s *Session) { s.OutputFormat = "default" }, "json events only"},
		{func(s *Session) { s.Permission = "yolo" }, `permission "yolo"`},
		{func(s *Session) { s.Env = map[string]string{"HOME": t.TempDir()} }, "needs a provider base URL"},
		{func(s *Session) { s.Env = map[string]string{"ANTHROPIC_BASE_URL": "http://x"} }, "needs HOME"},
	} {
		s := spec
		s.Env = map[string]string{"HOME": t.TempDir(), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
		bad.mutate(&s)
		if _, err := (&opencodeAdapter{}).Command(s, "x"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v", bad.want, err)
		}
	}
	// An arm's own provider: its URL as given, its key its own.
	s := spec
	s.Env = map[string]string{"HOME": t.TempDir(), "OPENAI_BASE_URL": "https://api.example/v1", "OPENAI_API_KEY": "sk-arm"}
	cmd, err = (&opencodeAdapter{}).Command(s, "x")
	if err != nil || !strings.Contains(cmd.Env["OPENCODE_CONFIG_CONTENT"], `"baseURL":"https://api.example/v1"`) || cmd.Env["OPENAI_API_KEY"] != "" {
		t.Errorf("err %v, env %v", err, cmd.Env)
	}
}
