package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// mcpServerBin is the pinned MCP server (npm
// @modelcontextprotocol/server-everything): its tools echo {message}
// ("Echo: MESSAGE") and get-env (its whole environment as JSON).
func mcpServerBin(t *testing.T) string {
	t.Helper()
	bin, _ := installed(t, "mcp-server-everything")
	return bin
}

// useSkill is the scripted tool call by which c's model uses the skill
// name: Claude Code's Skill tool, Gemini CLI's activate_skill; Codex has no
// skill tool, its model reads the skill's file, which wfb counts as the
// skill's use.
func useSkill(c cli, name string) provider.Tool {
	switch c.agent {
	case bench.AgentCodex:
		return provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": `cat "$CODEX_HOME/skills/` + name + `/SKILL.md"`}}
	case bench.AgentGemini:
		return provider.Tool{Name: "activate_skill", Input: map[string]any{"name": name}}
	case bench.AgentOpencode:
		return provider.Tool{Name: "skill", Input: map[string]any{"name": name}}
	case bench.AgentQwen:
		return provider.Tool{Name: "skill", Input: map[string]any{"skill": name}}
	}
	return provider.Tool{Name: "Skill", Input: map[string]any{"skill": name}}
}

// offered is how the everything server's echo tool appears in c's request
// to the model: Claude Code lists mcp__SERVER__TOOL (deferred behind its
// tool search, by name), Codex a namespace mcp__SERVER holding the tools,
// Gemini CLI a function mcp_SERVER_TOOL.
func offered(c cli) string {
	switch c.agent {
	case bench.AgentCodex:
		return `"mcp__everything"`
	case bench.AgentGemini:
		return "mcp_everything_echo"
	case bench.AgentOpencode:
		return `"everything_echo"`
	}
	return "mcp__everything__echo"
}

