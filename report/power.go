package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/report/stats"
)

// Detect is the change `--detect` asks a sample size for: Rel, relative to
// A's centre, for the metrics compared by the Mann–Whitney U test (tokens,
// cost, turns, wall time); PP, in percentage points, for rates (pass rates,
// verdict accuracy). Zero means not asked.
type Detect struct {
	Rel, PP float64
}

// Asked reports whether any change was asked for.
func (d Detect) Asked() bool { return d.Rel != 0 || d.PP != 0 }

// String spells d as --detect takes it.
func (d Detect) String() string {
	var parts []string
	if d.Rel != 0 {
		parts = append(parts, strconv.FormatFloat(100*d.Rel, 'f', -1, 64)+"%")
	}
	if d.PP != 0 {
		parts = append(parts, strconv.FormatFloat(d.PP, 'f', -1, 64)+"pp")
	}
	return strings.Join(parts, ",")
}

// ParseDetect reads --detect: a relative change ending in % (for metrics),
// a change in percentage points ending in pp (for rates), or both
// separated by a comma: "10%", "5pp", "10%,5pp". A sign is allowed and
// ignored: a change is detectable or not whichever way it goes.
func ParseDetect(s string) (Detect, error) {
	var d Detect
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		unit := ""
		switch {
		case strings.HasSuffix(part, "pp"):
			unit = "pp"
		case strings.HasSuffix(part, "%"):
			unit = "%"
		default:
			return Detect{}, fmt.Errorf("--detect %q: %q wants a unit, %% for a relative change of a metric (10%%) or pp for a rate (5pp)", s, part)
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(part, unit), 64)
		v = math.Abs(v)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return Detect{}, fmt.Errorf("--detect %q: %q is not a number followed by %s", s, part, unit)
		case v == 0:
			return Detect{}, fmt.Errorf("--detect %q: a change of 0 cannot be detected; want e.g. 10%% or 5pp", s)
		case unit == "pp" && v >= 100:
			return Detect{}, fmt.Errorf("--detect %q: a rate cannot change by %vpp; want under 100pp", s, v)
		case unit == "pp" && d.PP != 0, unit == "%" && d.Rel != 0:
			return Detect{}, fmt.Errorf("--detect %q: %s given twice", s, unit)
		case unit == "pp":
			d.PP = v
		default:
			d.Rel = v / 100
		}
	}
	return d, nil
}

// shiftSensitivity is a metric line's Sensitivity from each side's sample,
// its values by task: the asked relative change becomes a shift of that
// share of A's median (none when A's median is 0 or unknown: a relative
// change from nothing has no size).
func shiftSensitivity(a, b *stats.Sample, center, alpha float64, det Detect) stats.Sensitivity {
	target := math.NaN()
	if det.Rel != 0 && center != 0 && !math.IsNaN(center) {
		target = det.Rel * math.Abs(center)
	}
	return stats.ShiftSensitivitySamples(a, b, alpha, stats.Power, target)
}

// rateTarget is the asked change of a rate, as a difference in [0, 1], or
// NaN.
func rateTarget(det Detect) float64 {
	if det.PP == 0 {
		return math.NaN()
	}
	return det.PP / 100
}

// isRate reports whether l's changes are in percentage points: the pass
// rates and the proportions (verdict accuracy).
func (l *DiffLine) isRate() bool { return l.Rate || l.Metric.Kind() == Proportion }

// DetectableChange is the smallest change l's test finds with 80% power
// at its n, in the unit of Change (percentage points for the pass rates, a
// fraction for a proportion such as verdict accuracy); +Inf when none
// could be found that often, NaN when not comparable.
func (l *DiffLine) DetectableChange() float64 {
	d := l.Sens.Detectable
	if !l.Comparable() {
		return math.NaN()
	}
	if l.Rate && !math.IsInf(d, 0) {
		return 100 * d
	}
	return d
}

// DetectableDelta is DetectableChange relative to A's centre, as Delta is;
// NaN when A's centre is 0 or the change is not finite.
func (l *DiffLine) DetectableDelta() float64 {
	d := l.Sens.Detectable
	if !l.Comparable() || math.IsInf(d, 0) || l.Cmp.A.Center == 0 {
		return math.NaN()
	}
	return d / math.Abs(l.Cmp.A.Center)
}

// NeededRuns is the bench's runs: that gives the needed cells per arm,
// with Units cells per repetition; 0 when not asked or out of reach.
func (l *DiffLine) NeededRuns() int {
	if l.Sens.Need <= 0 {
		return 0
	}
	return (l.Sens.Need + max(l.Units, 1) - 1) / max(l.Units, 1)
}

// humanDetectable spells the detectable change for people: ±pp for rates,
// ±% of A's centre for metrics (the metric's own unit when A's centre is
// 0), "none" when no change could be found at 80%, "any" when any could.
func humanDetectable(l *DiffLine) any {
	d := l.DetectableChange()
	switch {
	case math.IsNaN(d):
		return nil
	case math.IsInf(d, 1):
		return "none"
	case d == 0:
		return "any"
	case l.Rate:
		return fmt.Sprintf("±%.1fpp", d)
	case l.isRate():
		return fmt.Sprintf("±%.1fpp", 100*d)
	case !math.IsNaN(l.DetectableDelta()):
		return fmt.Sprintf("±%.1f%%", 100*l.DetectableDelta())
	}
	return "±" + text(humanValue(l.Metric, d))
}

// humanNeed spells the cells per arm needed for the asked change, with the
// bench's runs: that gives them.
func humanNeed(l *DiffLine) any {
	switch n := l.Sens.Need; {
	case n == 0:
		return nil
	case n < 0:
		return "out of reach"
	default:
		return fmt.Sprintf("%d (runs: %d)", n, l.NeededRuns())
	}
}

// machineNeed is the needed cells per arm for programs: NULL when not
// asked, or out of reach.
func machineNeed(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}

// powerNote explains the detectable column, and the needed one when
// --detect asked for it.
func powerNote(alpha float64, det Detect) string {
	s := fmt.Sprintf("detectable = the smallest change each line's test would find 4 times in 5 (80%% power at alpha %v) with the cells it has, judged from the observed spread: for metrics (Mann–Whitney U) every cell's value shifted by the same amount, shown relative to A's centre (normal approximation with the U statistic's variance under the shift within each task, over both sides' values around their own medians); for rates in pp from A's rate, in whichever direction it has room for (Fisher: normal approximation with continuity correction; paired McNemar: Connor's, the pairs' outcomes kept as strongly tied as observed); none = no change could be found that often at this n.", alpha)
	if det.Asked() {
		s += fmt.Sprintf(" n needed (--detect %s) = cells per arm (pairs when paired) to find that change, with runs: the bench's repetitions per task that give them; NULL where A's centre is 0 (a relative change from nothing has no size).", det)
		if det.Rel == 0 {
			s += " Metrics are not sized: --detect gave no relative change (e.g. 10%)."
		}
		if det.PP == 0 {
			s += " Rates are not sized: --detect gave no change in pp (e.g. 5pp)."
		}
	}
	return s
}
