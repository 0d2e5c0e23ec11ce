package agent

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/wfbench/wfb/store"
)

// Tool names as wfb counts them, one vocabulary for every agent: a
// built-in tool as the agent names it in its output (Claude Code's Write,
// Codex's command_execution, Gemini CLI's write_file), an MCP server's tool
// as mcp__SERVER__TOOL (Claude Code's own spelling, which Codex and Gemini
// CLI report as a server and a tool), and a skill's use as skill:NAME.
const (
	mcpToolPrefix = "mcp__"
	skillPrefix   = "skill:"
)

// mcpToolName is the counted name of tool on an MCP server.
func mcpToolName(server, tool string) string { return mcpToolPrefix + server + "__" + tool }

// maxToolNames bounds the distinct names one session's count keeps: the
// agent controls them. Further names are counted under otherTools.
const (
	maxToolNames = 256
	otherTools   = "(other tools)"
	maxCallIDs   = 1 << 16
)

// Tools counts a session's tool calls by name, as its agent's output
// shows them. measured says the output was read as a stream of events at
// all (an init event was seen): only then is a count of zero a
// measurement.
type Tools struct {
	measured bool
	total    int64
	calls    map[string]int64
	ids      map[string]string // calls counted, by the agent's id (an agent may show one twice), to their names
	// failed counts, by name, the calls whose result the agent reported
	// as an error (refused, unknown, failed): called, yet not used.
	failed    map[string]int64
	failedIDs map[string]bool
}

// failedCall notes that the call of id ended in an error (once per id).
func (c *Tools) failedCall(id string) {
	name, ok := c.ids[id]
	if !ok || c.failedIDs[id] {
		return
	}
	if c.failed == nil {
		c.failed, c.failedIDs = map[string]int64{}, map[string]bool{}
	}
	c.failedIDs[id] = true
	c.failed[name]++
}

// Used reports whether a tool name was called at least once without its
// result being an error.
func (c *Tools) Used(name string) bool { return c.calls[name] > c.failed[name] }

// call counts one call of name, once per id ("" counts every time).
func (c *Tools) call(id, name string) {
	if c.ids == nil {
		c.ids = map[string]string{}
	}
	if _, seen := c.ids[id]; seen && id != "" {
		return
	}
	if c.calls == nil {
		c.calls = map[string]int64{}
	}
	name = store.ClipToolName(strings.TrimSpace(name))
	if _, ok := c.calls[name]; !ok && len(c.calls) >= maxToolNames {
		name = otherTools
	}
	if id != "" && len(c.ids) < maxCallIDs {
		c.ids[id] = name
	}
	c.calls[name]++
	c.total++
}

// Record puts the count in the row: ToolCalls and ToolUses when the output
// was read, both left unmeasured when it was not.
func (c *Tools) Record(row *store.Result) {
	if !c.measured {
		return
	}
	total := c.total
	row.ToolCalls = &total
	row.ToolUses = nil
	for _, name := range slices.Sorted(maps.Keys(c.calls)) {
		row.ToolUses = append(row.ToolUses, store.ToolUse{Tool: name, Calls: c.calls[name]})
	}
}

// skillName is the name of the skill a skill tool's input invokes, or "".
func skillName(input json.RawMessage, fields ...string) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, f := range fields {
		var s string
		if json.Unmarshal(in[f], &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
