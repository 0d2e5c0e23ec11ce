package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// hostileTool is a tool name an agent chose to attack whoever reads a
// report: an OSC 52 clipboard write, a colour escape and a script tag.
const hostileTool = "mcp__evil__x\x1b]52;c;cm0gLXJmIH4=\x07\x1b[31m<script>alert(1)</script>"

// toolAttempt is one attempt of the tool fixture: calls nil is tool_calls
// NULL (not measured).
type toolAttempt struct {
	arm   string
	kind  string
	calls map[string]int64
}

// toolFixture is one run of an arm given an MCP server and a skill
// (with-mcp) and one without (baseline): with-mcp called them in most
// attempts, one attempt did not (workflow-not-used), one could not be
// read; baseline used built-in tools, once none at all (a measured zero).
var toolFixture = func() []toolAttempt {
	many := map[string]int64{"mcp__docs__search": 1, "skill:review": 1, hostileTool: 1}
	for i := 1; i <= 10; i++ {
		many[fmt.Sprintf("tool%02d", i)] = 1
	}
	return []toolAttempt{
		{"with-mcp", "", map[string]int64{"mcp__docs__search": 3, "skill:review": 1, "Read": 2}},
		{"with-mcp", "", map[string]int64{"mcp__docs__search": 1, "skill:review": 1}},
		{"with-mcp", "", map[string]int64{"mcp__docs__search": 2, "Read": 1}},
		{"with-mcp", wfb.KindWorkflowNotUsed, map[string]int64{"Read": 4}},
		{"with-mcp", "", many},
		{"with-mcp", "session-error", nil},
		{"baseline", "", map[string]int64{"Read": 2}},
		{"baseline", "", map[string]int64{}},
		{"baseline", "", map[string]int64{"Read": 1, "Bash": 1}},
		{"baseline", "provider-error", nil},
	}
}()

