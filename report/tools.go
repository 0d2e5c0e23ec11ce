package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// MaxToolsShown caps the tools a table for people lists per group: the
// most used first, the rest counted on one "+N more" line. Programs get
// every tool.
const MaxToolsShown = 10

// ToolUse is how a selection's attempts used their tools, per group (arm,
// or task and arm): the evidence that an arm's MCP servers and skills were
// called at all. Its unit is the attempt, retries included — the unit of
// arm_tool_calls_v and arm_tools_v, whose figures it is (one query shape,
// narrowed to the selection; a test holds the two together). An attempt
// whose tool_calls is NULL was not measured: it is in Attempts, never in
// Measured, and never counts as an attempt that called nothing.
type ToolUse struct {
	ByTask bool
	Groups []*ToolGroup // sorted by task, then arm
}

// ToolGroup is one group's tool use.
type ToolGroup struct {
	Task, Arm string
	// Attempts counts every attempt; Measured those whose tool calls were
	// read (tool_calls not NULL): the denominator of "used in 5 of 6".
	Attempts, Measured int
	// Using counts the measured attempts that called any tool; Calls sums
	// their tool_calls.
	Using int
	Calls int64
	// WorkflowNotUsed counts the attempts recorded workflow-not-used: they
	// ended ok without calling what the arm's expect_tools name.
	WorkflowNotUsed int
	// Tools lists each tool called, the most attempts first, then the most
	// calls, then by name.
	Tools []ToolCount
}

// ToolCount is one tool's use in a group: how many attempts called it and
// how many times in all.
type ToolCount struct {
	Tool     string
	Attempts int
	Calls    int64
}

// Shown reports whether any attempt's tool calls were measured: only then
// do reports show a tool-use section (an older file, or a run of agents
// whose calls could not be read, has nothing to say).
func (u *ToolUse) Shown() bool {
	if u == nil {
		return false
	}
	for _, g := range u.Groups {
		if g.Measured > 0 {
			return true
		}
	}
	return false
}

// Group returns the group of task and arm (task ignored unless ByTask),
// nil when it has no attempts.
func (u *ToolUse) Group(task, arm string) *ToolGroup {
	if u == nil {
		return nil
	}
	if !u.ByTask {
		task = ""
	}
	for _, g := range u.Groups {
		if g.Task == task && g.Arm == arm {
			return g
		}
	}
	return nil
}

