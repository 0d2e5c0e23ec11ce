package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// trendDays feeds a Trender days of arm x, cells cells each: cost drawn
// from N(mean(day), 0.2), pass with probability pass(day).
func trendDays(rng *rand.Rand, days, cells int, mean, pass func(int) float64) *Trend {
	names := make([]string, days)
	for i := range names {
		names[i] = fmt.Sprintf("day-%d", i)
	}
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, By: "day"}, names, -1)
	for day := range days {
		for rep := range cells {
			r := Row{RunID: names[day], Task: "t", Arm: "x", Rep: rep, Attempt: 1, OK: rng.Float64() < pass(day), Values: Unmeasured()}
			if !r.OK {
				r.ErrorKind = "verify-failed"
			}
			r.Values[CostUSD] = mean(day) + 0.2*rng.NormFloat64()
			tr.Add(day, &r)
		}
	}
	return tr.Result(nil)
}

// TestTrendAACalibrationRarelyFlagsAChange stops a trend that cries wolf:
// days drawn from one distribution must be flagged as changed in at most
// alpha of the steps, per step and per metric, as diff's calibration
// requires of its tests.
func TestTrendAACalibrationRarelyFlagsAChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 15))
	const trials, days = 400, 5
	flags := map[string][]int{}
	for range trials {
		for _, p := range trendDays(rng, days, 15, func(int) float64 { return 1 }, func(int) float64 { return 0.7 }).Points {
			if flags[p.Key] == nil {
				flags[p.Key] = make([]int, days)
			}
			if p.Changed() {
				flags[p.Key][dayIndex(p.Bucket)]++
			}
		}
	}
	for key, perDay := range flags {
		total := 0
		for day := 1; day < days; day++ {
			rate := float64(perDay[day]) / trials
			total += perDay[day]
			if rate > 0.05 {
				t.Errorf("%s: step into day %d flagged in %.3f of %d A/A trials; want ≤ 0.05", key, day, rate, trials)
			}
		}
		t.Logf("%s: A/A false change flags %d of %d steps (%.4f)", key, total, trials*(days-1), float64(total)/float64(trials*(days-1)))
		if key == "cost_usd" && total == 0 {
			t.Errorf("cost never flagged: the test cannot say anything")
		}
	}
	if len(flags) != 3 {
		t.Errorf("metrics followed: %v", flags)
	}
}

func dayIndex(b string) int {
	var i int
	fmt.Sscanf(b, "day-%d", &i)
	return i
}

// TestTrendFlagsAPlantedShiftOnlyWhereItHappens stops a trend that misses
// a real step (cost up 50% and pass rate down from 90% to 30% on day 3)
// or smears it over the steady days after.
func TestTrendFlagsAPlantedShiftOnlyWhereItHappens(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 16))
	shifted := func(day int) bool { return day >= 3 }
	tr := trendDays(rng, 5, 30, func(d int) float64 {
		if shifted(d) {
			return 1.5
		}
		return 1
	}, func(d int) float64 {
		if shifted(d) {
			return 0.3
		}
		return 0.9
	})
	for _, p := range tr.Points {
		if p.Key == "clean_pass_rate" {
			continue
		}
		if want := dayIndex(p.Bucket) == 3; p.Changed() != want {
			t.Errorf("%s on %s: changed = %v; want %v (step %v)", p.Key, p.Bucket, p.Changed(), want, p.Step)
		}
	}
}

// TestTrendKeepsAnArmThatSkippedABucket stops an arm with no attempts in a
// middle bucket from vanishing from the whole trend: its other buckets
// were measured and are shown, the bucket it skipped is not measured, and
// neither step touching the gap is flagged as a change.
func TestTrendKeepsAnArmThatSkippedABucket(t *testing.T) {
	names := []string{"day-0", "day-1", "day-2"}
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, By: "day"}, names, -1)
	for day := range names {
		for _, arm := range []string{"x", "y"} {
			if arm == "y" && day == 1 {
				continue
			}
			for rep := range 8 {
				r := Row{RunID: names[day], Task: "t", Arm: arm, Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
				r.Values[CostUSD] = 1 + float64(day) + 0.01*float64(rep)
				tr.Add(day, &r)
			}
		}
	}
	got := map[string]bool{}
	for _, p := range tr.Result(nil).Points {
		if p.Key != "cost_usd" {
			continue
		}
		measured := !math.IsNaN(p.Summary.Center)
		got[p.Arm+" "+p.Bucket] = measured
		if want := !(p.Arm == "y" && p.Bucket == "day-1"); measured != want {
			t.Errorf("arm %s on %s: measured = %v (%v); want %v", p.Arm, p.Bucket, measured, p.Summary, want)
		}
		if p.Arm == "y" && p.Changed() {
			t.Errorf("arm y on %s: a step across the gap flagged as a change", p.Bucket)
		}
		if p.Arm == "x" && p.Bucket != "day-0" && !p.Changed() {
			t.Errorf("arm x on %s: a real step not flagged", p.Bucket)
		}
	}
	if len(got) != 6 {
		t.Errorf("points %v; want both arms on all three days", got)
	}
}

// TestTrendNotesGroupedByStepAreItsFootnotes stops a page that groups a
// trend's notes by step from losing or inventing one: the legend is the
// first footnote, and each step's notes, prefixed with its title, are the
// rest in order. (The viewer's trend page showed them as one list of dozens,
// the legend a paragraph among them.)
func TestTrendNotesGroupedByStepAreItsFootnotes(t *testing.T) {
	names := []string{"day-0", "day-1", "day-2"}
	tr := NewTrender(TrendOptions{Alpha: 0.05, Metrics: []Metric{CostUSD}, By: "day"}, names, -1)
	for day := range names {
		// Arm y only on day 1: every step has a note about it.
		for _, arm := range []string{"x", "y"} {
			if arm == "y" && day != 1 {
				continue
			}
			for rep := range 3 {
				r := Row{RunID: names[day], Task: "t", Arm: arm, Rep: rep, Attempt: 1, OK: true, Values: Unmeasured()}
				r.Values[CostUSD] = 1
				tr.Add(day, &r)
			}
		}
	}
	res := tr.Result(nil)
	if len(res.Footnotes) < 3 || res.Legend != res.Footnotes[0] {
		t.Fatalf("legend %q; footnotes %q", res.Legend, res.Footnotes)
	}
	regrouped := []string{res.Legend}
	var titles []string
	for _, g := range res.StepNotes {
		titles = append(titles, g.Title)
		for _, n := range g.Notes {
			regrouped = append(regrouped, g.Title+": "+n)
		}
	}
	if diff := cmp.Diff(res.Footnotes, regrouped); diff != "" {
		t.Errorf("footnotes (-want +regrouped):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"day day-0 → day-1", "day day-1 → day-2"}, titles); diff != "" {
		t.Errorf("step titles (-want +got):\n%s", diff)
	}
}
