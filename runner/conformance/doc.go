// Package conformance holds wfb's conformance tests against the REAL agent
// CLIs: Claude Code (npm @anthropic-ai/claude-code), OpenAI's Codex CLI
// (npm @openai/codex), Google's Gemini CLI (npm @google/gemini-cli),
// opencode (npm opencode-ai) and Qwen Code (npm @qwen-code/qwen-code), at
// the versions pinned in .ci/agent-versions. Each test runs a real CLI
// through runner.RunCell (or a sweep) in the host-unsafe sandbox (or a
// kernel one), against wfb's mock provider, and checks the row in a real
// SQLite file.
//
// The package has no code of its own; it exists for its tests. They find
// the binaries through WFB_CLAUDE_BIN, WFB_CODEX_BIN, WFB_GEMINI_BIN,
// WFB_OPENCODE_BIN and WFB_QWEN_BIN (and the MCP server their kits attach,
// through WFB_MCP_EVERYTHING_BIN),
// else in the cache .ci/install-agents.sh fills (WFB_AGENT_CACHE, by default
// /var/cache/wfb-agents as root and ~/.cache/wfb-agents otherwise). When a
// CLI is absent its tests skip with a message, unless WFB_REQUIRE_AGENTS=1,
// which makes absence a failure (CI sets it). Under -short they all skip.
// The tests run in parallel (each has its own results file, provider and
// workspace): as many at once as go test's -parallel allows.
package conformance
