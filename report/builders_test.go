package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/report/stats"
)

// TestBuildersGolden pins every builder in every format on the fixture:
// rows in, tables out. A change in a count, a rate, a median, a p-value, a
// footnote or a column key shows up here as a diff to review.
func TestBuildersGolden(t *testing.T) {
	qualityRows := fixtureRowsWhere(func(f fx) bool { return f.run == "r1" })
	for i := range qualityRows {
		r := &qualityRows[i]
		if r.OK || r.ErrorKind == "verify-failed" {
			r.Values[Precision] = 0.5 + 0.05*float64(r.Rep)
			r.Values[Recall] = 0.6 + 0.1*float64(i%3)
			r.Values[WeightedF1] = 0.55 + 0.02*float64(i%4)
			r.Values[VerdictCorrect] = float64(i % 2)
		}
	}
	all := append(baseMetrics, Precision, Recall, WeightedF1, VerdictCorrect)

	builders := []struct {
		name  string
		build func(Format) []*Table
	}{
		{"runs", func(f Format) []*Table { return []*Table{RunsTable(fixtureRuns, f)} }},
		{"report_by_arm", func(f Format) []*Table {
			return tabulate(fixtureRowsWhere(nil), TabulateOptions{Metrics: baseMetrics}).Tables("wfb report: runs r1, r2", f)
		}},
		{"report_by_task_arm", func(f Format) []*Table {
			return tabulate(fixtureRowsWhere(nil), TabulateOptions{ByTask: true, Metrics: baseMetrics}).Tables("wfb report: runs r1, r2", f)
		}},
		{"report_quality", func(f Format) []*Table {
			return tabulate(qualityRows, TabulateOptions{Metrics: all}).Tables("wfb report: run r1", f)
		}},
		{"diff_runs", func(f Format) []*Table {
			d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: baseMetrics})
			for _, r := range fixtureRowsWhere(nil) {
				side := SideA
				if r.RunID == "r2" {
					side = SideB
				}
				d.Add(side, &r)
			}
			return d.Result(fixtureRuns).Tables("base", "cand", f)
		}},
		{"diff_arms", func(f Format) []*Table {
			d := NewDiffer(DiffOptions{ByTask: true, Alpha: 0.05, Metrics: baseMetrics})
			for _, r := range fixtureRowsWhere(func(f fx) bool { return f.run == "r2" }) {
				side := SideA
				if r.Arm == "candidate" {
					side = SideB
				}
				d.Add(side, &r)
			}
			return d.Result(fixtureRuns).Tables("arm=baseline,run=r2", "arm=candidate,run=r2", f)
		}},
	}
	for _, b := range builders {
		for _, f := range Formats {
			t.Run(b.name+"/"+string(f), func(t *testing.T) {
				tables := b.build(f)
				if !Human(f) && len(tables) != 1 {
					t.Fatalf("%s gives %d tables; csv and json must be one document", f, len(tables))
				}
				var buf bytes.Buffer
				if err := RenderAll(&buf, tables, f); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, b.name+"_"+string(f)+".golden", buf.Bytes())
			})
		}
	}
}

// TestErroredCellsNeverLeaveTheStrictDenominator stops the bug where a
// refused or errored cell silently disappears and a pass rate looks better
// than it was: strict counts every cell, clean leaves out errors only, and
// failures of the workflow stay in both.
func TestErroredCellsNeverLeaveTheStrictDenominator(t *testing.T) {
	rows := []Row{
		{Arm: "a", Rep: 0, Attempt: 1, OK: true, Values: Unmeasured()},
		{Arm: "a", Rep: 1, Attempt: 1, OK: true, Values: Unmeasured()},
		{Arm: "a", Rep: 2, Attempt: 1, ErrorKind: "sandbox-refused", Values: Unmeasured()},
		{Arm: "a", Rep: 3, Attempt: 1, ErrorKind: "provider-error", Values: Unmeasured()},
		{Arm: "a", Rep: 4, Attempt: 1, ErrorKind: "timeout", Values: Unmeasured()},
		{Arm: "a", Rep: 5, Attempt: 1, ErrorKind: "a-kind-from-the-future", Values: Unmeasured()},
	}
	g := tabulate(rows, TabulateOptions{}).Groups[0]
	type rates struct {
		Cells, OK, Errored int
		Strict, Clean      float64
	}
	want := rates{Cells: 6, OK: 2, Errored: 2, Strict: 2.0 / 6, Clean: 2.0 / 4}
	got := rates{g.Cells, g.OK, g.Errored, g.StrictRate(), g.CleanRate()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"sandbox-refused": 1, "provider-error": 1, "timeout": 1, "a-kind-from-the-future": 1}, g.Failed); diff != "" {
		t.Errorf("failed by kind (-want +got):\n%s", diff)
	}
}

