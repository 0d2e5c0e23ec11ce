package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/mock/provider"
)

// standinConfig is an --mcp-config that starts this test binary as the
// stand-in MCP server named name, logging its calls to logPath. The switch
// that makes the binary a server is passed as ${STANDIN_MCP}, so the agent
// must expand it from its own environment for the server to start.
func standinConfig(t *testing.T, name, logPath string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"type":    "stdio",
		"command": os.Args[0],
		"args":    []string{"--log", logPath},
		"env":     map[string]string{"WFB_TEST_MCP_SERVER": "${STANDIN_MCP}"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mcpEnv is a session's environment with the stand-in server's switch.
func mcpEnv(p *provider.Provider) map[string]string {
	env := sessionEnv(p)
	env["STANDIN_MCP"] = "1"
	return env
}

// loggedCall is one line of the stand-in server's --log.
type loggedCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	PID       int            `json:"pid"`
}

func readCalls(t *testing.T, path string) []loggedCall {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	// Only whole lines: a test polls the file while the server writes it
	// (it may exist, empty, or end mid-line).
	whole := string(b[:bytes.LastIndexByte(b, '\n')+1])
	var calls []loggedCall
	for _, line := range strings.Split(whole, "\n") {
		if line == "" {
			continue
		}
		var c loggedCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		calls = append(calls, c)
	}
	return calls
}

// initOf returns the init event of stream-json output.
func initOf(t *testing.T, out string) (tools []string, servers []mcpServerStatus) {
	t.Helper()
	for _, m := range jsonLines(t, out) {
		if string(m["subtype"]) == `"init"` {
			if err := json.Unmarshal(m["tools"], &tools); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(m["mcp_servers"], &servers); err != nil {
				t.Fatal(err)
			}
			return tools, servers
		}
	}
	t.Fatalf("no init event in:\n%s", out)
	return nil, nil
}

// wireTool returns the tool definition named name of a model request.
func wireTool(t *testing.T, req provider.Request, name string) map[string]any {
	t.Helper()
	tools, _ := req.Body["tools"].([]any)
	for _, tool := range tools {
		if m, _ := tool.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no tool %s in the request's tools: %v", name, tools)
	return nil
}

// lastToolResults returns the tool_result blocks of a request's last
// message.
func lastToolResults(t *testing.T, req provider.Request) []toolResultView {
	t.Helper()
	messages, _ := req.Body["messages"].([]any)
	if len(messages) == 0 {
		t.Fatal("request has no messages")
	}
	raw, _ := json.Marshal(messages[len(messages)-1].(map[string]any)["content"])
	var blocks []toolResultView
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("last message content %s: %v", raw, err)
	}
	return blocks
}

// processGone says whether pid no longer exists.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestAgentCallsAnMCPToolAndSendsItsResultBack stops an MCP tool call that
// never reaches the server, or whose answer the model never sees: the
// stand-in server's log must show the call, the next request must carry its
// text as the tool_result, the tool must be offered with its schema under
// Claude Code's name, the init event must list the server, and the server
// process must be gone when the agent has exited.
func TestAgentCallsAnMCPToolAndSendsItsResultBack(t *testing.T) {
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{
		{Text: "asking", Tools: []provider.Tool{{Name: "mcp__standin__echo", Input: map[string]any{"text": "hello"}}}, Usage: provider.FullUsage(1, 1, 1, 1)},
		{Text: "done", Usage: provider.FullUsage(1, 1, 1, 1)},
	}})
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	proc := agentExec(t, agentCmd{dir: t.TempDir(), env: mcpEnv(p), stdin: "go",
		args: []string{"-p", "--output-format", "stream-json", "--verbose", "--max-turns", "3", "--strict-mcp-config", "--mcp-config", standinConfig(t, "standin", logPath)}})
	res, _ := resultOf(t, proc)
	if proc.code != 0 || res.IsError || res.NumTurns != 2 {
		t.Fatalf("exit %d, result %+v; want a 2-turn success\nstderr:\n%s", proc.code, res, proc.stderr)
	}
	calls := readCalls(t, logPath)
	if diff := cmp.Diff([]loggedCall{{Tool: "echo", Arguments: map[string]any{"text": "hello"}}}, calls, cmpIgnorePID); diff != "" {
		t.Fatalf("calls the server saw (-want +got):\n%s", diff)
	}
	reqs := p.MessageRequests()
	if len(reqs) != 2 {
		t.Fatalf("provider saw %d requests, want 2", len(reqs))
	}
	if diff := cmp.Diff([]toolResultView{{ToolUseID: lastToolUseID(t, proc.stdout), Content: "Echo: hello"}}, lastToolResults(t, reqs[1])); diff != "" {
		t.Errorf("the second request's tool_result (-want +got):\n%s", diff)
	}
	echo := wireTool(t, reqs[0], "mcp__standin__echo")
	schema, _ := json.Marshal(echo["input_schema"])
	if !strings.Contains(string(schema), `"text"`) || !strings.Contains(string(schema), `"required":["text"]`) || echo["description"] == "" {
		t.Errorf("mcp__standin__echo on the wire = %v; want its description and its schema with a required text", echo)
	}
	tools, servers := initOf(t, proc.stdout)
	if diff := cmp.Diff([]string{"Write", "Read", "Bash", "mcp__standin__echo", "mcp__standin__find_symbol"}, tools); diff != "" {
		t.Errorf("init tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]mcpServerStatus{{Name: "standin", Status: "connected"}}, servers); diff != "" {
		t.Errorf("init mcp_servers (-want +got):\n%s", diff)
	}
	if !processGone(calls[0].PID) {
		t.Errorf("the MCP server (pid %d) is still running after the agent exited", calls[0].PID)
	}
}

