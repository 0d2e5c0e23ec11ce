package runner

import (
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// What a session must be seen using decides its outcome: each pattern
// needs a call; calls that could not be read cannot show it.
func TestExpectationsNeedACallOfEachPattern(t *testing.T) {
	two := int64(2)
	uses := []store.ToolUse{{Tool: "Read", Calls: 1}, {Tool: "mcp__code__find_symbol", Calls: 1}}
	for _, tt := range []struct {
		name   string
		calls  *int64
		uses   []store.ToolUse
		expect []string
		failed string // a tool whose every call failed
		kind   string
		detail string
	}{
		{"met", &two, uses, []string{"mcp__code__*", "Read"}, "", "", ""},
		{"one missing", &two, uses, []string{"mcp__code__*", "skill:*"}, "", wfb.KindWorkflowNotUsed, "without a call matching skill:* (expect_tools) that did not fail; it called Read ×1, mcp__code__find_symbol ×1"},
		{"called but refused", &two, uses, []string{"mcp__code__*"}, "mcp__code__find_symbol", wfb.KindWorkflowNotUsed, "without a call matching mcp__code__*"},
		{"not measured", nil, nil, []string{"Read"}, "", wfb.KindWorkflowNotUsed, "no tool calls wfb could read"},
		{"nothing expected", nil, nil, nil, "", "", ""},
	} {
		row := store.Result{OK: true, ToolCalls: tt.calls, ToolUses: tt.uses}
		checkExpectations(&row, tt.expect, func(name string) bool { return name != tt.failed })
		if row.ErrorKind != tt.kind || !strings.Contains(row.ErrorDetail, tt.detail) || row.OK != (tt.kind == "") {
			t.Errorf("%s: ok=%v %s: %s; want %q containing %q", tt.name, row.OK, row.ErrorKind, row.ErrorDetail, tt.kind, tt.detail)
		}
	}
}