// LoadToolUse reads the tool use of the attempts sel picks, grouped by arm
// (or task and arm). A file older than schema 11 has no tool calls: nil.
func LoadToolUse(ctx context.Context, src Source, cols Columns, sel Selection, byTask bool) (*ToolUse, error) {
	if !cols.Has("tool_calls") {
		return nil, nil
	}
	if kept, err := keptToolUse(ctx, src, sel, byTask); kept != nil || err != nil {
		return kept, err
	}
	u := &ToolUse{ByTask: byTask}
	cond, args := sel.where()
	if sel.RunIDs != nil {
		cond = "(" + cond + ") AND r.run_id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(sel.RunIDs)), ", ") + ")"
		for _, id := range sel.RunIDs {
			args = append(args, id)
		}
	}
	group := "'' AS task, r.arm"
	if byTask {
		group = "r.task, r.arm"
	}
	// The same counts as arm_tool_calls_v and arm_tools_v (migration 0011).
	groups := `SELECT ` + group + `, COUNT(*), COUNT(r.tool_calls), COUNT(*) FILTER (WHERE r.tool_calls > 0),
		COALESCE(SUM(r.tool_calls), 0), COUNT(*) FILTER (WHERE r.error_kind = '` + wfb.KindWorkflowNotUsed + `')
		FROM results r WHERE ` + cond + ` GROUP BY 1, 2 ORDER BY 1, 2`
	byKey := map[[2]string]*ToolGroup{}
	err := src.Each(ctx, groups, args, func(s store.Scanner) error {
		g := &ToolGroup{}
		if err := s.Scan(&g.Task, &g.Arm, &g.Attempts, &g.Measured, &g.Using, &g.Calls, &g.WorkflowNotUsed); err != nil {
			return err
		}
		u.Groups = append(u.Groups, g)
		byKey[[2]string{g.Task, g.Arm}] = g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load tool calls: %w", err)
	}
	tools := `SELECT ` + group + `, t.tool, COUNT(*), SUM(t.calls)
		FROM tool_uses t JOIN results r ON r.attempt_id = t.attempt_id WHERE ` + cond + ` GROUP BY 1, 2, 3`
	err = src.Each(ctx, tools, args, func(s store.Scanner) error {
		var task, arm string
		var c ToolCount
		if err := s.Scan(&task, &arm, &c.Tool, &c.Attempts, &c.Calls); err != nil {
			return err
		}
		if g := byKey[[2]string{task, arm}]; g != nil {
			g.Tools = append(g.Tools, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load tool uses: %w", err)
	}
	for _, g := range u.Groups {
		slices.SortFunc(g.Tools, func(a, b ToolCount) int {
			return cmp.Or(cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Tool, b.Tool))
		})
	}
	return u, nil
}

// keptToolUse is LoadToolUse from the counts the file keeps of finished
// runs (store.ToolStatsSQL and store.ToolUseStatsSQL per task and arm,
// summed here into the groups): nil, to count over the attempts, unless
// sel names runs, has no filter, and every run it names has its counts
// kept and current.
func keptToolUse(ctx context.Context, src Source, sel Selection, byTask bool) (*ToolUse, error) {
	if sel.RunIDs == nil || len(sel.Conds) > 0 {
		return nil, nil
	}
	fresh, err := freshRunStats(ctx, src)
	if err != nil {
		return nil, err
	}
	for _, id := range sel.RunIDs {
		if !slices.ContainsFunc(fresh, func(r []any) bool { return asString(r[0]) == id }) {
			return nil, nil
		}
	}
	u := &ToolUse{ByTask: byTask}
	key := func(task, arm string) [2]string {
		if !byTask {
			task = ""
		}
		return [2]string{task, arm}
	}
	byKey := map[[2]string]*ToolGroup{}
	tools := map[[2]string]map[string]*ToolCount{}
	for _, id := range slices.Compact(slices.Sorted(slices.Values(sel.RunIDs))) {
		err := src.Each(ctx, `SELECT task, arm, attempts, measured, using_tools, calls, workflow_not_used
			FROM run_tool_stats WHERE run_id = ?`, []any{id}, func(s store.Scanner) error {
			var task, arm string
			var c ToolGroup
			if err := s.Scan(&task, &arm, &c.Attempts, &c.Measured, &c.Using, &c.Calls, &c.WorkflowNotUsed); err != nil {
				return err
			}
			k := key(task, arm)
			g := byKey[k]
			if g == nil {
				g = &ToolGroup{Task: k[0], Arm: k[1]}
				byKey[k] = g
				u.Groups = append(u.Groups, g)
			}
			g.Attempts, g.Measured, g.Using = g.Attempts+c.Attempts, g.Measured+c.Measured, g.Using+c.Using
			g.Calls, g.WorkflowNotUsed = g.Calls+c.Calls, g.WorkflowNotUsed+c.WorkflowNotUsed
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load kept tool calls of run %s: %w", id, err)
		}
		err = src.Each(ctx, `SELECT task, arm, tool, attempts, calls FROM run_tool_use_stats WHERE run_id = ?`, []any{id},
			func(s store.Scanner) error {
				var task, arm string
				var c ToolCount
				if err := s.Scan(&task, &arm, &c.Tool, &c.Attempts, &c.Calls); err != nil {
					return err
				}
				k := key(task, arm)
				if tools[k] == nil {
					tools[k] = map[string]*ToolCount{}
				}
				if t := tools[k][c.Tool]; t != nil {
					t.Attempts, t.Calls = t.Attempts+c.Attempts, t.Calls+c.Calls
				} else {
					tools[k][c.Tool] = &c
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("load kept tool uses of run %s: %w", id, err)
		}
	}
	slices.SortFunc(u.Groups, func(a, b *ToolGroup) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), strings.Compare(a.Arm, b.Arm))
	})
	for _, g := range u.Groups {
		for _, c := range tools[[2]string{g.Task, g.Arm}] {
			g.Tools = append(g.Tools, *c)
		}
		slices.SortFunc(g.Tools, func(a, b ToolCount) int {
			return cmp.Or(cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Tool, b.Tool))
		})
	}
	return u, nil
}

// share spells n of a group's measured attempts ("5/6"), or "not
// measured" when none was.
func (g *ToolGroup) share(n int) string {
	if g == nil || g.Measured == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%d/%d", n, g.Measured)
}

// calls is a group's calls for a table: NULL when no attempt was measured.
func (g *ToolGroup) calls(n int64) any {
	if g == nil || g.Measured == 0 {
		return nil
	}
	return n
}

// Items is a table cell holding a list of records: JSON writes it as an
// array of objects keyed by Keys (values as any cell's), every other
// format as Text, its controls shown as any text's are.
type Items struct {
	Keys []string
	Rows [][]any
	Text string
}

// toolItems is a group's tools as a cell: every tool, for programs.
func toolItems(g *ToolGroup) any {
	if g == nil || g.Measured == 0 {
		return nil
	}
	it := Items{Keys: []string{"tool", "attempts_using", "calls"}}
	var parts []string
	for _, c := range g.Tools {
		it.Rows = append(it.Rows, []any{c.Tool, c.Attempts, c.Calls})
		parts = append(parts, fmt.Sprintf("%s %d/%d ×%d", c.Tool, c.Attempts, g.Measured, c.Calls))
	}
	it.Text = strings.Join(parts, "; ")
	return it
}

// toolNote explains the tool-use table once.
const toolNote = "Tool use counts attempts, retries included (as arm_tools_v): a tool's attempts are those that called it of the attempts whose tool calls were read; calls sums them. MCP tools are mcp__SERVER__TOOL, skills skill:NAME."

// toolNotes says, per group, what its tool counts leave out and how many
// attempts did not use the workflow.
func toolNotes(u *ToolUse) []string {
	notes := []string{toolNote}
	for _, g := range u.Groups {
		who := "arm " + g.Arm
		if u.ByTask {
			who = "task " + g.Task + ", " + who
		}
		switch {
		case g.Measured == 0:
			notes = append(notes, fmt.Sprintf("%s: tool calls not measured for any of its %d attempts (NULL, not 0).", who, g.Attempts))
			continue
		case g.Measured < g.Attempts:
			notes = append(notes, fmt.Sprintf("%s: tool calls not measured for %d of %d attempts (NULL, not 0); the counts are over the %d measured.",
				who, g.Attempts-g.Measured, g.Attempts, g.Measured))
		}
		if g.WorkflowNotUsed > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d attempts %s (ended without calling what the arm's expect_tools name: a failure).",
				who, g.WorkflowNotUsed, g.Attempts, wfb.KindWorkflowNotUsed))
		}
	}
	return notes
}

