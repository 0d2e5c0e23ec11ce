package conformance

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/gate"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
)

// cli is one real agent CLI under test, and how a script speaks to it.
type cli struct {
	name    string // the binary's name in .ci/agent-versions
	agent   string // bench.AgentClaude, bench.AgentCodex or bench.AgentGemini
	binEnv  string // WFB_CLAUDE_BIN, WFB_CODEX_BIN or WFB_GEMINI_BIN
	model   string // a model the agent and wfb can price
	version string // pinned
	bin     string
	// writeFile is the scripted tool call that makes the agent write
	// content to path (an absolute path outside the workspace).
	writeFile func(path, content string) provider.Tool
	// harmless is a scripted tool call that changes nothing.
	harmless provider.Tool
	// background is a scripted tool call that leaves a long-lived process
	// running after the call returns.
	background provider.Tool
	// hungTimeout is wfb's timeout in the hung-provider test: long enough
	// for the CLI to start and make its first turn on a loaded machine.
	hungTimeout time.Duration
}

var clis = []cli{
	{
		name: "claude", agent: bench.AgentClaude, binEnv: "WFB_CLAUDE_BIN", model: "claude-sonnet-4-5",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}
		},
		// Read-only tools need no permission under acceptEdits.
		harmless: provider.Tool{Name: "Glob", Input: map[string]any{"pattern": "*.ts"}},
		// Bash needs a grant (the hung test gives one through AllowedTools).
		background:  provider.Tool{Name: "Bash", Input: map[string]any{"command": "sleep 600", "description": "start a long job", "run_in_background": true}},
		hungTimeout: hungTimeout,
	},
	{
		name: "codex", agent: bench.AgentCodex, binEnv: "WFB_CODEX_BIN", model: "gpt-5-codex",
		writeFile: func(path, content string) provider.Tool {
			// A quoted heredoc delimiter: the shell expands nothing in it.
			return provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "cat > '" + path + "' <<'WFB_EOF'\n" + content + "\nWFB_EOF"}}
		},
		harmless: provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "true"}},
		// A command still running after yield_time_ms is left running in
		// the background, and the turn goes on.
		background:  provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "sleep 600", "yield_time_ms": 250}},
		hungTimeout: hungTimeout,
	},
	{
		name: "gemini", agent: bench.AgentGemini, binEnv: "WFB_GEMINI_BIN", model: "gemini-2.5-pro",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "write_file", Input: map[string]any{"file_path": path, "content": content}}
		},
		harmless:   provider.Tool{Name: "glob", Input: map[string]any{"pattern": "*.ts"}},
		background: provider.Tool{Name: "run_shell_command", Input: map[string]any{"command": "sleep 600", "description": "start a long job", "is_background": true}},
		// A Node program: 4-20 s to start on a loaded 2-core machine.
		hungTimeout: 45 * time.Second,
	},
}

// pinned reads .ci/agent-versions: binary name → (npm package, version).
func pinned(t *testing.T) map[string][2]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", ".ci", "agent-versions"))
	if err != nil {
		t.Fatalf("read the pinned versions: %v", err)
	}
	defer f.Close()
	out := map[string][2]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf(".ci/agent-versions:%d: want <npm package> <version> <binary>, got %q", n, line)
		}
		out[f[2]] = [2]string{f[0], f[1]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// agentCache is where .ci/install-agents.sh installs; keep the two in step.
func agentCache() string {
	if c := os.Getenv("WFB_AGENT_CACHE"); c != "" {
		return c
	}
	if os.Geteuid() == 0 {
		return "/var/cache/wfb-agents"
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "wfb-agents")
}

// require returns c with its binary found and its version checked, or
// skips the test when the CLI is not installed (fails with
// WFB_REQUIRE_AGENTS=1).
func require(t *testing.T, c cli) cli {
	t.Helper()
	pin, ok := pinned(t)[c.name]
	if !ok {
		t.Fatalf(".ci/agent-versions pins no %s", c.name)
	}
	c.version = pin[1]
	bin := os.Getenv(c.binEnv)
	if bin == "" {
		dir := filepath.Join(agentCache(), strings.ReplaceAll(pin[0], "/", "+")+"@"+pin[1], "node_modules")
		candidates := []string{filepath.Join(dir, ".bin", c.name)}
		// Codex's .bin entry is a Node wrapper around a native binary.
		native, _ := filepath.Glob(filepath.Join(dir, "@openai", "codex-*", "vendor", "*", "bin", c.name))
		candidates = append(native, candidates...)
		for _, p := range candidates {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		msg := c.name + " " + c.version + " is not installed: run .ci/install-agents.sh (cache " + agentCache() + ") or set " + c.binEnv
		if os.Getenv("WFB_REQUIRE_AGENTS") == "1" {
			t.Fatalf("%s (WFB_REQUIRE_AGENTS=1)", msg)
		}
		gate.Skipf(t, "WFB_REQUIRE_AGENTS", "%s; WFB_REQUIRE_AGENTS=1 makes this a failure", msg)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if !strings.Contains(string(out), c.version) {
		t.Fatalf("%s --version says %q; .ci/agent-versions pins %s", bin, strings.TrimSpace(string(out)), c.version)
	}
	c.bin = bin
	return c
}