var cmpIgnorePID = cmp.Transformer("nopid", func(c loggedCall) loggedCall { c.PID = 0; return c })

// lastToolUseID is the id of the last tool_use the agent printed.
func lastToolUseID(t *testing.T, out string) string {
	t.Helper()
	var id string
	for _, m := range jsonLines(t, out) {
		if string(m["type"]) != `"assistant"` {
			continue
		}
		var msg struct {
			Content []struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"content"`
		}
		_ = json.Unmarshal(m["message"], &msg)
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				id = b.ID
			}
		}
	}
	return id
}

// TestAgentGoesOnWithoutAFailedMCPServer stops a server that cannot start,
// or never answers initialize, from failing or hanging the session: as in
// Claude Code it is "failed" in the init event, said on stderr, and a call
// of one of its tools is a tool error the model sees.
func TestAgentGoesOnWithoutAFailedMCPServer(t *testing.T) {
	tests := []struct {
		name   string
		config string
	}{
		{"command does not exist", `{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}`},
		{"never answers initialize", `{"mcpServers": {"ghost": {"command": "/bin/sleep", "args": ["30"]}}}`},
		{"http server not there", `{"mcpServers": {"ghost": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "asking",
				Tools: []provider.Tool{{Name: "mcp__ghost__echo", Input: map[string]any{"text": "hello"}}}, Usage: provider.FullUsage(1, 1, 1, 1)}})
			env := sessionEnv(p)
			env["MCP_TIMEOUT"] = "500"
			began := time.Now()
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: env, stdin: "go",
				args: []string{"-p", "--output-format", "stream-json", "--verbose", "--mcp-config", tt.config}})
			if took := time.Since(began); took > 10*time.Second {
				t.Errorf("the session took %s: the failed server held it up", took)
			}
			res, _ := resultOf(t, proc)
			if proc.code != 0 || res.IsError {
				t.Fatalf("exit %d, result %+v; want the session to complete\nstderr:\n%s", proc.code, res, proc.stderr)
			}
			_, servers := initOf(t, proc.stdout)
			if diff := cmp.Diff([]mcpServerStatus{{Name: "ghost", Status: "failed"}}, servers); diff != "" {
				t.Errorf("init mcp_servers (-want +got):\n%s", diff)
			}
			if !strings.Contains(proc.stderr, `MCP server "ghost" failed`) {
				t.Errorf("stderr does not say the server failed:\n%s", proc.stderr)
			}
			results := toolResults(t, proc.stdout)
			if len(results) != 1 || !results[0].IsError {
				t.Errorf("tool results %+v; want one tool error", results)
			}
		})
	}
}