// opencodeRipgrep is a kit file that gives opencode ripgrep where it looks
// for one after PATH (~/.cache/opencode/bin/rg): its skill tool (and grep,
// glob) runs rg, and without one on the sessions' PATH opencode 1.18 goes
// to fetch it from GitHub into the session's fresh HOME, every session,
// and fails offline ("ripgrep execution failed"). The machine's rg when it
// has one, else the static rg Qwen Code's npm package ships (its exec bit
// is missing there).
func opencodeRipgrep(t *testing.T) bench.Placement {
	t.Helper()
	src, err := exec.LookPath("rg")
	if err != nil {
		qwen, _ := installed(t, "qwen")
		src = filepath.Join(filepath.Dir(mustResolve(t, qwen)), "vendor", "ripgrep", "x64-linux", "rg")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("no ripgrep to give opencode: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "rg")
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bench.Placement{From: dst, Into: bench.PlaceHome, Path: ".cache/opencode/bin/rg"}
}

func mustResolve(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// skillDir makes a skill directory, NAME/SKILL.md with front matter, whose
// body is body; any uid may read it.
func skillDir(t *testing.T, name, body string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "---\nname: " + name + "\ndescription: How to review a change in this repository. Use it before any review.\n---\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// everything is the kit's MCP server: the pinned server-everything, with
// one literal variable and one secret (from_env, its value resolved as a
// sweep resolves it).
func everything(bin, literal, secret string) bench.MCPServer {
	return bench.MCPServer{
		Name: "everything", Command: bin, Args: []string{"stdio"},
		Env: []bench.EnvVar{
			{Name: "PLAIN_SETTING", Value: literal, Literal: true},
			{Name: "SECRET_TOKEN", FromEnv: "WFB_CONFORMANCE_SECRET", Value: secret},
		},
	}
}

// TestARealCLIUsesAnArmsMCPServerAndSkillInEveryKernelSandbox stops an
// arm's MCP server or skill from silently not reaching a real CLI — a
// config key the CLI ignores, a server its sandbox cannot start, a
// permission it is never given, a skill installed where the CLI does not
// look — and their use from being miscounted: each CLI, under bwrap and
// Landlock, calls the server's echo and get-env and uses the skill; the
// answers reach the provider's next request, the row counts each call by
// wfb's name and meets the arm's expect_tools, and the server's secret,
// which get-env puts in the agent's output, is nowhere in the results
// file.
func TestARealCLIUsesAnArmsMCPServerAndSkillInEveryKernelSandbox(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		for _, backend := range []string{sandbox.Bwrap, sandbox.Landlock} {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				c := require(t, c)
				server := mcpServerBin(t)
				marker, literal := "echo-"+randomHex(t), "literal-"+randomHex(t)
				secret, body := "mcpsecret"+randomHex(t), "SKILL-BODY-"+randomHex(t)
				replies := []provider.Reply{
					{Text: "using the kit", Tools: []provider.Tool{
						{Name: "mcp__everything__echo", Input: map[string]any{"message": marker}},
						{Name: "mcp__everything__get-env", Input: map[string]any{}},
						useSkill(c, "review"),
					}, Usage: provider.FullUsage(900, 60, 0, 0)},
					{Text: "done", Usage: provider.FullUsage(1100, 12, 0, 0)},
				}
				r := newRig(t, &provider.Script{Replies: replies})
				kernelBackend(t, backend, r.workspace)
				start := time.Now()
				row := r.run(t, r.cell(c, func(cell *runner.Cell) {
					cell.Sandbox, cell.Prompt = backend, "Review source.ts with your tools."
					cell.Timeout = 2 * time.Minute
					cell.Kit = bench.Kit{
						MCPServers:  []bench.MCPServer{everything(server, literal, secret)},
						Skills:      []string{skillDir(t, "review", body)},
						ExpectTools: []string{"mcp__everything__echo", "skill:review"},
					}
					if c.agent == bench.AgentOpencode {
						cell.Kit.Files = append(cell.Kit.Files, opencodeRipgrep(t))
					}
				}))
				elapsed := time.Since(start)
				requireOK(t, row)
				turns := modelTurns(r.p)
				if len(turns) != len(replies) {
					t.Fatalf("%d model requests, want %d (the script was not followed)", len(turns), len(replies))
				}
				first, next := string(turns[0].RawBody), string(turns[1].RawBody)
				if strings.Contains(first, secret) {
					t.Fatal("the secret reached the provider before any tool ran; the checks below would prove nothing")
				}
				for what, s := range map[string]string{
					"the echo's answer":                  "Echo: " + marker,
					"the server's literal variable":      literal,
					"the server's secret (from get-env)": secret,
					"the skill's body":                   body,
				} {
					if !strings.Contains(next, s) {
						t.Errorf("%s is not in the request after the tool calls", what)
					}
				}
				wantUses := []store.ToolUse{{Tool: "mcp__everything__echo", Calls: 1}, {Tool: "mcp__everything__get-env", Calls: 1}, {Tool: "skill:review", Calls: 1}}
				if diff := cmp.Diff(wantUses, row.ToolUses); diff != "" {
					t.Errorf("tool uses (-want +got):\n%s", diff)
				}
				if row.ToolCalls == nil || *row.ToolCalls != 3 {
					t.Errorf("tool calls %s, want 3", deref(row.ToolCalls))
				}
				if diff := cmp.Diff(wantTokens(c, served(t, replies...), 0), rowTokens(row)); diff != "" {
					t.Errorf("tokens (-want +got):\n%s", diff)
				}
				if c.agent == bench.AgentClaude && (row.PermissionDenials == nil || *row.PermissionDenials != 0) {
					t.Errorf("permission denials %s, want a measured 0", deref(row.PermissionDenials))
				}
				if !strings.Contains(row.StdoutTail, "SECRET_TOKEN") {
					t.Errorf("the agent's recorded output does not show get-env's answer; the results-file check below proves less: %s", clip(row.StdoutTail))
				}
				for _, leak := range secretsInResultsFile(t, r, secret) {
					t.Error(leak)
				}
				t.Logf("%s under %s: %s", c.name, backend, elapsed.Round(time.Millisecond))
			})
		}
	}
}

// TestAnArmWhoseRealCLINeverCallsItsMCPServerIsWorkflowNotUsed stops an
// arm whose agent was given an MCP server and ignored it from passing as a
// use of its workflow: the server's tools reach the model, the session
// ends ok having called only a built-in tool, and the row is
// workflow-not-used with the built-in counted. One backend (host-unsafe):
// the kernel sandboxes are the other test's.
func TestAnArmWhoseRealCLINeverCallsItsMCPServerIsWorkflowNotUsed(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			server := mcpServerBin(t)
			replies := []provider.Reply{
				{Text: "looking around", Tools: []provider.Tool{c.harmless}, Usage: provider.FullUsage(300, 20, 0, 0)},
				{Text: "done", Usage: provider.FullUsage(400, 8, 0, 0)},
			}
			r := newRig(t, &provider.Script{Replies: replies})
			start := time.Now()
			row := r.run(t, r.cell(c, func(cell *runner.Cell) {
				cell.Timeout = 2 * time.Minute
				cell.Kit = bench.Kit{
					MCPServers:  []bench.MCPServer{everything(server, "literal", "mcpsecret"+randomHex(t))},
					ExpectTools: []string{"mcp__everything__*"},
				}
			}))
			elapsed := time.Since(start)
			if row.OK || row.ErrorKind != wfb.KindWorkflowNotUsed {
				t.Fatalf("ok %v kind %q (%s), want workflow-not-used\nstdout: %s", row.OK, row.ErrorKind, row.ErrorDetail, clip(row.StdoutTail))
			}
			// The server was there to use: its tools reached the model.
			if turns := modelTurns(r.p); len(turns) == 0 || !strings.Contains(string(turns[0].RawBody), offered(c)) {
				t.Errorf("the first request does not offer %s: the arm's server never reached the agent, and the check proves less", offered(c))
			}
			if !strings.Contains(row.ErrorDetail, "mcp__everything__*") {
				t.Errorf("detail %q does not name the unmet expectation", row.ErrorDetail)
			}
			if row.ToolCalls == nil || *row.ToolCalls != 1 || len(row.ToolUses) != 1 || strings.HasPrefix(row.ToolUses[0].Tool, "mcp__") {
				t.Errorf("tool calls %s %v, want the one built-in call counted", deref(row.ToolCalls), row.ToolUses)
			}
			if diff := cmp.Diff(wantTokens(c, served(t, replies...), 0), rowTokens(row)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			t.Logf("%s: %s: %s", c.name, elapsed.Round(time.Millisecond), row.ErrorDetail)
		})
	}
}
