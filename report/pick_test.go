package report

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReportPicksTheLatestRunOrTheNamedRunsOrOneFilter stops `wfb report`
// from reporting something other than what it was asked: no argument is
// the latest bench run, with a note saying which and why; several names
// are the union of their runs, each once; a filter is the only argument or
// refused, as bad input.
func TestReportPicksTheLatestRunOrTheNamedRunsOrOneFilter(t *testing.T) {
	ctx := context.Background()
	db, cols, runs := openFixture(t)
	tests := []struct {
		name    string
		args    []string
		want    []string // run ids; nil with a filter
		filter  bool
		refusal string
	}{
		{"no argument: the latest run", nil, []string{"r2"}, false, ""},
		{"a run and a label, each once", []string{"r1", "base", "cand"}, []string{"r1", "r2"}, false, ""},
		{"one filter", []string{"arm=candidate"}, nil, true, ""},
		{"a filter beside a run", []string{"r1", "arm=candidate"}, nil, false,
			"a filter (arm=candidate) must be the only argument; put every condition in it, comma-separated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Pick(ctx, db, cols, runs, tc.args)
			if tc.refusal != "" {
				if !errors.Is(err, ErrSelection) || err.Error() != tc.refusal {
					t.Fatalf("Pick = %v; want an ErrSelection saying %q", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sel.RunIDs); diff != "" || sel.IsFilter() != tc.filter {
				t.Errorf("runs (-want +got):\n%s\nfilter %v, want %v", diff, sel.IsFilter(), tc.filter)
			}
		})
	}
	note, err := LatestNote(ctx, db, runs, "r2")
	if want := "report of run r2 (label cand, 12 cells), the newest; name another: wfb report RUN|LABEL"; err != nil || note != want {
		t.Errorf("LatestNote = %q, %v; want %q", note, err, want)
	}
	withSession := append(runs[:2:2], RunInfo{ID: "s1", Kind: "session", StartedAt: "2026-12-01T00:00:00.000Z"})
	note, err = LatestNote(ctx, db, withSession, "r2")
	if want := "report of run r2 (label cand, 12 cells), the newest bench run; passed over the 1 ad-hoc session (wfb session) started since; name another: wfb report RUN|LABEL"; err != nil || note != want {
		t.Errorf("LatestNote = %q, %v; want %q", note, err, want)
	}
}

// TestATitleNamesTheRunItsLabelStatusAndBudget stops a report titled by
// something other than what it reports.
func TestATitleNamesTheRunItsLabelStatusAndBudget(t *testing.T) {
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{RunIDs: []string{"r1"}}, "run r1 (base), complete"},
		{Selection{RunIDs: []string{"r2"}}, "run r2 (cand), complete, budget $2.5"},
		{Selection{RunIDs: []string{"r1", "r3"}}, "2 runs (r1, r3)"},
		{Selection{Spec: "arm=candidate", Conds: []Cond{{Key: "arm", Values: []string{"candidate"}}}}, "filter arm=candidate"},
	} {
		if got := Describe(tc.sel, fixtureRuns); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.sel.RunIDs, got, tc.want)
		}
	}
}

// TestATrendNeedsTwoBucketsAndAKnownBaseline stops a trend that compares
// nothing (one bucket) or against a bucket it does not have, and an HTML
// page whose trend is by day when the runs span one day only.
func TestATrendNeedsTwoBucketsAndAKnownBaseline(t *testing.T) {
	ctx := context.Background()
	db, cols, runs := openFixture(t)
	all := Selection{Spec: "all"}
	present, err := RunsWithRows(ctx, db, all)
	if err != nil {
		t.Fatal(err)
	}
	opts := func(by string) TrendOptions { return TrendOptions{Alpha: 0.05, Metrics: cols.Metrics(), By: by} }
	tr, err := TrendOf(ctx, db, cols, runs, all, present, opts("day"), "2026-11-29")
	if err != nil || tr == nil || len(tr.Buckets) != 2 || tr.Baseline != "2026-11-29" {
		t.Fatalf("TrendOf by day = %+v, %v; want two days, the first the baseline", tr, err)
	}
	_, err = TrendOf(ctx, db, cols, runs, all, present, opts("day"), "2026-12-01")
	if want := "--baseline \"2026-12-01\": no such day among 2026-11-29, 2026-11-30"; !errors.Is(err, ErrSelection) || err.Error() != want {
		t.Errorf("an unknown baseline: %v; want %q", err, want)
	}
	oneDay := map[string]bool{"r1": true}
	var few *FewBucketsError
	if _, err := TrendOf(ctx, db, cols, runs, all, oneDay, opts("day"), ""); !errors.As(err, &few) || few.N != 1 || !errors.Is(err, ErrSelection) {
		t.Errorf("one day: %v; want a *FewBucketsError of 1 bucket", err)
	}
	if _, err := TrendOf(ctx, db, cols, runs, all, present, opts("week"), ""); !errors.Is(err, ErrSelection) || err.Error() != `--by "week": the buckets are day, label and run` {
		t.Errorf("--by week: %v", err)
	}
	page, err := PageTrend(ctx, db, cols, runs, all, present)
	if err != nil || page == nil || page.Options.By != "day" {
		t.Errorf("PageTrend over two days = %+v, %v; want by day", page, err)
	}
	if page, err := PageTrend(ctx, db, cols, runs, all, oneDay); err != nil || page != nil {
		t.Errorf("PageTrend over one run = %+v, %v; want none", page, err)
	}
}

// TestTrendMetricsAreNamedAsTheColumns stops --metric from accepting a
// name that shows nothing, and pass_rate from meaning other than the
// strict rate.
func TestTrendMetricsAreNamedAsTheColumns(t *testing.T) {
	keys, err := ParseTrendKeys("pass_rate, cost_usd,clean_pass_rate")
	if diff := cmp.Diff([]string{"strict_pass_rate", "cost_usd", "clean_pass_rate"}, keys); err != nil || diff != "" {
		t.Errorf("keys (-want +got):\n%s\n%v", diff, err)
	}
	if keys, err := ParseTrendKeys(""); err != nil || keys != nil {
		t.Errorf("no --metric: %v, %v; want every line", keys, err)
	}
	if _, err := ParseTrendKeys("speed"); !errors.Is(err, ErrSelection) {
		t.Errorf("an unknown metric: %v; want bad input", err)
	}
}
