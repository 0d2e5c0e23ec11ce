package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// benchScript drives any of the agents: text only, so no tool name of one
// CLI is asked of another.
const benchScript = `replies:
  - text: "hello from one script"
    usage: {input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: 4000, cache_creation_input_tokens: 500}
default:
  text: "done"
  usage: {input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// TestABenchWithEveryRealCLIRunsOfflineAgainstOneScript stops a bench that
// compares vendors from needing the vendors: one mock script, served per
// cell, drives a Claude Code, a Codex and a Gemini CLI arm through `wfb
// run`'s sweep (metered, as by default), and every row is ok, names its
// agent and version, and holds what the mock served in its agent's
// semantics, agreeing with the wire.
func TestABenchWithEveryRealCLIRunsOfflineAgainstOneScript(t *testing.T) {
	t.Parallel()
	var arms []string
	byArm := map[string]cli{}
	for _, c := range clis {
		c := require(t, c)
		arms = append(arms, fmt.Sprintf("  - {id: %s-arm, agent: %s, agent_bin: %s, model: %s}", c.name, c.agent, c.bin, c.model))
		byArm[c.name+"-arm"] = c
	}
	rows := runBench(t, "sandbox: host-unsafe\n", benchScript, arms)
	if len(rows) != len(clis) {
		t.Fatalf("%d rows, want %d", len(rows), len(clis))
	}
	served := served(t, provider.Reply{Usage: provider.FullUsage(1200, 30, 4000, 500)})
	for _, row := range rows {
		c, ok := byArm[row.Arm]
		if !ok {
			t.Fatalf("a row of arm %q", row.Arm)
		}
		t.Run(c.name, func(t *testing.T) {
			requireOK(t, row)
			if row.Agent != c.agent || row.AgentVersion != c.version || row.Model != c.model {
				t.Errorf("agent %q version %q model %q, want %q %q %q", row.Agent, row.AgentVersion, row.Model, c.agent, c.version, c.model)
			}
			if diff := cmp.Diff(wantTokens(c, served, 0), rowTokens(row)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			if row.UsageSource != wfb.UsageMetered || row.UsageCheck != "agree" {
				t.Errorf("usage source %q check %q, want metered, agree", row.UsageSource, row.UsageCheck)
			}
			if row.CostUSD == nil {
				t.Errorf("no cost for a priced model (%s)", row.ErrorDetail)
			}
		})
	}
}

// runBench writes a bench of one task (top holding its top-level fields
// beyond the usual) with the arms given and the mock script, runs it as
// `wfb run` does (metered) and returns its rows, the run complete.
func runBench(t *testing.T, top, script string, arms []string) []store.Result {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-conformance-bench-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"ws/source.ts": "export const answer = 42;\n",
		"replies.yaml": script,
		"bench.yaml": "runs: 1\nworkers: 1\ntimeout: 3m\n" + top + "provider: {mock: replies.yaml}\n" +
			"tasks: [{id: hello, workspace: ws, prompt: Say hello.}]\narms:\n" + strings.Join(arms, "\n") + "\n",
	}
	return runBenchFiles(t, dir, files)
}

// runBenchFiles writes files (bench.yaml and what it names) into dir, a
// directory any uid may traverse, runs the bench as `wfb run` does
// (metered) and returns its rows, the run complete.
func runBenchFiles(t *testing.T, dir string, files map[string]string) []store.Result {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bench.Load(filepath.Join(dir, "bench.yaml"), func(path string, data []byte) error {
		_, err := provider.ParseScript(path, data)
		return err
	})
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	sw, err := runner.NewSweep(ctx, runner.SweepOptions{
		Bench: b, DB: db, Harness: "conformance", TempDir: dir,
		Getenv:     func(string) string { return "" },
		StartMeter: func(db *store.DB) (runner.Meter, error) { return meterstore.Start(db) },
		StartMock: func(path string) (string, func(), error) {
			sc, err := provider.LoadScript(path)
			if err != nil {
				return "", nil, err
			}
			return provider.Serving(sc)
		},
		AgentEnv: map[string]string{"CLAUDE_CODE_MAX_RETRIES": "1"},
	})
	if err != nil {
		t.Fatalf("NewSweep: %v", err)
	}
	defer sw.Close()
	sum, err := sw.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := db.Results(ctx, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != wfb.RunComplete {
		t.Fatalf("run %s, want complete", sum.Status)
	}
	return rows
}

// kitScript calls the server's echo only where a request offers it: the
// arm given the server and the arm without it share the script.
const kitScript = `replies:
  - match: {offers: mcp__everything__echo}
    tools: [{name: mcp__everything__echo, input: {message: from-the-bench}}]
    usage: {input_tokens: 900, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
default:
  text: "done"
  usage: {input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`

// TestABenchComparesAnArmWithAnMCPServerAgainstOneWithoutUnderBwrap is the
// issue's whole claim through the bench file, for every real CLI: under
// bwrap, an arm given the pinned MCP server (and expecting its echo) calls
// it and is seen calling it, the same agent without it calls nothing, one
// script driving both. Claude Code defers MCP tools out of its request's
// tools (ToolSearch) unless ENABLE_TOOL_SEARCH=false, and Qwen Code unless
// its settings turn tools.toolSearch off, as the manual says for a script
// that matches on what a request offers.
func TestABenchComparesAnArmWithAnMCPServerAgainstOneWithoutUnderBwrap(t *testing.T) {
	t.Parallel()
	var arms []string
	byArm := map[string]cli{}
	server := ""
	for _, c := range clis {
		c := require(t, c)
		if server == "" {
			server = mcpServerBin(t)
		}
		env := ""
		if c.agent == bench.AgentClaude {
			env = `, env: {ENABLE_TOOL_SEARCH: {value: "false"}}`
		}
		if c.agent == bench.AgentQwen {
			// Qwen Code too defers MCP tools behind its tool_search.
			env = `, settings: {tools: {toolSearch: {enabled: false}}}`
		}
		arms = append(arms,
			fmt.Sprintf("  - {id: %s-mcp, agent: %s, agent_bin: %s, model: %s%s, expect_tools: [mcp__everything__echo], mcp_servers: {everything: {command: %s, args: [stdio]}}}",
				c.name, c.agent, c.bin, c.model, env, server),
			fmt.Sprintf("  - {id: %s-base, agent: %s, agent_bin: %s, model: %s%s}", c.name, c.agent, c.bin, c.model, env))
		byArm[c.name+"-mcp"], byArm[c.name+"-base"] = c, c
	}
	kernelBackend(t, sandbox.Bwrap, t.TempDir())
	rows := runBench(t, "sandbox: bwrap\n", kitScript, arms)
	if len(rows) != 2*len(clis) {
		t.Fatalf("%d rows, want %d", len(rows), 2*len(clis))
	}
	for _, row := range rows {
		if _, ok := byArm[row.Arm]; !ok {
			t.Fatalf("a row of arm %q", row.Arm)
		}
		t.Run(row.Arm, func(t *testing.T) {
			requireOK(t, row)
			echo := int64(0)
			for _, u := range row.ToolUses {
				if u.Tool == "mcp__everything__echo" {
					echo = u.Calls
				}
			}
			want := int64(0)
			if strings.HasSuffix(row.Arm, "-mcp") {
				want = 1
			}
			if row.ToolCalls == nil || echo != want {
				t.Errorf("tool calls %v, uses %v: want mcp__everything__echo ×%d", row.ToolCalls, row.ToolUses, want)
			}
		})
	}
}