// toolTable is the tool use for people: per group a line for any tool,
// then its most used tools (MaxToolsShown), then how many more.
func (t *Tabulation) toolTable() *Table {
	u := t.Tools
	d := dual{title: "tool use per arm (attempts)"}
	if u.ByTask {
		d.col("task", "task")
	}
	d.col("arm", "arm")
	d.col("tool", "tool")
	d.col("attempts", "attempts")
	d.col("calls", "calls")
	for _, g := range u.Groups {
		row := func(tool string, attempts, calls any) {
			if u.ByTask {
				d.same(g.Task)
			}
			d.same(g.Arm)
			d.same(tool)
			d.same(attempts)
			d.same(calls)
			d.endRow()
		}
		row("(any tool)", g.share(g.Using), g.calls(g.Calls))
		for i, c := range g.Tools {
			if i == MaxToolsShown {
				var rest int64
				for _, r := range g.Tools[i:] {
					rest += r.Calls
				}
				row(fmt.Sprintf("+%d more", len(g.Tools)-i), "", rest)
				break
			}
			row(c.Tool, g.share(c.Attempts), c.Calls)
		}
	}
	return d.table(true, toolNotes(u))
}

// toolCols and toolCells add a group's tool use to the machine table.
func toolCols(d *dual) {
	d.col("", "tool_calls_measured_n")
	d.col("", "tool_calls_any_n")
	d.col("", "tool_calls_sum")
	d.col("", "workflow_not_used")
	d.col("", "tools")
}

