package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/store"
)

// testKit has a stdio server with a setting and a secret, an HTTP server
// and nested settings.
func testKit() Kit {
	return Kit{
		MCPServers: []MCPServer{
			{Name: "code", Command: "/opt/code/bin/server", Args: []string{"--stdio"},
				Env: []ServerVar{{Name: "MODE", Value: "fast", Literal: true}, {Name: "CODE_TOKEN", Value: "s3cret-value-123"}}},
			{Name: "docs", URL: "https://mcp.example.com/mcp"},
		},
		Settings: map[string]any{"model_reasoning_effort": "high", "tools": map[string]any{"view_image": false}},
	}
}

// Codex takes the kit as -c overrides, a secret by name only: its value is
// on no command line.
func TestCodexGetsTheKitAsConfigOverrides(t *testing.T) {
	args, err := codexKitArgs(testKit())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-c", `mcp_servers.code.command="/opt/code/bin/server"`, "-c", "mcp_servers.code.required=true",
		"-c", `mcp_servers.code.args=["--stdio"]`,
		"-c", `mcp_servers.code.env={"MODE" = "fast"}`,
		"-c", `mcp_servers.code.env_vars=["CODE_TOKEN"]`,
		"-c", `mcp_servers.docs.url="https://mcp.example.com/mcp"`,
		"-c", `model_reasoning_effort="high"`,
		"-c", "tools.view_image=false",
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("codex -c overrides (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(args, " "), "s3cret") {
		t.Error("the secret's value is on codex's command line")
	}
	if _, err := codexKitArgs(Kit{Settings: map[string]any{"a.b": 1}}); err == nil {
		t.Error("a settings key with a dot was accepted: codex's -c would read it as two")
	}
	if _, err := codexKitArgs(Kit{Settings: map[string]any{"a": nil}}); err == nil {
		t.Error("a null setting was accepted: TOML has no null")
	}
}

// Claude Code gets a config file in the private HOME naming the secret as
// ${NAME}, --strict-mcp-config, and a rule that lets it call the servers'
// tools headless; the stand-in, whose --allowedTools is a whitelist, gets
// the rule only beside the arm's own list.
func TestClaudeGetsTheKitAsAConfigFileAndFlags(t *testing.T) {
	for _, tt := range []struct {
		agent   string
		allowed []string
		rule    bool
	}{{Claude, nil, true}, {StandIn, nil, false}, {StandIn, []string{"Write"}, true}} {
		home := t.TempDir()
		k := testKit()
		k.Settings = map[string]any{"permissions": map[string]any{"allow": []any{"Bash(make:*)"}}}
		spec := Session{AllowedTools: tt.allowed, Kit: k, Env: map[string]string{"HOME": home}}
		args, err := claudeKitArgs(spec, tt.agent == Claude)
		if err != nil {
			t.Fatal(err)
		}
		mcp := filepath.Join(home, kitDir, "mcp.json")
		settings := filepath.Join(home, kitDir, "settings.json")
		want := []string{"--mcp-config", mcp, "--strict-mcp-config"}
		if tt.rule {
			want = append(want, "--allowedTools", "mcp__code,mcp__docs")
		}
		want = append(want, "--settings", settings)
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("%s %v: flags (-want +got):\n%s", tt.agent, tt.allowed, diff)
		}
		data, err := os.ReadFile(mcp)
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]map[string]map[string]any
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		code := cfg["mcpServers"]["code"]
		if code["command"] != "/opt/code/bin/server" || code["env"].(map[string]any)["CODE_TOKEN"] != "${CODE_TOKEN}" ||
			code["env"].(map[string]any)["MODE"] != "fast" || cfg["mcpServers"]["docs"]["url"] != "https://mcp.example.com/mcp" {
			t.Errorf("mcp config %s", data)
		}
		if strings.Contains(string(data), "s3cret") {
			t.Errorf("the secret's value is in the config file: %s", data)
		}
		if fi, err := os.Stat(mcp); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("config mode %v, want 0600", fi.Mode())
		}
	}
}