// TestEveryAttemptErroredGivesNoCleanRateNotZero stops a clean rate of 0%
// (or 100%) being invented when nothing was fairly measured.
func TestEveryAttemptErroredGivesNoCleanRateNotZero(t *testing.T) {
	rows := []Row{{Arm: "a", Attempt: 1, ErrorKind: "infra-error", Values: Unmeasured()}}
	tab := tabulate(rows, TabulateOptions{})
	wide := tab.Tables("t", FormatJSON)[0]
	got := map[string]any{}
	for i, c := range wide.Columns {
		got[c] = wide.Rows[0][i]
	}
	if got["clean_rate"] != nil || got["strict_rate"] != 0.0 {
		t.Errorf("clean_rate = %v, strict_rate = %v; want NULL and 0", got["clean_rate"], got["strict_rate"])
	}
}

// TestUnmeasuredIsLeftOutNotZeroFilled stops NULL tokens or cost being
// read as 0 and dragging a median down: medians use measured values, n
// says how many, and a measured 0 counts.
func TestUnmeasuredIsLeftOutNotZeroFilled(t *testing.T) {
	mk := func(rep int, cost float64) Row {
		r := Row{Arm: "a", Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
		r.Values[CostUSD] = cost
		return r
	}
	tab := tabulate([]Row{mk(0, N), mk(1, N), mk(2, 0), mk(3, 0.3), mk(4, 0.5)}, TabulateOptions{Metrics: []Metric{CostUSD}})
	got := tab.Groups[0].Metrics[CostUSD]
	want := Spread{N: 3, Attempts: 3, Center: 0.3, Q1: 0.15, Q3: 0.4, Min: 0, Max: 0.5, Sum: 0.8}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("cost spread (-want +got):\n%s", diff)
	}
	wide := tab.Tables("t", FormatCSV)[0]
	col := func(name string) any {
		for i, c := range wide.Columns {
			if c == name {
				return wide.Rows[0][i]
			}
		}
		t.Fatalf("no column %s in %v", name, wide.Columns)
		return nil
	}
	if col("cost_usd_total") != nil {
		t.Errorf("cost_usd_total = %v; want NULL because 2 of 5 costs are unmeasured", col("cost_usd_total"))
	}
	if col("cost_usd_measured_sum") != 0.8 {
		t.Errorf("cost_usd_measured_sum = %v; want 0.8", col("cost_usd_measured_sum"))
	}
	human := tab.Tables("t", FormatTable)[0]
	if got := human.Rows[0][len(human.Rows[0])-1]; got != "0.8*" {
		t.Errorf("human cost total = %v; want the lower bound marked: 0.8*", got)
	}
	if !strings.Contains(strings.Join(human.Footnotes, "\n"), "cost unmeasured for 2 of 5 attempts") {
		t.Errorf("footnotes do not explain the unmeasured cost: %q", human.Footnotes)
	}
}

// TestMedianMatchesTheDiffCentre stops `report` and `diff` disagreeing on
// the same sample: the report's median must be the centre the statistics
// package reports.
func TestMedianMatchesTheDiffCentre(t *testing.T) {
	for _, xs := range [][]float64{{3}, {1, 2}, {5, 1, 4, 2}, {9, 1, 1, 1, 7, 3, 2}} {
		s := spreadOf(CostUSD, append([]float64(nil), xs...))
		want := stats.Summarize(xs, 0.95).Center
		if s.Center != want {
			t.Errorf("median of %v = %v; stats says %v", xs, s.Center, want)
		}
	}
}

