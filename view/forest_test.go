package view

import (
	"context"
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// The SVG of a forest plot, as much of it as the test reads.
type svgForest struct {
	Key   string    `xml:"data-key,attr"`
	Texts []svgText `xml:"text"`
	Rows  []svgRow  `xml:"g"`
}

type svgText struct {
	Class string  `xml:"class,attr"`
	Side  string  `xml:"data-side,attr"`
	X     float64 `xml:"x,attr"`
	Body  string  `xml:",chardata"`
}

type svgRow struct {
	Class string    `xml:"class,attr"`
	Task  string    `xml:"data-task,attr"`
	Arm   string    `xml:"data-arm,attr"`
	Title string    `xml:"title"`
	Marks []svgMark `xml:"g"`
	Texts []svgText `xml:"text"`
}

type svgMark struct {
	Side string `xml:"data-side,attr"`
	Line struct {
		Class string  `xml:"class,attr"`
		X1    float64 `xml:"x1,attr"`
		X2    float64 `xml:"x2,attr"`
	} `xml:"line"`
	Circle struct {
		Cx float64 `xml:"cx,attr"`
	} `xml:"circle"`
}

// addCompareArms adds to runs A and B an arm "x" over eight tasks whose
// cost rises from 0.25 to 0.35 (a significant change), and an arm named
// with markup whose cost only B measured.
func addCompareArms(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	db := f.openWritable(t)
	defer db.Close()
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for side, run := range []string{f.runA, f.runB} {
		for i := range 8 {
			cost := 0.25 + 0.1*float64(side)
			for _, arm := range []string{"x", injection} {
				r := &store.Result{RunID: run, Task: fmt.Sprintf("x%d", i), Arm: arm, Attempt: 1, StartedAt: start, OK: true,
					ProcessState: wfb.StateExited, Agent: "claude", AgentVersion: "2.0.1"}
				if arm == "x" || side == 1 {
					r.CostUSD = &cost
				}
				if err := db.InsertResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// diffOfFixture is wfb diff of run A with run B, by the report's builders.
func diffOfFixture(t *testing.T, f *fixture, byTask bool) *report.Diff {
	t.Helper()
	ctx, db := context.Background(), f.open(t)
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := report.LoadRuns(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	d := report.NewDiffer(report.DiffOptions{ByTask: byTask, Alpha: 0.05, Metrics: cols.Metrics()})
	for side, spec := range []string{f.runA, f.runB} {
		sel, err := report.ResolveSelection(ctx, db, cols, runs, spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := report.LoadRows(ctx, db, cols, sel, func(r *report.Row) { d.Add(side, r) }); err != nil {
			t.Fatal(err)
		}
	}
	return d.Result(runs)
}

// parseForests reads every forest plot of a page as XML.
func parseForests(t *testing.T, body string) map[string]*svgForest {
	t.Helper()
	out := map[string]*svgForest{}
	for _, s := range regexp.MustCompile(`(?s)<svg class="forest".*?</svg>`).FindAllString(body, -1) {
		var f svgForest
		if err := xml.Unmarshal([]byte(s), &f); err != nil {
			t.Fatalf("a forest plot is not well-formed SVG: %v\n%s", err, s)
		}
		out[f.Key] = &f
	}
	return out
}

// value maps an x in the plot back to a value by the axis's ticks, and the
// most a value can be off by the plot's rounding to 0.1 pixel.
func (f *svgForest) value(t *testing.T) (func(x float64) float64, float64) {
	t.Helper()
	var xs, vs []float64
	for _, tx := range f.Texts {
		if tx.Class == "tick x" {
			v, err := strconv.ParseFloat(tx.Body, 64)
			if err != nil {
				t.Fatalf("%s: tick %q: %v", f.Key, tx.Body, err)
			}
			xs, vs = append(xs, tx.X), append(vs, v)
		}
	}
	if len(xs) < 2 {
		t.Fatalf("%s: %d ticks on the axis", f.Key, len(xs))
	}
	k := (vs[len(vs)-1] - vs[0]) / (xs[len(xs)-1] - xs[0])
	return func(x float64) float64 { return vs[0] + (x-xs[0])*k }, math.Abs(k) * 0.1
}

func (f *svgForest) row(task, arm string) *svgRow {
	for i := range f.Rows {
		if f.Rows[i].Task == task && f.Rows[i].Arm == arm {
			return &f.Rows[i]
		}
	}
	return nil
}

// The compare page draws each metric of the diff as a forest plot whose
// marks sit where the diff's figures are: each side's centre and interval
// ends, a significant change marked (and said in the row's title), a side
// without values said in words, never drawn at zero; an arm named with
// markup is escaped.
func TestTheCompareChartDrawsTheDiffsFigures(t *testing.T) {
	f := newFixture(t)
	addCompareArms(t, f)
	ts := newTestServer(t, f, Options{})
	for _, byTask := range []bool{false, true} {
		query := "/compare?a=" + f.runA + "&b=" + f.runB
		if byTask {
			query += "&by=task,arm"
		}
		resp, body := get(t, ts.Client(), ts.URL+query)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d\n%s", query, resp.StatusCode, body)
		}
		if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: an arm's markup reached the page unescaped", query)
		}
		plots := parseForests(t, body)
		df := diffOfFixture(t, f, byTask)
		unmeasured := regexp.MustCompile(`Not measured on either side, so not drawn: [^<]*`).FindString(body)
		rows, significant := 0, 0
		for i := range df.Lines {
			l := &df.Lines[i]
			p := plots[l.Key]
			if p == nil {
				if l.Cmp.A.N > 0 || l.Cmp.B.N > 0 || !strings.Contains(unmeasured, l.Name) {
					t.Errorf("%s: no forest plot for %s, which is measured or not said to be unmeasured (%q)", query, l.Key, unmeasured)
				}
				rows++
				continue
			}
			r := p.row(l.Task, l.Arm)
			if r == nil {
				t.Errorf("%s: %s: no row for task %q arm %q", query, l.Key, l.Task, l.Arm)
				continue
			}
			rows++
			if checkRow(t, p, r, l) {
				significant++
			}
		}
		if rows != len(df.Lines) || (!byTask && significant == 0) {
			t.Errorf("%s: %d rows for %d diff lines, %d marked significant (arm x's cost rose from 0.25 to 0.35 on 8 cells)", query, rows, len(df.Lines), significant)
		}
		if !byTask {
			checkFixedFigures(t, plots)
		}
	}
}

// checkRow compares one row with its diff line; it reports whether the
// row is marked significant.
func checkRow(t *testing.T, p *svgForest, r *svgRow, l *report.DiffLine) bool {
	t.Helper()
	at, tol := p.value(t)
	where := fmt.Sprintf("%s, task %q arm %q", l.Key, l.Task, l.Arm)
	marked := strings.Contains(r.Class, "significant")
	if want := l.Comparable() && l.Cmp.Significant; marked != want {
		t.Errorf("%s: marked significant %v, the diff says %v", where, marked, want)
	}
	if marked && !strings.Contains(r.Title, "significant at alpha 0.05") {
		t.Errorf("%s: the title does not say the change is significant: %q", where, r.Title)
	}
	var delta string
	for _, tx := range r.Texts {
		if tx.Class == "delta" {
			delta = tx.Body
		}
	}
	if !strings.Contains(delta, l.HumanDelta()) {
		t.Errorf("%s: Δ %q, the table says %q", where, delta, l.HumanDelta())
	}
	for side, s := range [2]struct {
		name string
		n    int
		c    float64
		lo   float64
		hi   float64
	}{{"A", l.Cmp.A.N, l.Cmp.A.Center, l.Cmp.A.Lo, l.Cmp.A.Hi}, {"B", l.Cmp.B.N, l.Cmp.B.Center, l.Cmp.B.Lo, l.Cmp.B.Hi}} {
		var m *svgMark
		for i := range r.Marks {
			if r.Marks[i].Side == s.name {
				m = &r.Marks[i]
			}
		}
		if s.n == 0 {
			said := false
			for _, tx := range r.Texts {
				said = said || (tx.Side == s.name && strings.Contains(tx.Body, "not measured"))
			}
			if m != nil || !said || !strings.Contains(delta, "not comparable") {
				t.Errorf("%s side %s: not measured, yet drawn %v, said %v, Δ %q", where, s.name, m != nil, said, delta)
			}
			continue
		}
		if m == nil {
			t.Errorf("%s side %s: measured (n %d) but not drawn", where, s.name, s.n)
			continue
		}
		for _, v := range []struct {
			what string
			x    float64
			want float64
		}{{"centre", m.Circle.Cx, s.c}, {"low end", m.Line.X1, s.lo}, {"high end", m.Line.X2, s.hi}} {
			want := report.ShownValue(l.Rate, l.Metric, v.want)
			if math.IsInf(want, 0) {
				if !strings.Contains(m.Line.Class, "open") {
					t.Errorf("%s side %s: the %s is unbounded, yet the bar is not drawn open (dashed): %q", where, side2(side), v.what, m.Line.Class)
				}
				continue
			}
			if got := at(v.x); math.Abs(got-want) > tol {
				t.Errorf("%s side %s: %s drawn at %g, the diff says %g", where, side2(side), v.what, got, want)
			}
		}
	}
	return marked
}

func side2(i int) string { return "AB"[i : i+1] }

// checkFixedFigures reads the figures the fixture fixes, not taken from
// the diff: arm x's cost 0.25 → 0.35, pass rate 100% on both sides, and
// the markup arm's cost not measured in A.
func checkFixedFigures(t *testing.T, plots map[string]*svgForest) {
	t.Helper()
	for _, c := range []struct {
		key, arm string
		side     int
		want     float64
	}{{"cost_usd", "x", 0, 0.25}, {"cost_usd", "x", 1, 0.35}, {"strict_pass_rate", "x", 0, 100}, {"strict_pass_rate", injection, 1, 100}} {
		p := plots[c.key]
		if p == nil || p.row("", c.arm) == nil {
			t.Errorf("%s: no row for arm %q", c.key, c.arm)
			continue
		}
		at, tol := p.value(t)
		r := p.row("", c.arm)
		if len(r.Marks) != 2 || math.Abs(at(r.Marks[c.side].Circle.Cx)-c.want) > tol {
			t.Errorf("%s arm %q side %s: marks %+v, want the centre at %g", c.key, c.arm, side2(c.side), r.Marks, c.want)
		}
	}
	if r := plots["cost_usd"].row("", injection); r == nil || !strings.Contains(r.Class, "nc") || !strings.Contains(r.Title, "A not measured") {
		t.Errorf("the markup arm's cost is not said to be not measured in A: %+v", r)
	}
}
