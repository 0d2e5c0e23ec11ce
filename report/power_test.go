package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// benchRuns feeds a Differ two runs of a bench of tasks tasks and one
// arm, reps repetitions each: A's cost per cell log-normal around 1 (task
// t0), 2 (t1), …, B's the same plus shift; A passes with probability
// passA, B with passB, independently.
func benchRuns(rng *rand.Rand, tasks, reps int, shift, passA, passB float64, det Detect) *Diff {
	d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, Detect: det})
	for side, run := range []string{"a", "b"} {
		for ti := range tasks {
			task := fmt.Sprintf("t%d", ti)
			for rep := range reps {
				pass := []float64{passA, passB}[side]
				r := Row{RunID: run, Task: task, Arm: "x", Rep: rep, Attempt: 1, OK: rng.Float64() < pass, Values: Unmeasured()}
				if !r.OK {
					r.ErrorKind = "verify-failed"
				}
				r.Values[CostUSD] = float64(ti+1)*math.Exp(0.4*rng.NormFloat64()) + float64(side)*shift
				d.Add(side, &r)
			}
		}
	}
	return d.Result(nil)
}

func lineOf(t *testing.T, df *Diff, key string) DiffLine {
	t.Helper()
	for _, l := range df.Lines {
		if l.Key == key {
			return l
		}
	}
	t.Fatalf("no line %s", key)
	return DiffLine{}
}

// TestDiffRunsItAsksForDetectTheChangeFourTimesInFive is the promise of
// --detect end to end: from a pilot's spread, diff says how many runs: per
// task would find a 20% rise in cost and a 15pp fall in pass rate; benches
// of that size, with that change planted, are then diffed, and the real
// diff finds it about 80% of the time — neither a bench too small to see
// the change nor one paying for repetitions it does not need.
func TestDiffRunsItAsksForDetectTheChangeFourTimesInFive(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 20))
	det := Detect{Rel: 0.20, PP: 15}
	pilot := benchRuns(rng, 2, 600, 0, 0.9, 0.9, det)
	cost, pass := lineOf(t, pilot, "cost_usd"), lineOf(t, pilot, "strict_pass_rate")
	shift := det.Rel * cost.Cmp.A.Center
	t.Logf("pilot: cost needs %d cells per arm (runs: %d), pass rate %d (runs: %d); cost detectable %.1f%%, pass rate %.1fpp",
		cost.Sens.Need, cost.NeededRuns(), pass.Sens.Need, pass.NeededRuns(), 100*cost.DetectableDelta(), pass.DetectableChange())
	if cost.Units != 2 || cost.NeededRuns() != (cost.Sens.Need+1)/2 {
		t.Fatalf("runs: %d for %d cells of two tasks", cost.NeededRuns(), cost.Sens.Need)
	}
	const trials = 300
	for _, c := range []struct {
		key         string
		runs        int
		shift, pass float64
	}{
		{"cost_usd", cost.NeededRuns(), shift, 0.9},
		{"strict_pass_rate", pass.NeededRuns(), 0, 0.75},
	} {
		hits := 0
		for range trials {
			if lineOf(t, benchRuns(rng, 2, c.runs, c.shift, 0.9, c.pass, Detect{}), c.key).Cmp.Significant {
				hits++
			}
		}
		rate := float64(hits) / trials
		t.Logf("%s at runs: %d: the planted change found in %.3f of %d benches", c.key, c.runs, rate, trials)
		if rate < 0.70 || rate > 0.90 {
			t.Errorf("%s at runs: %d: found in %.3f of %d benches, want 0.70–0.90", c.key, c.runs, rate, trials)
		}
	}
}

// TestNeededRunsDivideTheCellsByTheTasks stops a runs: that forgets a
// repetition of the bench runs every task: with three tasks per arm, the
// cells needed are three per run.
func TestNeededRunsDivideTheCellsByTheTasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 21))
	df := benchRuns(rng, 3, 40, 0, 0.9, 0.9, Detect{Rel: 0.2, PP: 15})
	for _, key := range []string{"cost_usd", "strict_pass_rate"} {
		l := lineOf(t, df, key)
		if l.Units != 3 || l.Sens.Need <= 0 || l.NeededRuns() != (l.Sens.Need+2)/3 {
			t.Errorf("%s: runs: %d for %d cells over %d tasks; want the cells / 3, rounded up", key, l.NeededRuns(), l.Sens.Need, l.Units)
		}
	}
}