// Gemini CLI's settings take the arm's over wfb's, key by key, and the
// servers with the secret as $NAME.
func TestGeminiGetsTheKitInItsSettings(t *testing.T) {
	k := testKit()
	k.Settings = map[string]any{"general": map[string]any{"maxAttempts": 3}, "ui": map[string]any{"theme": "x"}}
	got := geminiKitSettings(geminiSettings(0), k)
	general := got["general"].(map[string]any)
	if general["maxAttempts"] != 3 || general["enableAutoUpdate"] != false {
		t.Errorf("general = %v; want the arm's maxAttempts over wfb's, wfb's other keys kept", general)
	}
	if got["ui"].(map[string]any)["theme"] != "x" {
		t.Errorf("the arm's own table is missing: %v", got)
	}
	servers := got["mcpServers"].(map[string]any)
	code := servers["code"].(map[string]any)
	if code["env"].(map[string]any)["CODE_TOKEN"] != "$CODE_TOKEN" || servers["docs"].(map[string]any)["httpUrl"] != "https://mcp.example.com/mcp" {
		t.Errorf("mcpServers = %v", servers)
	}
	if base := geminiSettings(0); base["ui"] != nil || base["general"].(map[string]any)["maxAttempts"] != 1 {
		t.Error("merging changed wfb's own settings")
	}
}

// Each agent's report of a call maps into the one vocabulary.
func TestEveryAgentsToolCallsAreNamedInOneVocabulary(t *testing.T) {
	servers := []string{"code", "code_x"}
	for _, tt := range []struct{ got, want string }{
		{geminiToolName("mcp_code_find_symbol", nil, servers), "mcp__code__find_symbol"},
		{geminiToolName("mcp_code_x_echo", nil, servers), "mcp__code_x__echo"},
		{geminiToolName("mcp_other_echo", nil, servers), "mcp_other_echo"},
		{geminiToolName("activate_skill", json.RawMessage(`{"name":"review"}`), servers), "skill:review"},
		{geminiToolName("write_file", nil, servers), "write_file"},
		{codexToolName("mcp_tool_call", "everything", "get-env", "", nil), "mcp__everything__get-env"},
		{codexToolName("command_execution", "", "", "cat /h/skills/review/SKILL.md", []string{"review"}), "skill:review"},
		{codexToolName("command_execution", "", "", "ls", []string{"review"}), "command_execution"},
		{codexToolName("agent_message", "", "", "", nil), ""},
		{codexToolName("reasoning", "", "", "", nil), ""},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	var o claudeOutput
	o.Line([]byte(`{"type":"system","subtype":"init","mcp_servers":[{"name":"code","status":"connected"}]}`), false)
	for i := 0; i < 2; i++ { // an event shown twice is one call
		o.Line([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"review"}},{"type":"tool_use","id":"t2","name":"mcp__code__echo","input":{}},{"type":"text","text":"hi"}]}}`), false)
	}
	o.Line([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"Claude requested permissions to use mcp__code__echo"}]}}`), false)
	o.Line([]byte(`{"type":"user","message":{"role":"user","content":"a prompt"}}`), false)
	if o.tools.Used("mcp__code__echo") || !o.tools.Used("skill:review") {
		t.Error("claude: a refused call counts as used, or a good one does not")
	}
	var row store.Result
	o.tools.Record(&row)
	want := []store.ToolUse{{Tool: "mcp__code__echo", Calls: 1}, {Tool: "skill:review", Calls: 1}}
	if diff := cmp.Diff(want, row.ToolUses); diff != "" || row.ToolCalls == nil || *row.ToolCalls != 2 {
		t.Errorf("claude: tool_calls %v, uses (-want +got):\n%s", deref(row.ToolCalls), diff)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
