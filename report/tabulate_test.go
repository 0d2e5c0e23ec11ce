package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// retried builds the attempts of one cell: a row per kind in order ("" =
// ok), attempt numbers from 1, each costing cost and taking ms.
func retried(run, task, arm string, rep int, cost, ms float64, kinds ...string) []Row {
	var rows []Row
	for i, k := range kinds {
		r := Row{RunID: run, Task: task, Arm: arm, Rep: rep, Attempt: i + 1, OK: k == "", ErrorKind: k, Values: Unmeasured()}
		r.Values[WallTime] = ms
		if k != "provider-error" {
			// A provider that refused the request reported no usage.
			r.Values[CostUSD] = cost
			r.Values[Turns] = 1
		}
		rows = append(rows, r)
	}
	return rows
}

// TestARetriedCellCountsOnceByItsFinalAttempt stops the bug where `wfb
// report` rated attempts while `wfb diff` rated cells: three cells that
// each hit a provider error and then passed on retry read as "attempted 6,
// ok 3, strict 50%", although every cell ended ok. Each cell now counts
// once, by its final attempt, whatever order its rows arrive in, and the
// superseded attempts are still counted and named.
func TestARetriedCellCountsOnceByItsFinalAttempt(t *testing.T) {
	var rows []Row
	for rep := range 3 {
		rows = append(rows, retried("r1", "summarize", "baseline", rep, 0.038, 7, "provider-error", "")...)
	}
	// A cell whose retry failed too ends with its last failure.
	rows = append(rows, retried("r1", "summarize", "baseline", 3, 0.038, 7, "provider-error", "provider-error")...)
	type outcome struct {
		Cells, Attempts, Retried, OK, Errored int
		Failed, Superseded                    map[string]int
		Strict, Clean                         float64
	}
	want := outcome{Cells: 4, Attempts: 8, Retried: 4, OK: 3, Errored: 1,
		Failed: map[string]int{"provider-error": 1}, Superseded: map[string]int{"provider-error": 4},
		Strict: 3.0 / 4, Clean: 1}
	for _, order := range []string{"recorded", "reversed"} {
		t.Run(order, func(t *testing.T) {
			in := slices.Clone(rows)
			if order == "reversed" {
				slices.Reverse(in)
			}
			tab := tabulate(in, TabulateOptions{Metrics: []Metric{CostUSD}})
			g := tab.Groups[0]
			got := outcome{g.Cells, g.Attempts, g.Retried, g.OK, g.Errored, g.Failed, g.Superseded, g.StrictRate(), g.CleanRate()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			notes := strings.Join(tab.OutcomeNotes, "\n")
			if note := "8 attempts for 4 cells: 4 superseded by a retry (provider-error ×4)"; !strings.Contains(notes, note) {
				t.Errorf("outcome notes lack %q:\n%s", note, notes)
			}
		})
	}
}

// TestReportAndDiffAgreeOnEachCellsOutcome stops the two commands judging
// the same cells differently: fed the same attempts (retries, rows out of
// order, one attempt number recorded twice), the report's strict and clean
// rates equal the pass rates diff compares.
func TestReportAndDiffAgreeOnEachCellsOutcome(t *testing.T) {
	var rows []Row
	rows = append(rows, retried("r1", "t", "x", 0, 1, 1, "provider-error", "")...)
	rows = append(rows, retried("r1", "t", "x", 1, 1, 1, "", "timeout")...)
	rows = append(rows, retried("r1", "t", "x", 2, 1, 1, "timeout", "sandbox-refused")...)
	rows = append(rows, retried("r1", "t", "x", 3, 1, 1, "verify-failed")...)
	rows = append(rows, retried("r1", "t", "x", 4, 1, 1, "")...)
	// The same attempt number twice: the later row read wins in both.
	dup := retried("r1", "t", "x", 5, 1, 1, "infra-error")
	dup = append(dup, dup[0])
	dup[1].OK, dup[1].ErrorKind = true, ""
	rows = append(rows, dup...)
	slices.Reverse(rows[:4])

	g := tabulate(rows, TabulateOptions{}).Groups[0]
	d := NewDiffer(DiffOptions{Alpha: 0.05})
	for i := range rows {
		d.Add(SideA, &rows[i])
		d.Add(SideB, &rows[i])
	}
	lines := d.Result(nil).Lines
	got := map[string]float64{"strict": g.StrictRate(), "clean": g.CleanRate()}
	want := map[string]float64{"strict": lines[0].Cmp.A.Center, "clean": lines[1].Cmp.A.Center}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report's rates against diff's (-diff +report):\n%s", diff)
	}
	if g.Cells != 6 || g.OK != 3 {
		t.Errorf("cells %d, ok %d; want 6 cells, 3 ok (reps 0, 4, 5)", g.Cells, g.OK)
	}
}