// TestParseDetect stops a --detect that takes a number without a unit (is
// 10 a percentage or points?), a zero change, or a rate change of 100pp or
// more.
func TestParseDetect(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Detect
	}{
		{"10%", Detect{Rel: 0.1}},
		{"5pp", Detect{PP: 5}},
		{"10%,5pp", Detect{Rel: 0.1, PP: 5}},
		{" -2.5pp , +20% ", Detect{Rel: 0.2, PP: 2.5}},
	} {
		got, err := ParseDetect(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDetect(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"10", "0%", "100pp", "x%", "5pp,6pp", "", "NaN%"} {
		if d, err := ParseDetect(bad); err == nil {
			t.Errorf("ParseDetect(%q) = %v, want an error", bad, d)
		}
	}
}

// TestPowerFiguresDoNotChangeFromRunToRun stops the detectable change and
// the repetitions needed from depending on the order the groups' cells
// were gathered in (a map's order): tied values in several tasks, diffed
// over and over, must give the same figures every time.
func TestPowerFiguresDoNotChangeFromRunToRun(t *testing.T) {
	figures := func() string {
		d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{Turns, WallTime}, Detect: Detect{Rel: 0.1}})
		for side := range 2 {
			for task := range 6 {
				for rep := range 5 {
					r := Row{RunID: fmt.Sprint("run-", side), Task: fmt.Sprint("task-", task), Arm: "x", Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
					r.Values[Turns] = float64(2 + (task+rep)%3)
					r.Values[WallTime] = float64(1000*(1+task%2) + 100*side + 50*(rep%2))
					d.Add(side, &r)
				}
			}
		}
		var b strings.Builder
		for _, l := range d.Result(nil).Lines {
			fmt.Fprintf(&b, "%s %v %v %d\n", l.Key, l.DetectableChange(), l.DetectableDelta(), l.Sens.Need)
		}
		return b.String()
	}
	first := figures()
	for i := range 30 {
		if got := figures(); got != first {
			t.Fatalf("run %d gave\n%s\nthe first gave\n%s", i+2, got, first)
		}
	}
}

// TestSensitivityDoesNotDependOnTheOrderOfRows stops figures that change
// from one run of `wfb diff` to the next: the same attempts, added in
// another order (tasks reversed), give the same detectable change and
// need on every line. (The group's members come out of maps.)
func TestSensitivityDoesNotDependOnTheOrderOfRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 22))
	var rows [2][]Row
	for side, run := range []string{"a", "b"} {
		for ti := range 5 {
			for rep := range 8 {
				r := Row{RunID: run, Task: fmt.Sprintf("t%d", ti), Arm: "x", Rep: rep, Attempt: 1, OK: rng.Float64() < 0.8, Values: Unmeasured()}
				if !r.OK {
					r.ErrorKind = "verify-failed"
				}
				// Whole numbers, full of ties across tasks.
				r.Values[CostUSD] = float64(1 + rng.IntN(4))
				rows[side] = append(rows[side], r)
			}
		}
	}
	diff := func(reverse bool) *Diff {
		d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, Detect: Detect{Rel: 0.1, PP: 10}})
		for side := range rows {
			rs := slices.Clone(rows[side])
			if reverse {
				slices.Reverse(rs)
			}
			for i := range rs {
				d.Add(side, &rs[i])
			}
		}
		return d.Result(nil)
	}
	want := diff(false)
	for range 5 {
		got := diff(true)
		for i, l := range got.Lines {
			if w := want.Lines[i]; l.Key != w.Key || l.Sens != w.Sens {
				t.Errorf("%s: %+v in one order, %+v in another", l.Key, w.Sens, l.Sens)
			}
		}
	}
}

// TestAProportionsDetectableChangeIsInItsChangesUnit stops verdict
// accuracy's detectable change from being written in percentage points
// while its change is a fraction (change_unit ""): programs read both in
// one unit; people still read ±pp.
func TestAProportionsDetectableChangeIsInItsChangesUnit(t *testing.T) {
	d := NewDiffer(DiffOptions{Alpha: 0.05, Metrics: []Metric{VerdictCorrect}})
	for side := range 2 {
		for rep := range 40 {
			r := Row{RunID: fmt.Sprint("run-", side), Task: "t", Arm: "x", Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
			r.Values[VerdictCorrect] = float64((rep + side) % 2)
			d.Add(side, &r)
		}
	}
	for _, l := range d.Result(nil).Lines {
		if l.Key != "verdict_correct" {
			continue
		}
		det := l.DetectableChange()
		if math.IsNaN(det) || math.IsInf(det, 0) || det <= 0 || det > 1 {
			t.Fatalf("detectable change %v: want a fraction, as the change %v is", det, l.Change())
		}
		if got, want := humanDetectable(&l), fmt.Sprintf("±%.1fpp", 100*det); got != want {
			t.Errorf("people read %v, want %s", got, want)
		}
		return
	}
	t.Fatal("no verdict_correct line")
}
