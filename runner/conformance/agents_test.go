package conformance

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
)

// cli is one real agent CLI under test, and how a script speaks to it.
type cli struct {
	name    string // the binary's name in .ci/agent-versions
	agent   string // bench.AgentClaude, AgentCodex, AgentGemini, AgentOpencode or AgentQwen
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
	// hungTimeouts are wfb's timeouts in the hung-provider test, shortest
	// first: the first is enough for the CLI to start and make its first
	// turn on a quiet machine, the last on a loaded one.
	hungTimeouts []time.Duration
	// retryHint is the retry_after_ms the mock's scripted failures carry
	// for a CLI whose retries of a failing provider no setting bounds
	// (opencode 5, Qwen Code 6, from 1.5-2 s doubling: 80 s for one 529):
	// the hint makes them quick where the CLI honours it; 0 for a CLI wfb
	// bounds itself.
	retryHint int
	// attempts is how many requests such a CLI makes for a request that
	// keeps failing (0: wfb bounds them, as the tests say per CLI).
	attempts int
	// slow529 says the CLI ignores the hint on a 529 (and a 502, which the
	// meter answers for a dead upstream): it retries for about 85 s, and
	// wfb's timeout is what ends the session.
	slow529 bool
}

var clis = []cli{
	{
		name: "claude", agent: bench.AgentClaude, model: "claude-sonnet-4-5",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}
		},
		// Read-only tools need no permission under acceptEdits.
		harmless: provider.Tool{Name: "Glob", Input: map[string]any{"pattern": "*.ts"}},
		// Bash needs a grant (the hung test gives one through AllowedTools).
		background:   provider.Tool{Name: "Bash", Input: map[string]any{"command": "sleep 600", "description": "start a long job", "run_in_background": true}},
		hungTimeouts: hungTimeouts,
	},
	{
		name: "codex", agent: bench.AgentCodex, model: "gpt-5-codex",
		writeFile: func(path, content string) provider.Tool {
			// A quoted heredoc delimiter: the shell expands nothing in it.
			return provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "cat > '" + path + "' <<'WFB_EOF'\n" + content + "\nWFB_EOF"}}
		},
		harmless: provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "true"}},
		// A command still running after yield_time_ms is left running in
		// the background, and the turn goes on.
		background:   provider.Tool{Name: "exec_command", Input: map[string]any{"cmd": "sleep 600", "yield_time_ms": 250}},
		hungTimeouts: hungTimeouts,
	},
	{
		name: "gemini", agent: bench.AgentGemini, model: "gemini-2.5-pro",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "write_file", Input: map[string]any{"file_path": path, "content": content}}
		},
		harmless:   provider.Tool{Name: "glob", Input: map[string]any{"pattern": "*.ts"}},
		background: provider.Tool{Name: "run_shell_command", Input: map[string]any{"command": "sleep 600", "description": "start a long job", "is_background": true}},
		// A Node program: 4-20 s to start on a loaded 2-core machine.
		hungTimeouts: []time.Duration{10 * time.Second, 45 * time.Second},
	},
	{
		name: "opencode", agent: bench.AgentOpencode, model: "gpt-4.1",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "write", Input: map[string]any{"filePath": path, "content": content}}
		},
		// opencode's rules let bash run; its glob would fetch ripgrep from
		// GitHub when none is on PATH.
		harmless: provider.Tool{Name: "bash", Input: map[string]any{"command": "true", "description": "check nothing"}},
		// A job the shell leaves running; its output goes nowhere, so the
		// call returns.
		background: provider.Tool{Name: "bash", Input: map[string]any{"command": "sleep 600 >/dev/null 2>&1 &", "description": "start a long job"}},
		// 6-16 s from start to its first request on a loaded machine.
		hungTimeouts: []time.Duration{15 * time.Second, 30 * time.Second},
		retryHint:    10, attempts: 6,
	},
	{
		name: "qwen", agent: bench.AgentQwen, model: "gpt-4.1-mini",
		writeFile: func(path, content string) provider.Tool {
			return provider.Tool{Name: "write_file", Input: map[string]any{"file_path": path, "content": content}}
		},
		harmless:     provider.Tool{Name: "glob", Input: map[string]any{"pattern": "*.ts"}},
		background:   provider.Tool{Name: "run_shell_command", Input: map[string]any{"command": "sleep 600", "is_background": true}},
		hungTimeouts: []time.Duration{10 * time.Second, 20 * time.Second},
		retryHint:    10, attempts: 7, slow529: true,
	},
}

// chatCLI says c speaks Chat Completions (opencode, Qwen Code).
func chatCLI(c cli) bool { return c.agent == bench.AgentOpencode || c.agent == bench.AgentQwen }