// TestACellsCostSumsItsAttemptsAndItsQualityIsItsFinalAttempts stops a
// retried cell looking cheaper (only its last attempt's spend) or being
// counted twice in a median (once per attempt), and its review quality
// coming from an attempt it superseded. An attempt that measured nothing
// leaves its cell's sum a lower bound, and the notes say so.
func TestACellsCostSumsItsAttemptsAndItsQualityIsItsFinalAttempts(t *testing.T) {
	rows := retried("r1", "review", "x", 0, 0.25, 1000, "artifact-invalid", "provider-error", "")
	rows[0].Values[WeightedF1] = 0.1
	rows[2].Values[WeightedF1] = 0.9
	rows = append(rows, retried("r1", "review", "x", 1, 0.5, 4000, "")...)
	rows[3].Values[WeightedF1] = 0.7
	tab := tabulate(rows, TabulateOptions{Metrics: []Metric{CostUSD, Turns, WallTime, WeightedF1}, Keep: []Metric{CostUSD}})
	g := tab.Groups[0]
	type spread struct {
		N, Partial, Attempts int
		Center, Sum          float64
	}
	got := map[string]spread{}
	for _, m := range []Metric{CostUSD, Turns, WallTime, WeightedF1} {
		s := g.Metrics[m]
		got[m.Name()] = spread{s.N, s.Partial, s.Attempts, s.Center, s.Sum}
	}
	want := map[string]spread{
		// rep 0: 0.25 + NULL + 0.25 = 0.5, a lower bound; rep 1: 0.5.
		"cost":        {N: 2, Partial: 1, Attempts: 3, Center: 0.5, Sum: 1},
		"turns":       {N: 2, Partial: 1, Attempts: 3, Center: 1.5, Sum: 3},
		"wall time":   {N: 2, Partial: 0, Attempts: 4, Center: 3500, Sum: 7000},
		"weighted F1": {N: 2, Partial: 0, Attempts: 2, Center: 0.8, Sum: 1.6},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("per-cell spreads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{0.5, 0.5}, g.Values[CostUSD], approx); diff != "" {
		t.Errorf("kept cost values (-want +got):\n%s", diff)
	}
	if g.CostComplete() {
		t.Errorf("CostComplete with an unmeasured attempt's cost")
	}
	notes := strings.Join(tab.MetricNotes, "\n")
	if note := "so its sum is a lower bound: cost 1, turns 1 of 2 cells"; !strings.Contains(notes, note) {
		t.Errorf("metric notes lack %q:\n%s", note, notes)
	}
}

// TestCellsAreKeptApartByRunAndTask stops cells of different runs, or of
// different tasks of one arm, being merged into one because they share a
// rep: grouped by arm, each (run, task, rep) is its own cell.
func TestCellsAreKeptApartByRunAndTask(t *testing.T) {
	var rows []Row
	for _, run := range []string{"r1", "r2"} {
		for _, task := range []string{"t1", "t2"} {
			rows = append(rows, retried(run, task, "x", 0, 1, 1, "")...)
		}
	}
	rows[3].OK, rows[3].ErrorKind = false, "verify-failed"
	g := tabulate(rows, TabulateOptions{}).Groups[0]
	if g.Cells != 4 || g.Attempts != 4 || g.Retried != 0 || g.OK != 3 {
		t.Errorf("cells %d, attempts %d, retried %d, ok %d; want 4, 4, 0, 3", g.Cells, g.Attempts, g.Retried, g.OK)
	}
}

// tabulate tabulates rows in one go.
func tabulate(rows []Row, opts TabulateOptions) *Tabulation {
	t := NewTabulator(opts)
	for i := range rows {
		t.Add(&rows[i])
	}
	return t.Result()
}
