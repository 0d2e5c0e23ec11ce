package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

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
		row.AddFailure(wfb.KindWorkflowNotUsed, fmt.Sprintf("the arm expects %s, and the agent's output showed no tool calls wfb could read: its use of the workflow is not measured",
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
	row.AddFailure(wfb.KindWorkflowNotUsed, fmt.Sprintf("the session ended without a call matching %s (expect_tools) that did not fail; it called %s",
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
