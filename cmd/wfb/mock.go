package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wfbench/wfb/mock/agent"
	"github.com/wfbench/wfb/mock/mcpserver"
)

func newMockCmd(s *Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Stand-ins for the outside world: a scripted provider, a stand-in agent and MCP server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newMockServeCmd(s), newMockAgentCmd(s), newMockMCPServerCmd(s), newMockRecordCmd(s))
	return cmd
}

// newMockAgentCmd is `wfb mock agent`: the stand-in agent CLI. Every
// argument after "agent" is the agent's own (Claude Code's flags), so cobra
// parses none of them.
func newMockAgentCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "agent -p [flags] [PROMPT]",
		Short: "A stand-in agent CLI with Claude Code's interface, talking to $ANTHROPIC_BASE_URL",
		Long: `A stand-in agent CLI with Claude Code's interface, for offline tests and dry runs.

It reads the prompt from the argument or stdin, sends it to $ANTHROPIC_BASE_URL
(e.g. a 'wfb mock serve' provider) with $ANTHROPIC_API_KEY, runs the Write, Read
and Bash tools the reply asks for, and prints a result shaped like Claude Code's.

Like Claude Code it attaches MCP servers (--mcp-config FILE-or-JSON, repeatable:
{"mcpServers": {"NAME": {"command": ..., "args": [...], "env": {...}}}} or
{"type": "http", "url": ...}) and offers their tools as mcp__NAME__TOOL; the
init event lists each server as connected or failed, and the servers are
stopped when the session ends. Skills in $HOME/.claude/skills/NAME/SKILL.md or
./.claude/skills/NAME/SKILL.md are offered through a Skill tool. 'wfb mock
mcp-server' is a stand-in MCP server to attach.
Run 'wfb mock agent --help' for its flags.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := agent.Main(cmd.Context(), args, s.In, s.Out, s.ErrOut, s.Getenv)
			if code == 0 {
				return nil
			}
			return &exitCodeError{code: code}
		},
	}
}

// newMockMCPServerCmd is `wfb mock mcp-server`: the stand-in MCP server.
// Like the stand-in agent it parses its own flags.
func newMockMCPServerCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp-server [--log FILE] [--http ADDR]",
		Short: "A stand-in MCP server (find_symbol, echo) over stdio or streamable HTTP",
		Long: `A stand-in MCP server for offline tests and dry runs of arms that attach MCP
servers. It serves the Model Context Protocol on stdin/stdout (or, with
--http ADDR, streamable HTTP at http://ADDR/) until the client closes the
session, and works on its working directory — the agent's workspace.

Its tools are deterministic:
  find_symbol {name}  the lines where a function, class, def or func named
                      name is defined in the text files under the working
                      directory, as "sum.js:2: export function sum(a, b) {",
                      or "no definition of NAME found" (a bounded walk that
                      skips .git and node_modules)
  echo {text}         "Echo: " + text

--log FILE appends one JSON line per tool call ({"tool", "arguments", "pid"})
to FILE, a witness of what the agent called.

An agent attaches it with an MCP config such as
  {"mcpServers": {"standin": {"command": "wfb", "args": ["mock", "mcp-server"]}}}
and sees its tools as mcp__standin__find_symbol and mcp__standin__echo.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := mcpserver.Main(cmd.Context(), args, s.In, s.Out, s.ErrOut, s.Getenv)
			if code == 0 {
				return nil
			}
			return &exitCodeError{code: code}
		},
	}
}

// exitCodeError carries the exit code of a command that has already printed
// everything it had to say (the stand-in agent): it wraps errNotOK so that
// Main prints nothing more, and exitCode returns code as it is.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
func (e *exitCodeError) Unwrap() error { return errNotOK }