// TestQualityMetricsAppearOnlyWhenTheFileHasThem stops empty review-quality
// columns being shown (as if measured and missing) for files written before
// the columns existed, and stops them being hidden once they exist.
func TestQualityMetricsAppearOnlyWhenTheFileHasThem(t *testing.T) {
	old := NewColumns([]string{"run_id", "task", "arm", "input_tokens", "cost_usd", "num_turns", "duration_ms"})
	if diff := cmp.Diff([]Metric{InputTokens, CostUSD, Turns, WallTime}, old.Metrics()); diff != "" {
		t.Errorf("metrics of an old file (-want +got):\n%s", diff)
	}
	withQuality := NewColumns([]string{"run_id", "input_tokens"}, "score_id", "attempt_id", "scored_at", "precision", "recall", "weighted_f1", "verdict_correct")
	if diff := cmp.Diff([]Metric{InputTokens, Precision, Recall, WeightedF1, VerdictCorrect}, withQuality.Metrics()); diff != "" {
		t.Errorf("metrics of a file with quality columns (-want +got):\n%s", diff)
	}
}

// TestDiffPairsCellsWhenTheyPairUp stops an unpaired test being used where
// the same task and rep ran on both sides (losing power), and a paired test
// being used where cells do not pair one to one (wrong p-values).
func TestDiffPairsCellsWhenTheyPairUp(t *testing.T) {
	cell := func(run, task, arm string, rep int, ok bool) Row {
		r := Row{RunID: run, Task: task, Arm: arm, Rep: rep, Attempt: 1, OK: ok, Values: Unmeasured()}
		if !ok {
			r.ErrorKind = "verify-failed"
		}
		return r
	}
	var twoRuns, sameRunArms, twoRunsPerSide, missingPartner [2][]Row
	for rep := range 4 {
		for _, task := range []string{"t1", "t2"} {
			twoRuns[0] = append(twoRuns[0], cell("r1", task, "x", rep, true))
			twoRuns[1] = append(twoRuns[1], cell("r2", task, "x", rep, rep > 0))
			sameRunArms[0] = append(sameRunArms[0], cell("r1", task, "base", rep, true))
			sameRunArms[1] = append(sameRunArms[1], cell("r1", task, "cand", rep, rep > 1))
			twoRunsPerSide[0] = append(twoRunsPerSide[0], cell("r1", task, "x", rep, true), cell("r3", task, "x", rep, true))
			twoRunsPerSide[1] = append(twoRunsPerSide[1], cell("r2", task, "x", rep, true), cell("r4", task, "x", rep, true))
			missingPartner[0] = append(missingPartner[0], cell("r1", task, "x", rep, true))
			if rep < 3 {
				missingPartner[1] = append(missingPartner[1], cell("r2", task, "x", rep, true))
			}
		}
	}
	tests := []struct {
		name   string
		sides  [2][]Row
		byArm  bool
		arm    string
		test   string
		pairsN int
	}{
		{"two runs of one bench pair by task, arm and rep", twoRuns, true, "x", stats.TestMcNemarExact, 8},
		{"two arms of one run pair by task and rep", sameRunArms, false, "base → cand", stats.TestMcNemarExact, 8},
		{"several runs per side do not pair one to one", twoRunsPerSide, true, "x", stats.TestFisherExact, 16},
		{"a cell without a partner falls back to Fisher", missingPartner, true, "x", stats.TestFisherExact, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDiffer(DiffOptions{Alpha: 0.05})
			for side, rows := range tt.sides {
				for i := range rows {
					d.Add(side, &rows[i])
				}
			}
			res := d.Result(nil)
			if res.ByArm != tt.byArm {
				t.Errorf("ByArm = %v; want %v", res.ByArm, tt.byArm)
			}
			l := res.Lines[0]
			type got struct {
				Arm, Key, Test string
				N              int
			}
			if diff := cmp.Diff(got{tt.arm, "strict_pass_rate", tt.test, tt.pairsN}, got{l.Arm, l.Key, l.Cmp.Test, l.Cmp.A.N}); diff != "" {
				t.Errorf("first line (-want +got):\n%s", diff)
			}
			if tt.test == stats.TestFisherExact && !strings.Contains(strings.Join(res.Footnotes, "\n"), "unpaired") {
				t.Errorf("no footnote says why the cells were compared unpaired: %q", res.Footnotes)
			}
		})
	}
}

