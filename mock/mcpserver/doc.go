// Package mcpserver is wfb's stand-in MCP server (`wfb mock mcp-server`): a
// small Model Context Protocol server, over stdio or streamable HTTP, whose
// tools are deterministic and work on its working directory — the agent's
// workspace. An arm that attaches MCP servers can be dry-run with it, and the
// stand-in agent's MCP client is tested against it as a real process.
//
// It is a product feature standing in for a real MCP server, not a test
// double of wfb's own packages; like mock/agent it imports nothing of wfb.
// Its tools:
//
//   - find_symbol {name}: the lines where a function, class, def or func
//     named name is defined in the text files under the working directory
//     (a bounded walk that skips .git and node_modules).
//   - echo {text}: "Echo: " + text.
//
// With --log FILE each tools/call appends one JSON line (tool, arguments,
// the server's pid) to FILE: a witness a test or a reviewer can read.
package mcpserver
