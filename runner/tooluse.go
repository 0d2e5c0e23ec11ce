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
	ids      map[string]string // calls counted, by the agent's id (an agent may show one twice), to their names
	// failed counts, by name, the calls whose result the agent reported
	// as an error (refused, unknown, failed): called, yet not used.
	failed    map[string]int64
	failedIDs map[string]bool
}

// failedCall notes that the call of id ended in an error (once per id).
func (c *toolCounter) failedCall(id string) {
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

// used reports whether a tool name was called at least once without its
// result being an error.
func (c *toolCounter) used(name string) bool { return c.calls[name] > c.failed[name] }

// toolCounting is an agentOutput that counts the agent's tool calls.
type toolCounting interface {
	toolCounts() *toolCounter
}

// call counts one call of name, once per id ("" counts every time).
func (c *toolCounter) call(id, name string) {
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

// checkExpectations marks a session that ended ok without using what its
// arm expects workflow-not-used: each pattern needs at least one call whose
// name it matches and whose result was not an error (used says so; nil:
// every call counts). A session whose tool calls could not be read cannot
// show its workflow was used, and is marked so too.
func checkExpectations(row *store.Result, expect []string, used func(string) bool) {
	if !row.OK || len(expect) == 0 {
		return
	}
	if used == nil {
		used = func(string) bool { return true }
	}
	if row.ToolCalls == nil {
		addFailure(row, wfb.KindWorkflowNotUsed, fmt.Sprintf("the arm expects %s, and the agent's output showed no tool calls wfb could read: its use of the workflow is not measured",
			strings.Join(expect, ", ")))
		return
	}
	var missing []string
	for _, p := range expect {
		if !slices.ContainsFunc(row.ToolUses, func(u store.ToolUse) bool { return bench.MatchTool(p, u.Tool) && used(u.Tool) }) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	addFailure(row, wfb.KindWorkflowNotUsed, fmt.Sprintf("the session ended without a call matching %s (expect_tools) that did not fail; it called %s",
		strings.Join(missing, ", "), describeToolUses(row.ToolUses)))
}

// describeToolUses is a row's tool calls in a line: "Read ×2, Write ×1",
// the first few names only, or "no tool".
func describeToolUses(uses []store.ToolUse) string {
	if len(uses) == 0 {
		return "no tool"
	}
	const most = 12
	parts := make([]string, 0, min(len(uses), most)+1)
	for i, u := range uses {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more tools", len(uses)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", wfb.Clip(u.Tool, 64), u.Calls))
	}
	return strings.Join(parts, ", ")
}