// TestDiffUsesEachCellsLastAttempt stops a retried cell counting twice (or
// by its first, transient failure) in the pass/fail test.
func TestDiffUsesEachCellsLastAttempt(t *testing.T) {
	a := []Row{
		{RunID: "r1", Task: "t", Arm: "x", Rep: 0, Attempt: 2, OK: true, Values: Unmeasured()},
		{RunID: "r1", Task: "t", Arm: "x", Rep: 0, Attempt: 1, ErrorKind: "provider-error", Values: Unmeasured()},
	}
	b := []Row{{RunID: "r2", Task: "t", Arm: "x", Rep: 0, Attempt: 1, OK: true, Values: Unmeasured()}}
	d := NewDiffer(DiffOptions{Alpha: 0.05})
	for i := range a {
		d.Add(SideA, &a[i])
	}
	d.Add(SideB, &b[0])
	res := d.Result(nil)
	c := res.Lines[0].Cmp
	if c.A.N != 1 || c.A.Center != 1 || c.Test != stats.TestMcNemarExact {
		t.Errorf("strict pass rate of A = %v over %d by %s; want 1 over 1 pair by McNemar", c.A.Center, c.A.N, c.Test)
	}
	if !strings.Contains(strings.Join(res.Footnotes, "\n"), "A has 1 retried attempts") {
		t.Errorf("no footnote about retries: %q", res.Footnotes)
	}
}

// TestDiffWarnsWhenTheSidesDifferInMoreThanTheWorkflow stops a diff being
// read as the workflow's effect when the bench, the agent version or the
// environment (error-kind mix) changed too, and a "~" being read as "no
// change" when the samples could never show one.
func TestDiffWarnsWhenTheSidesDifferInMoreThanTheWorkflow(t *testing.T) {
	d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}})
	for rep := range 12 {
		a := Row{RunID: "r1", Task: "t", Arm: "x", Rep: rep, Attempt: 1, AgentVersion: "1.0", OK: true, Values: Unmeasured()}
		a.Values[CostUSD] = 0.1
		b := Row{RunID: "r2", Task: "t", Arm: "x", Rep: rep, Attempt: 1, AgentVersion: "1.1", ErrorKind: "provider-error", Values: Unmeasured()}
		if rep < 1 {
			b.OK, b.ErrorKind = true, ""
			b.Values[CostUSD] = 0.2
		}
		d.Add(SideA, &a)
		d.Add(SideB, &b)
	}
	notes := strings.Join(d.Result(fixtureRuns).Footnotes, "\n")
	for _, want := range []string{
		"different bench fingerprints (A: fp-1; B: fp-2)",
		"different agent versions (A: 1.0; B: 1.1)",
		"error-kind mix changed (cells by their final attempt's kind, Fisher exact test): provider-error 0 of 12 → 11 of 12 (significant",
		"arm x (cost): too few values to ever reach significance",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("footnotes lack %q:\n%s", want, notes)
		}
	}
}

// TestDiffMarksInsignificantChangesWithTilde stops a noisy difference being
// printed as a percentage people would read as real.
func TestDiffMarksInsignificantChangesWithTilde(t *testing.T) {
	d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}})
	for rep := range 10 {
		for side, base := range []float64{1, 1} {
			r := Row{RunID: []string{"r1", "r2"}[side], Task: "t", Arm: "x", Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
			r.Values[CostUSD] = base + float64((rep*7+side*3)%10)/100
			d.Add(side, &r)
		}
	}
	tab := d.Result(nil).Tables("A", "B", FormatTable)[0]
	deltaCol := -1
	for i, c := range tab.Columns {
		if c == "Δ" {
			deltaCol = i
		}
	}
	for _, row := range tab.Rows {
		// The estimate stays beside the mark: ~ marks a change that is not
		// significant, it never replaces the number.
		if d, _ := row[deltaCol].(string); !strings.HasSuffix(d, " ~") || !strings.ContainsAny(d[:1], "+-") {
			t.Errorf("%v: Δ = %v; want the signed estimate and ~ for an A/A comparison", row[1], row[deltaCol])
		}
	}
}

// Result lets each group's samples go as it compares them, so a Differ
// gives one Result: a second one, or an Add after it, would silently compare
// nothing, and panics instead.
func TestADifferGivesOneResult(t *testing.T) {
	row := Row{RunID: "r1", Task: "t", Arm: "x", Rep: 0, Attempt: 1, OK: true, Values: Unmeasured()}
	for name, after := range map[string]func(d *Differ){
		"Result": func(d *Differ) { d.Result(nil) },
		"Add":    func(d *Differ) { d.Add(SideA, &row) },
	} {
		d := NewDiffer(DiffOptions{Alpha: 0.05})
		d.Add(SideA, &row)
		d.Add(SideB, &row)
		if n := len(d.Result(nil).Lines); n == 0 {
			t.Fatalf("first Result has no lines")
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s after Result did not panic", name)
				}
			}()
			after(d)
		}()
	}
}