// writeToolFixture writes toolFixture as run r1 of a real results file.
func writeToolFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "r1", Label: "tools", Kind: "run", StartedAt: start, Status: wfb.RunComplete, Harness: "test", Config: "{}"}); err != nil {
		t.Fatal(err)
	}
	reps := map[string]int{}
	for i, a := range toolFixture {
		res := &store.Result{RunID: "r1", AttemptID: fmt.Sprintf("a%02d", i), Task: "t1", Arm: a.arm, Rep: reps[a.arm], Attempt: 1,
			Agent: "stand-in", Sandbox: "host-unsafe", StartedAt: start.Add(time.Duration(i) * time.Minute), OK: a.kind == "", ErrorKind: a.kind}
		reps[a.arm]++
		if a.calls != nil {
			var sum int64
			for tool, n := range a.calls {
				res.ToolUses = append(res.ToolUses, store.ToolUse{Tool: tool, Calls: n})
				sum += n
			}
			res.ToolCalls = &sum
		}
		if err := db.InsertResult(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func openToolFixture(t *testing.T) (*store.DB, Columns, []RunInfo) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, writeToolFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cols, err := LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := LoadRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return db, cols, runs
}

// TestToolUseIsTheViewsFigures stops the report's tool counts from
// drifting from the SQL interface's: per arm, the attempts measured, the
// calls and the workflow-not-used attempts are arm_tool_calls_v's, and
// each tool's attempts and calls arm_tools_v's — with an unmeasured
// attempt in neither count, never taken as one that called nothing.
func TestToolUseIsTheViewsFigures(t *testing.T) {
	ctx := context.Background()
	db, cols, _ := openToolFixture(t)
	u, err := LoadToolUse(ctx, db, cols, Selection{Spec: "r1", RunIDs: []string{"r1"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range u.Groups {
		got[g.Arm] = fmt.Sprintf("%d %d %d %d", g.Attempts, g.Measured, g.Calls, g.WorkflowNotUsed)
		for _, c := range g.Tools {
			got[g.Arm+" "+c.Tool] = fmt.Sprintf("%d %d %d", c.Attempts, c.Calls, g.Measured)
		}
	}
	want := map[string]string{}
	_, rows, err := db.Query(ctx, `SELECT arm, attempts, attempts_measured, tool_calls_sum, workflow_not_used FROM arm_tool_calls_v WHERE run_id = 'r1'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		want[r[0].(string)] = fmt.Sprintf("%d %d %d %d", r[1], r[2], r[3], r[4])
	}
	_, rows, err = db.Query(ctx, `SELECT arm, tool, attempts_using, calls, attempts_measured FROM arm_tools_v WHERE run_id = 'r1'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		want[r[0].(string)+" "+r[1].(string)] = fmt.Sprintf("%d %d %d", r[2], r[3], r[4])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool use is not the views' (-views +report):\n%s", diff)
	}
	// And the figures themselves, so that a view and the report wrong
	// together fail too.
	for key, w := range map[string]string{
		"with-mcp":                   "6 5 28 1",
		"baseline":                   "4 3 4 0",
		"with-mcp mcp__docs__search": "4 7 5",
		"with-mcp Read":              "3 7 5",
		"baseline Read":              "2 3 3",
	} {
		if got[key] != w {
			t.Errorf("%s: %q, want %q", key, got[key], w)
		}
	}
	if g := u.Group("", "baseline"); g == nil || g.Using != 2 {
		t.Errorf("baseline: %+v; want 2 of its 3 measured attempts using a tool (one measured zero)", g)
	}
}

// toolReport is the report of the tool fixture, tabulated as wfb report
// does it.
func toolReport(t *testing.T, byTask bool) *Tabulation {
	t.Helper()
	ctx := context.Background()
	db, cols, _ := openToolFixture(t)
	sel := Selection{Spec: "r1", RunIDs: []string{"r1"}}
	tab := NewTabulator(TabulateOptions{ByTask: byTask, Metrics: cols.Metrics()})
	if err := LoadRows(ctx, db, cols, sel, tab.Add); err != nil {
		t.Fatal(err)
	}
	res := tab.Result()
	var err error
	if res.Tools, err = LoadToolUse(ctx, db, cols, sel, byTask); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReportShowsToolUseInEveryFormat stops the evidence of an arm's tools
// being used from missing a format, from counting a NULL as a zero, and
// from letting an agent's tool name act on a terminal, a spreadsheet or a
// page: each format is a golden file, and none holds the name's ESC, BEL
// or a live <script> where it would act.
func TestReportShowsToolUseInEveryFormat(t *testing.T) {
	res := toolReport(t, false)
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderAll(&buf, res.Tables("wfb report: run r1", f), f); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			checkGolden(t, "report_tools_"+string(f)+".golden", buf.Bytes())
			if strings.ContainsAny(out, "\x1b\x07") {
				t.Errorf("the hostile tool name's controls reach the output:\n%q", out)
			}
			if f == FormatMarkdown && strings.Contains(out, "<script>") {
				t.Errorf("markdown holds a live <script>:\n%s", out)
			}
			for _, want := range []string{"mcp__docs__search", "workflow-not-used", "not measured for 1 of 6 attempts"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
			if Human(f) {
				for _, want := range []string{"4/5", "+4 more", "(any tool)"} {
					if !strings.Contains(out, want) {
						t.Errorf("no %q in:\n%s", want, out)
					}
				}
				if strings.Contains(out, "/6") {
					t.Errorf("a share over all 6 attempts: the unmeasured one counted as using nothing:\n%s", out)
				}
			}
		})
	}
}

// TestNoToolSectionWithoutMeasuredToolCalls stops a report from showing
// zeros for tool use nobody measured: the fixture of the other tests has
// tool_calls NULL throughout, and its report has no tool table or columns.
func TestNoToolSectionWithoutMeasuredToolCalls(t *testing.T) {
	ctx := context.Background()
	db, cols, _ := openFixture(t)
	u, err := LoadToolUse(ctx, db, cols, Selection{Spec: "r1", RunIDs: []string{"r1"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if u.Shown() {
		t.Fatalf("tool use shown for a run whose tool calls were never measured: %+v", u.Groups[0])
	}
	res := toolReport(t, false)
	res.Tools = u
	for _, f := range []Format{FormatTable, FormatJSON} {
		var buf bytes.Buffer
		if err := RenderAll(&buf, res.Tables("r1", f), f); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "tool") {
			t.Errorf("%s: a tool section without a measured tool call:\n%s", f, buf.String())
		}
	}
}

// TestDiffShowsEachSidesToolUse stops wfb diff from hiding that one arm
// used its MCP server and the other did not: the tool lines say each
// side's share and calls, and a descriptive change, in a table for people
// and in the notes for programs.
func TestDiffShowsEachSidesToolUse(t *testing.T) {
	ctx := context.Background()
	db, cols, runs := openToolFixture(t)
	df, err := DiffSides(ctx, db, cols, runs, "arm=baseline", "arm=with-mcp", DiffOptions{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tables := df.Tables("arm=baseline", "arm=with-mcp", FormatTable)
	if len(tables) != 2 {
		t.Fatalf("%d tables; want the diff and its tool use", len(tables))
	}
	if err := Render(&buf, tables[1], FormatTable); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "diff_tools_table.golden", buf.Bytes())
	for _, want := range []string{"baseline → with-mcp", "0/3 ×0", "4/5 ×7", "+80.0pp"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := RenderAll(&buf, df.Tables("a", "b", FormatJSON), FormatJSON); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, `tool use, arm baseline → with-mcp, mcp__docs__search: A 0/3 ×0, B 4/5 ×7, Δ +80.0pp.`) ||
		strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("json notes lack the tool line or hold the hostile name's controls:\n%s", out)
	}
}

// TestAResultSaysItsToolCalls stops wfb session from hiding an attempt's
// tool calls from people or printing an unmeasured count as 0: NULL stays
// NULL, a measured zero is "none", and a tool's name cannot drive the
// terminal. (Programs get the attempt as export writes it: see
// TestAnAttemptRecordIsItsExportLine.)
func TestAResultSaysItsToolCalls(t *testing.T) {
	zero, three := int64(0), int64(3)
	for _, c := range []struct {
		calls *int64
		uses  []store.ToolUse
		table string
	}{
		{nil, nil, "NULL"},
		{&zero, nil, "none"},
		{&three, []store.ToolUse{{Tool: "Read", Calls: 2}, {Tool: hostileTool, Calls: 1}},
			"Read ×2, mcp__evil__x␛]52;c;cm0gLXJmIH4=␇␛[31m<script>alert(1)</script> ×1"},
	} {
		r := store.Result{RunID: "r", AttemptID: "a", Task: "t", Arm: "x", OK: true, ToolCalls: c.calls, ToolUses: c.uses}
		var buf bytes.Buffer
		if err := Render(&buf, ResultTable(r), FormatTable); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), c.table) || strings.ContainsAny(buf.String(), "\x1b\x07") {
			t.Errorf("table: no %q, or controls, in\n%s", c.table, buf.String())
		}
	}
}

// TestAnAttemptRecordIsItsExportLine stops the record wfb session prints
// for programs from drifting from wfb export: for every attempt, the JSON
// of AttemptRecord has the keys of its export line, in the same order,
// with the same values.
func TestAnAttemptRecordIsItsExportLine(t *testing.T) {
	ctx := context.Background()
	db, cols, _ := openToolFixture(t)
	var buf bytes.Buffer
	if err := Export(ctx, db, cols, []string{"r1"}, ExportJSONL, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) == 0 {
		t.Fatal("nothing exported")
	}
	for _, line := range lines {
		var want map[string]any
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		rec, err := AttemptRecord(ctx, db, cols, want["attempt_id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(exportColumns(cols), rec.Columns); diff != "" {
			t.Errorf("columns (-export +record):\n%s", diff)
		}
		buf.Reset()
		if err := Render(&buf, rec, FormatJSON); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil || len(got) != 1 {
			t.Fatalf("record JSON %v: %s", err, buf.String())
		}
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Errorf("attempt %s (-export +record):\n%s", want["attempt_id"], diff)
		}
	}
}

// TestExportHasEachAttemptsToolUses stops export from dropping the calls
// by tool, or writing {} for an attempt never measured.
func TestExportHasEachAttemptsToolUses(t *testing.T) {
	db, cols, _ := openToolFixture(t)
	var buf bytes.Buffer
	if err := Export(context.Background(), db, cols, []string{"r1"}, ExportJSONL, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	for i, want := range map[int]string{
		0: `"tool_calls":6,`,
		1: `"tool_uses":"{\"mcp__docs__search\":1,\"skill:review\":1}"`,
		5: `"tool_calls":null,`,
		7: `"tool_uses":"{}"`,
		9: `"tool_uses":null`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("attempt %d: no %s in\n%s", i, want, lines[i])
		}
	}
	if strings.ContainsAny(buf.String(), "\x1b\x07") {
		t.Errorf("export holds the hostile name's controls raw")
	}
}