func toolCells(d *dual, g *ToolGroup) {
	if g == nil {
		g = &ToolGroup{}
	}
	d.same(g.Measured)
	d.same(g.Using)
	d.same(g.calls(g.Calls))
	d.same(g.WorkflowNotUsed)
	d.same(toolItems(g))
}

// ToolChange is one tool's use on the two sides of a diff: descriptive
// figures, never tested. Share is each side's attempts calling it over
// its attempts measured (NaN when a side measured none).
type ToolChange struct {
	Arm, Tool string
	A, B      ToolCount
	MeasuredA int
	MeasuredB int
}

// shareChange is B's share of attempts calling the tool minus A's, in
// percentage points; NaN when a side measured none.
func (c ToolChange) shareChange() float64 {
	if c.MeasuredA == 0 || c.MeasuredB == 0 {
		return math.NaN()
	}
	return 100 * (float64(c.B.Attempts)/float64(c.MeasuredB) - float64(c.A.Attempts)/float64(c.MeasuredA))
}

// anyTool names the line of a group's use of any tool at all.
const anyTool = "(any tool)"

// ToolChanges pairs the two sides' tool use as the diff pairs arms: arm
// with arm when they share arms, else all of A against all of B ("a → b").
// Per pair it gives a line for any tool, then the tools whose share of
// attempts or calls differ, the largest change in share first.
func ToolChanges(sides [2]*ToolUse) []ToolChange {
	if sides[SideA] == nil || sides[SideB] == nil || !(sides[SideA].Shown() || sides[SideB].Shown()) {
		return nil
	}
	arms := [2]map[string]*ToolGroup{{}, {}}
	for s, u := range sides {
		for _, g := range u.Groups {
			arms[s][g.Arm] = mergeGroups(arms[s][g.Arm], g, g.Arm)
		}
	}
	var pairs [][3]any
	for _, arm := range slices.Sorted(maps.Keys(arms[SideA])) {
		if b := arms[SideB][arm]; b != nil {
			pairs = append(pairs, [3]any{arm, arms[SideA][arm], b})
		}
	}
	if len(pairs) == 0 {
		var whole [2]*ToolGroup
		var names [2][]string
		for s := range arms {
			for _, arm := range slices.Sorted(maps.Keys(arms[s])) {
				whole[s] = mergeGroups(whole[s], arms[s][arm], "")
				names[s] = append(names[s], arm)
			}
		}
		pairs = append(pairs, [3]any{strings.Join(names[SideA], ", ") + " → " + strings.Join(names[SideB], ", "), whole[SideA], whole[SideB]})
	}
	var out []ToolChange
	for _, p := range pairs {
		arm, a, b := p[0].(string), p[1].(*ToolGroup), p[2].(*ToolGroup)
		out = append(out, ToolChange{Arm: arm, Tool: anyTool, A: ToolCount{Attempts: a.Using, Calls: a.Calls},
			B: ToolCount{Attempts: b.Using, Calls: b.Calls}, MeasuredA: a.Measured, MeasuredB: b.Measured})
		byTool := map[string]*ToolChange{}
		for s, g := range [2]*ToolGroup{a, b} {
			for _, c := range g.Tools {
				tc := byTool[c.Tool]
				if tc == nil {
					tc = &ToolChange{Arm: arm, Tool: c.Tool, MeasuredA: a.Measured, MeasuredB: b.Measured}
					byTool[c.Tool] = tc
				}
				if s == SideA {
					tc.A = c
				} else {
					tc.B = c
				}
			}
		}
		var changed []ToolChange
		for _, tc := range byTool {
			if tc.A.Attempts*tc.MeasuredB != tc.B.Attempts*tc.MeasuredA || tc.A.Calls != tc.B.Calls {
				changed = append(changed, *tc)
			}
		}
		slices.SortFunc(changed, func(x, y ToolChange) int {
			dx, dy := math.Abs(x.shareChange()), math.Abs(y.shareChange())
			return cmp.Or(cmp.Compare(nanLow(dy), nanLow(dx)), cmp.Compare(y.A.Calls+y.B.Calls, x.A.Calls+x.B.Calls), strings.Compare(x.Tool, y.Tool))
		})
		out = append(out, changed...)
	}
	return out
}

