package view

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestAPageIsNeverOlderThanItsFile stops the viewer's cache of computed
// results (a run's tables and grid, a comparison, a trend) from showing a
// file as it was: after each change a writer makes while the viewer is
// serving — an attempt added to a run, a score recorded —
// every page the long-running viewer serves is the page a viewer started
// afresh on the file serves, and each change shows on at least one page.
func TestAPageIsNeverOlderThanItsFile(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	long := newTestServer(t, f, Options{})
	paths := []string{"/run/" + f.runB, "/run/" + f.runB + "?by=task", "/compare?a=" + f.runA + "&b=" + f.runB,
		"/trend?by=day", "/trend?by=day&metric=cost_usd"}
	var before map[string]string
	step := func(what string) {
		t.Helper()
		fresh := newTestServer(t, f, Options{})
		now := map[string]string{}
		for _, p := range paths {
			// Twice from the long-running viewer: the second is served
			// from its cache.
			for range 2 {
				resp, got := get(t, http.DefaultClient, long.URL+p)
				_, want := get(t, http.DefaultClient, fresh.URL+p)
				if resp.StatusCode != http.StatusOK || got != want {
					t.Errorf("%s: %s: the long-running viewer's page (status %d) is not a fresh viewer's:\n%s\n---\n%s",
						what, p, resp.StatusCode, got, want)
				}
				now[p] = got
			}
		}
		if before != nil {
			changed := false
			for p := range now {
				changed = changed || now[p] != before[p]
			}
			if !changed {
				t.Errorf("%s: no page changed", what)
			}
		}
		before = now
	}
	step("as made")

	db := f.openWritable(t)
	defer db.Close()
	cost, in := 7.5, int64(900)
	r := &store.Result{RunID: f.runB, Task: "t1", Arm: "a", Rep: 1, Attempt: 1, StartedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		OK: false, ErrorKind: wfb.KindTimeout, ProcessState: wfb.StateTimeout, CostUSD: &cost, InputTokens: &in, Agent: "claude"}
	if err := db.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	step("an attempt added")

	f1 := 0.5
	if err := db.InsertScore(ctx, &store.Score{AttemptID: r.AttemptID, LabelsDigest: "d", TP: 1, WeightedF1: &f1}); err != nil {
		t.Fatal(err)
	}
	step("a score recorded")
}
