// Package agent is wfb's stand-in agent CLI: a small agent with Claude Code's
// command-line interface and result shapes (`wfb mock agent -p ...`). It
// talks to the provider named by $ANTHROPIC_BASE_URL, runs the tools the
// replies ask for (Write, Read, Bash) in its working directory, and reports
// usage exactly as served, priced from its own price table. A request the
// provider answers 529 is re-sent, at most --max-retries times (by default
// never), as Claude Code re-sends it.
//
// Like Claude Code it attaches the MCP servers of --mcp-config (stdio, http,
// sse): each is connected at session start, listed in the init event as
// connected or failed, and its tools are offered as mcp__SERVER__TOOL after
// the built-in ones; a call goes to the server over MCP (the official Go
// SDK) and its text comes back as the tool_result. Every MCP session is
// closed, and every server process ended, on every way out of the session.
// Skills ($HOME/.claude/skills/NAME/SKILL.md and the working directory's
// .claude/skills) are offered through a Skill tool that returns a SKILL.md.
//
// It is a product feature, not a test double of wfb's own packages: a dry run
// of a bench can use it as the agent, and the offline tests run it as a real
// process (the test binary re-executed through Main) so that the runner's
// process control, parsing and refusals are exercised end to end.
//
// This package imports nothing of wfb: it speaks to a provider over HTTP and
// to MCP servers over MCP only, so it depends on no provider code,
// mock/provider included, nor on mock/mcpserver.
package agent
