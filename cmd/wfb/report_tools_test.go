package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// toolsFixture is one run of two arms: with-mcp called its MCP tool in
// two of its three attempts (one workflow-not-used, one not measured, one
// named by a hostile agent), baseline only built-in tools.
func toolsFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close()
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "r1", Label: "tools", Kind: "run", StartedAt: start, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	n := func(v int64) *int64 { return &v }
	for i, a := range []struct {
		arm, kind string
		calls     *int64
		uses      []store.ToolUse
	}{
		{"with-mcp", "", n(3), []store.ToolUse{{Tool: "mcp__docs__search", Calls: 2}, {Tool: "skill:review", Calls: 1}}},
		{"with-mcp", "", n(2), []store.ToolUse{{Tool: "mcp__docs__search", Calls: 1}, {Tool: "x\x1b]52;c;aGk=\x07<script>", Calls: 1}}},
		{"with-mcp", wfb.KindWorkflowNotUsed, n(1), []store.ToolUse{{Tool: "Read", Calls: 1}}},
		{"with-mcp", "session-error", nil, nil},
		{"baseline", "", n(2), []store.ToolUse{{Tool: "Read", Calls: 2}}},
		{"baseline", "", n(0), nil},
	} {
		r := store.Result{RunID: "r1", AttemptID: fmt.Sprintf("a%d", i), Task: "t1", Arm: a.arm, Rep: i, Attempt: 1,
			Agent: "stand-in", Sandbox: "host-unsafe", StartedAt: start.Add(time.Duration(i) * time.Minute),
			OK: a.kind == "", ErrorKind: a.kind, ProcessState: wfb.StateExited, ToolCalls: a.calls, ToolUses: a.uses}
		if err := db.InsertResult(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestReportDiffAndExportShowToolUse stops the commands from leaving out
// the evidence that an arm's MCP server and skill were used: wfb report,
// wfb diff and wfb export each show it, an unmeasured attempt as not
// measured, and none lets a tool name's escapes reach the terminal.
func TestReportDiffAndExportShowToolUse(t *testing.T) {
	path := toolsFixture(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", "--format", "table"}, []string{"tool use per arm", "mcp__docs__search", "2/3", "1 of 4 attempts workflow-not-used",
			"not measured for 1 of 4 attempts", "x␛]52;c;aGk=␇<script>"}},
		{[]string{"report", "--format", "json"}, []string{`"tool_calls_measured_n": 3`, `{"tool": "mcp__docs__search", "attempts_using": 2, "calls": 3}`}},
		{[]string{"report", "--format", "markdown"}, []string{"&lt;script&gt;", "1/2"}},
		{[]string{"diff", "arm=baseline", "arm=with-mcp", "--format", "table"}, []string{"tool use, A → B", "0/2 ×0", "2/3 ×3", "+66.7pp"}},
		{[]string{"export", "r1", "--format", "jsonl"}, []string{`"tool_calls":0,`, `"tool_uses":"{}"`, `"tool_calls":null,`}},
	} {
		out, errOut, code := wfbCmd(t, append(c.args, "--db", path)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", c.args, w, out)
			}
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%v: a tool name's controls reach the terminal:\n%q", c.args, out)
		}
	}
}
