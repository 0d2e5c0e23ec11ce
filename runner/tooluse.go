package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
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

// toolCounter counts a session's tool calls by name, as its agent's output
// shows them. measured says the output was read as a stream of events at
// all (an init event was seen): only then is a count of zero a
// measurement.
type toolCounter struct {
	measured bool
	total    int64
	calls    map[string]int64
	ids      map[string]bool // calls counted, by the agent's id: an agent may show one twice
}

// toolCounting is an agentOutput that counts the agent's tool calls.
type toolCounting interface {
	toolCounts() *toolCounter
}

// call counts one call of name, once per id ("" counts every time).
func (c *toolCounter) call(id, name string) {
	if id != "" {
		if c.ids == nil {
			c.ids = map[string]bool{}
		}
		if c.ids[id] {
			return
		}
		if len(c.ids) < maxCallIDs {
			c.ids[id] = true
		}
	}
	if c.calls == nil {
		c.calls = map[string]int64{}
	}
	name = wfb.Clip(strings.TrimSpace(name), store.MaxToolNameBytes)
	if name == "" {
		name = "(unnamed)"
	}
	if _, ok := c.calls[name]; !ok && len(c.calls) >= maxToolNames {
		name = otherTools
	}
	c.calls[name]++
	c.total++
}

// record puts the count in the row: ToolCalls and ToolUses when the output
// was read, both left unmeasured when it was not.
func (c *toolCounter) record(row *store.Result) {
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

// checkExpectations marks a session that ended ok without calling what its
// arm expects workflow-not-used: each pattern needs at least one call whose
// name it matches. A session whose tool calls could not be read cannot
// show its workflow was used, and is marked so too.
func checkExpectations(row *store.Result, expect []string) {
	if !row.OK || len(expect) == 0 {
		return
	}
	if row.ToolCalls == nil {
		addFailure(row, wfb.KindWorkflowNotUsed, fmt.Sprintf("the arm expects %s, and the agent's output showed no tool calls wfb could read: its use of the workflow is not measured",
			strings.Join(expect, ", ")))
		return
	}
	var missing []string
	for _, p := range expect {
		if !slices.ContainsFunc(row.ToolUses, func(u store.ToolUse) bool { return bench.MatchTool(p, u.Tool) }) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	addFailure(row, wfb.KindWorkflowNotUsed, fmt.Sprintf("the session ended without a call matching %s (expect_tools); it called %s",
		strings.Join(missing, ", "), describeToolUses(row.ToolUses)))
}

// describeToolUses is a row's tool calls in a line: "Read ×2, Write ×1", or
// "no tool".
func describeToolUses(uses []store.ToolUse) string {
	if len(uses) == 0 {
		return "no tool"
	}
	parts := make([]string, 0, len(uses))
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("%s ×%d", u.Tool, u.Calls))
	}
	return strings.Join(parts, ", ")
}
