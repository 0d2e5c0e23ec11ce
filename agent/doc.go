// Package agent is the place an agent CLI is known: one file per agent,
// each an Adapter — its headless command line, its private configuration
// in the session's HOME, how to ask its version, and the strict reading of
// what it prints into the row. The runner asks For an agent's adapter by
// name, gives it a Session, runs the Command (and the Probe) as processes
// of its own, and hands the agent's stdout to the adapter's Output.
//
// Adding an agent is adding its file and one line of the adapters table
// in adapter.go. Here:
//
//   - adapter.go: the Adapter, what it is given (Session, Kit) and gives
//     back (Command, Output), the version Probe, and the table of agents.
//   - claude.go: Claude Code, and wfb's stand-in, which shares its
//     interface (and the shape of its stream-json events, which Qwen Code
//     copies); codex.go: Codex CLI (`codex exec --json`); gemini.go:
//     Gemini CLI (stream-json); opencode.go: opencode (`opencode run
//     --format json`, its steps summed); qwen.go: Qwen Code (stream-json).
//     Each holds its command line, its form of an arm's kit (kit.go: what
//     they share in writing it), its event parser and its usage rules;
//     openai.go what the agents of OpenAI's APIs share: their base URL and
//     key.
//   - output.go: what the parsers share in reading JSON Lines — counting
//     what no parser can use, keeping bounded evidence, strict usage
//     counts; tools.go: tool calls counted under one vocabulary for every
//     agent (mcp__SERVER__TOOL, skill:NAME).
//   - prices.go: wfb's price table, by exact model name, for the cost of
//     agents that report none and of the metered wire.
//
// Whatever an agent prints, its Output keeps the seed's rules: exactly one
// terminal event, every usage figure present and a whole non-negative
// number or the measurement refused (never zero-filled), an unmeasured
// cost NULL, never 0.
//
// agent imports nothing of wfb's but the vocabulary (package wfb), the row
// (package store) and internal leaves: it runs no process of its own.
package agent