func nanLow(x float64) float64 {
	if math.IsNaN(x) {
		return -1
	}
	return x
}

// mergeGroups adds group g into sum (nil: a new group named arm): the
// groups' attempts are disjoint, so the counts add.
func mergeGroups(sum, g *ToolGroup, arm string) *ToolGroup {
	if sum == nil {
		sum = &ToolGroup{Arm: arm}
	}
	sum.Attempts += g.Attempts
	sum.Measured += g.Measured
	sum.Using += g.Using
	sum.Calls += g.Calls
	sum.WorkflowNotUsed += g.WorkflowNotUsed
	for _, c := range g.Tools {
		if i := slices.IndexFunc(sum.Tools, func(s ToolCount) bool { return s.Tool == c.Tool }); i >= 0 {
			sum.Tools[i].Attempts += c.Attempts
			sum.Tools[i].Calls += c.Calls
			continue
		}
		sum.Tools = append(sum.Tools, c)
	}
	return sum
}

// sideText spells one side of a tool change: "5/6 ×12", or "not
// measured".
func sideText(c ToolCount, measured int) string {
	if measured == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%d/%d ×%d", c.Attempts, measured, c.Calls)
}

// toolChangeNote says what the diff's tool lines are, once.
const toolChangeNote = "Tool use, descriptive (not tested): per attempt, retries included, the attempts that called the tool of those whose tool calls were read, ×calls in all; Δ is the change in that share. Only tools whose use differs are listed, at most 10 per arm."

// toolDiffTable lists the tool changes for people, at most MaxToolsShown
// tools per pair after its any-tool line.
func toolDiffTable(changes []ToolChange) *Table {
	t := &Table{Title: "tool use, A → B", Columns: []string{"arm", "tool", "A", "B", "Δ attempts"}, Footnotes: []string{toolChangeNote}}
	shown := 0
	for i, c := range changes {
		if c.Tool == anyTool {
			shown = 0
		} else if shown++; shown > MaxToolsShown {
			if i+1 == len(changes) || changes[i+1].Tool == anyTool {
				t.Rows = append(t.Rows, []any{c.Arm, fmt.Sprintf("+%d more", shown-MaxToolsShown), "", "", ""})
			}
			continue
		}
		t.Rows = append(t.Rows, []any{c.Arm, c.Tool, sideText(c.A, c.MeasuredA), sideText(c.B, c.MeasuredB), ppText(c.shareChange())})
	}
	return t
}

// toolDiffNotes are the tool changes as notes, for programs (csv and json
// keep one table): one line each, every tool that differs.
func toolDiffNotes(changes []ToolChange) []string {
	if len(changes) == 0 {
		return nil
	}
	notes := []string{strings.Replace(toolChangeNote, " Only tools whose use differs are listed, at most 10 per arm.", " Only tools whose use differs are listed.", 1)}
	for _, c := range changes {
		notes = append(notes, fmt.Sprintf("tool use, arm %s, %s: A %s, B %s, Δ %s.", c.Arm, c.Tool,
			sideText(c.A, c.MeasuredA), sideText(c.B, c.MeasuredB), ppText(c.shareChange())))
	}
	return notes
}

// ppText is a change in percentage points, n/c when not comparable.
func ppText(pp float64) string {
	if math.IsNaN(pp) {
		return NotComparable
	}
	return fmt.Sprintf("%+.1fpp", pp)
}