// TestAgentPermissionRulesCoverMCPTools stops --allowedTools and
// --disallowedTools from ignoring MCP tools: Claude Code's mcp__S (and
// mcp__S__*) covers every tool of server S, mcp__S__T one tool.
func TestAgentPermissionRulesCoverMCPTools(t *testing.T) {
	tests := []struct {
		rule, tool string
		want       bool
	}{
		{"mcp__standin", "mcp__standin__echo", true},
		{"mcp__standin__*", "mcp__standin__find_symbol", true},
		{"mcp__standin__echo", "mcp__standin__echo", true},
		{"mcp__standin__echo", "mcp__standin__find_symbol", false},
		{"mcp__standin", "mcp__standin2__echo", false},
		{"mcp__other", "mcp__standin__echo", false},
		{"mcp__standin", "Bash", false},
		{"Bash", "mcp__standin__echo", false},
	}
	for _, tt := range tests {
		if got := ruleMatches(tt.rule, tt.tool, nil); got != tt.want {
			t.Errorf("ruleMatches(%q, %q) = %v, want %v", tt.rule, tt.tool, got, tt.want)
		}
	}

	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "asking", Tools: []provider.Tool{
		{Name: "mcp__standin__echo", Input: map[string]any{"text": "denied"}},
		{Name: "mcp__standin__find_symbol", Input: map[string]any{"name": "sum"}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	proc := agentExec(t, agentCmd{dir: t.TempDir(), env: mcpEnv(p), stdin: "go",
		args: []string{"-p", "--output-format", "stream-json", "--verbose", "--allowedTools", "Read,mcp__standin__find_symbol", "--mcp-config", standinConfig(t, "standin", logPath)}})
	res, _ := resultOf(t, proc)
	var denied []string
	for _, d := range res.PermissionDenials {
		denied = append(denied, d.ToolName)
	}
	if diff := cmp.Diff([]string{"mcp__standin__echo"}, denied); diff != "" {
		t.Errorf("permission_denials (-want +got):\n%s\nstderr:\n%s", diff, proc.stderr)
	}
	var called []string
	for _, c := range readCalls(t, logPath) {
		called = append(called, c.Tool)
	}
	if diff := cmp.Diff([]string{"find_symbol"}, called); diff != "" {
		t.Errorf("calls the server saw (-want +got):\n%s", diff)
	}
}

// TestAgentLeavesNoMCPServerAfterSIGTERM stops a cancelled session from
// orphaning its MCP servers: the agent is killed mid-session (a Bash
// command running) and the server process must be gone when it has exited.
func TestAgentLeavesNoMCPServerAfterSIGTERM(t *testing.T) {
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "asking", Tools: []provider.Tool{
		{Name: "mcp__standin__echo", Input: map[string]any{"text": "before"}},
		{Name: "Bash", Input: map[string]any{"command": "sleep 30"}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	cmd := agentCommand(t, agentCmd{dir: t.TempDir(), env: mcpEnv(p), stdin: "go",
		args: []string{"-p", "--output-format", "stream-json", "--verbose", "--mcp-config", standinConfig(t, "standin", logPath)}})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var calls []loggedCall
	for calls = readCalls(t, logPath); len(calls) == 0; calls = readCalls(t, logPath) {
		if t.Context().Err() != nil {
			t.Fatal("the MCP call never reached the server")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 143 {
		t.Errorf("wait: %v, want exit status 143\nstderr:\n%s", err, stderr.String())
	}
	if !processGone(calls[0].PID) {
		t.Errorf("the MCP server (pid %d) is still running after the agent was cancelled", calls[0].PID)
	}
}

// TestAgentOffersSkillsAndLoadsThem stops the Skill tool from being offered
// without skills, listing them without their descriptions, or loading a
// skill that is not there: personal ($HOME/.claude/skills) and workspace
// (.claude/skills) skills are listed, a call returns the SKILL.md, and an
// unknown skill is a tool error.
func TestAgentOffersSkillsAndLoadsThem(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	skillMD := "---\nname: fix-bug\ndescription: Fixes a failing test\n  by reading it first.\n---\nRun the tests, read the failure, fix the code.\n"
	for path, content := range map[string]string{
		filepath.Join(home, ".claude/skills/fix-bug/SKILL.md"): skillMD,
		filepath.Join(dir, ".claude/skills/local/SKILL.md"):    "No front matter here.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "loading", Tools: []provider.Tool{
		{Name: "Skill", Input: map[string]any{"skill": "fix-bug"}},
		{Name: "Skill", Input: map[string]any{"skill": "nope"}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	env := sessionEnv(p)
	env["HOME"] = home
	proc := agentExec(t, agentCmd{dir: dir, env: env, stdin: "go", args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	if proc.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", proc.code, proc.stderr)
	}
	tools, _ := initOf(t, proc.stdout)
	if !slices.Contains(tools, "Skill") {
		t.Fatalf("init tools %v lack Skill", tools)
	}
	desc, _ := wireTool(t, p.MessageRequests()[0], "Skill")["description"].(string)
	for _, want := range []string{"- fix-bug: Fixes a failing test by reading it first.", "- local"} {
		if !strings.Contains(desc, want) {
			t.Errorf("Skill's description lacks %q:\n%s", want, desc)
		}
	}
	results := toolResults(t, proc.stdout)
	if len(results) != 2 {
		t.Fatalf("tool results %+v, want 2", results)
	}
	if results[0].IsError || !strings.Contains(results[0].Content, "Run the tests, read the failure, fix the code.") {
		t.Errorf("Skill fix-bug = %+v; want its SKILL.md", results[0])
	}
	if !results[1].IsError {
		t.Errorf("Skill nope = %+v; want a tool error", results[1])
	}

	// Without skills there is no Skill tool.
	proc = agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "go", args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	if tools, _ := initOf(t, proc.stdout); slices.Contains(tools, "Skill") {
		t.Errorf("Skill offered without any skill: %v", tools)
	}
}

// TestAgentReachesAnHTTPMCPServerWithExpandedHeaders stops the http
// transport from rotting untested: the stand-in server serves streamable
// HTTP and the call reaches it; a header naming a variable the agent's
// environment lacks makes the server "failed", naming the variable. (The
// stand-in server does not check headers, so the value sent is not seen.)
func TestAgentReachesAnHTTPMCPServerWithExpandedHeaders(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	server := exec.CommandContext(t.Context(), os.Args[0], "--http", "127.0.0.1:0", "--log", logPath)
	server.Env = []string{"WFB_TEST_MCP_SERVER=1"}
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	line := make([]byte, 200)
	n, _ := out.Read(line)
	url := strings.TrimSpace(strings.TrimPrefix(string(line[:n]), "wfb mock mcp-server: listening on "))
	if !strings.HasPrefix(url, "http://") {
		t.Fatalf("server said %q, want where it listens", line[:n])
	}
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "asking",
		Tools: []provider.Tool{{Name: "mcp__web__echo", Input: map[string]any{"text": "over http"}}}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	config := `{"mcpServers": {"web": {"type": "http", "url": "` + url + `", "headers": {"X-Token": "${MCP_TOKEN}"}}}}`
	for _, token := range []string{"", "secret"} {
		env := sessionEnv(p)
		if token != "" {
			env["MCP_TOKEN"] = token
		}
		proc := agentExec(t, agentCmd{dir: t.TempDir(), env: env, stdin: "go", args: []string{"-p", "--output-format", "stream-json", "--verbose", "--mcp-config", config}})
		_, servers := initOf(t, proc.stdout)
		results := toolResults(t, proc.stdout)
		switch {
		case token == "" && (servers[0].Status != "failed" || !strings.Contains(proc.stderr, "MCP_TOKEN")):
			t.Errorf("without MCP_TOKEN: %+v, stderr %q; want failed, naming the missing variable", servers, proc.stderr)
		case token != "" && (servers[0].Status != "connected" || len(results) != 1 || results[0].Content != "Echo: over http"):
			t.Errorf("with MCP_TOKEN: %+v, results %+v\nstderr:\n%s", servers, results, proc.stderr)
		}
	}
	if calls := readCalls(t, logPath); len(calls) != 1 {
		t.Errorf("the server saw %d calls, want 1", len(calls))
	}
}