// pin is one line of .ci/agent-versions.
type pin struct {
	pkg, version string
	// envVar names the variable that gives the binary's path (var=).
	envVar string
	// checkPackage says the version is checked in the installed package's
	// package.json, the binary having no --version (check=package).
	checkPackage bool
}

// pinned reads .ci/agent-versions: binary name → its pin.
func pinned(t *testing.T) map[string]pin {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", ".ci", "agent-versions"))
	if err != nil {
		t.Fatalf("read the pinned versions: %v", err)
	}
	defer f.Close()
	out := map[string]pin{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf(".ci/agent-versions:%d: want <npm package> <version> <binary> [option...], got %q", n, line)
		}
		p := pin{pkg: f[0], version: f[1], envVar: "WFB_" + strings.ToUpper(strings.ReplaceAll(f[2], "-", "_")) + "_BIN"}
		for _, opt := range f[3:] {
			switch k, v, _ := strings.Cut(opt, "="); {
			case k == "var" && v != "":
				p.envVar = v
			case opt == "check=package":
				p.checkPackage = true
			default:
				t.Fatalf(".ci/agent-versions:%d: unknown option %q", n, opt)
			}
		}
		out[f[2]] = p
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
	c.bin, c.version = installed(t, c.name)
	return c
}

// installed finds the binary .ci/agent-versions pins under name — through
// its variable, else in the cache — and checks its version; it skips the
// test when the binary is not installed (fails with WFB_REQUIRE_AGENTS=1),
// and under -short.
func installed(t *testing.T, name string) (bin, version string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipped under -short: the real %s CLI; go test without -short runs it (CI does)", name)
	}
	p, ok := pinned(t)[name]
	if !ok {
		t.Fatalf(".ci/agent-versions pins no %s", name)
	}
	pkgDir := filepath.Join(agentCache(), strings.ReplaceAll(p.pkg, "/", "+")+"@"+p.version, "node_modules")
	bin = os.Getenv(p.envVar)
	if bin == "" {
		candidates := []string{filepath.Join(pkgDir, ".bin", name)}
		// Codex's .bin entry is a Node wrapper around a native binary.
		native, _ := filepath.Glob(filepath.Join(pkgDir, "@openai", "codex-*", "vendor", "*", "bin", name))
		candidates = append(native, candidates...)
		for _, c := range candidates {
			if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
				bin = c
				break
			}
		}
	}
	if bin == "" {
		msg := name + " " + p.version + " is not installed: run .ci/install-agents.sh (cache " + agentCache() + ") or set " + p.envVar
		if os.Getenv("WFB_REQUIRE_AGENTS") == "1" {
			t.Fatalf("%s (WFB_REQUIRE_AGENTS=1)", msg)
		}
		gate.Skipf(t, "WFB_REQUIRE_AGENTS", "%s; WFB_REQUIRE_AGENTS=1 makes this a failure", msg)
	}
	if p.checkPackage {
		if got := packageVersion(t, bin, p.pkg); got != p.version {
			t.Fatalf("%s is %s %q; .ci/agent-versions pins %s", bin, p.pkg, got, p.version)
		}
		return bin, p.version
	}
	out, err := versionOf(bin)
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if !strings.Contains(string(out), p.version) {
		t.Fatalf("%s --version says %q; .ci/agent-versions pins %s", bin, strings.TrimSpace(string(out)), p.version)
	}
	return bin, p.version
}

// versionOf is the output of `bin --version`, run once per binary and test
// binary: the binary does not change while the tests run, and a Node CLI
// takes seconds to start (Gemini CLI's 1.6 s, once for each of ~25 tests).
func versionOf(bin string) ([]byte, error) {
	versions.mu.Lock()
	v := versions.of[bin]
	if v == nil {
		v = &versionProbe{}
		versions.of[bin] = v
	}
	versions.mu.Unlock()
	v.once.Do(func() { v.out, v.err = exec.Command(bin, "--version").Output() })
	return v.out, v.err
}

var versions = struct {
	mu sync.Mutex
	of map[string]*versionProbe
}{of: map[string]*versionProbe{}}

type versionProbe struct {
	once sync.Once
	out  []byte
	err  error
}

// packageVersion is the version in the package.json of pkg in the
// node_modules that holds bin (bin in its .bin or in the package itself).
func packageVersion(t *testing.T, bin, pkg string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(real); d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(pkg), "package.json"))
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		var meta struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(data, &meta); err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return meta.Version
	}
	t.Fatalf("%s lies in no node_modules", bin)
	return ""
}
