package store

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// TestTheViewsSpellTheVocabularysRules stops the SQL views from counting a
// cell or a cost by another rule than the one the commands use (package
// wfb): cells_v must pick the final attempt and call it ok, failed or
// errored as wfb.Cell does for every error kind (and one wfb does not
// know), and measured_results_v's usage_cost_usd must be wfb.Cost for every
// combination of usage source, metered and agent cost. Before migration
// 0009, arm_summary_v summed the agents' cost and counted attempts as ok or
// failed, while wfb report counted cells by the wire's cost.
func TestTheViewsSpellTheVocabularysRules(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	kinds := append(append([]string{""}, wfb.ErrorKinds...), "a-kind-wfb-does-not-know")
	costs := []*float64{nil, ptr(0.0), ptr(0.25)}
	sources := []string{"", wfb.UsageMetered, wfb.UsageReported}
	want := map[string]wfb.Cell{}
	wantCost := map[string]*float64{}
	n := 0
	for ki, kind := range kinds {
		// Each cell has a first attempt that failed with another kind and
		// a final one with this kind: the final one decides.
		for attempt := 1; attempt <= 2; attempt++ {
			n++
			r := okResult(fmt.Sprintf("att-%d", n))
			r.Task, r.Rep, r.Attempt = "cells", ki, attempt
			r.OK, r.ErrorKind = kind == "", kind
			if attempt == 1 {
				r.OK, r.ErrorKind = false, wfb.KindProviderError
			}
			src, metered, agent := sources[n%3], costs[(n/3)%3], costs[(n/9)%3]
			r.UsageSource, r.MeteredCostUSD, r.CostUSD = src, metered, agent
			if agent != nil {
				r.CostSource = "reported"
			}
			if err := insertAnyKind(ctx, d, r); err != nil {
				t.Fatal(err)
			}
			c := want[fmt.Sprint(ki)]
			c.Add(r.Attempt, r.OK, r.ErrorKind)
			want[fmt.Sprint(ki)] = c
			wantCost[r.AttemptID], _ = wfb.Cost(src, metered, agent)
		}
	}
	_, rows, err := d.Query(ctx, `SELECT rep, attempts, final_attempt, outcome FROM cells_v WHERE task = 'cells'`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]wfb.Cell{}
	outcomes := map[string]wfb.Outcome{"ok": wfb.OutcomeOK, "failed": wfb.OutcomeFailed, "errored": wfb.OutcomeErrored}
	for _, r := range rows {
		c := wfb.Cell{Attempts: int(r[1].(int64)), Final: int(r[2].(int64)), Outcome: outcomes[r[3].(string)]}
		if c.Outcome != wfb.OutcomeOK {
			c.Kind = kinds[r[0].(int64)]
		}
		got[fmt.Sprint(r[0])] = c
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells_v against wfb.Cell (-want +got):\n%s", diff)
	}
	_, rows, err = d.Query(ctx, `SELECT m.attempt_id, m.usage_cost_usd, m.usage_cost_source, `+UsageCostSQL("x")+`, `+UsageCostSourceSQL("x")+`
		FROM measured_results_v m JOIN results x ON x.attempt_id = m.attempt_id WHERE m.task = 'cells'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w := wantCost[r[0].(string)]
		switch {
		case w == nil && r[1] != nil, w != nil && r[1] == nil, w != nil && r[1].(float64) != *w:
			t.Errorf("%s: usage_cost_usd %v, want %v", r[0], r[1], show(w))
		}
		if r[1] != r[3] || r[2] != r[4] {
			t.Errorf("%s: the view says %v (%v), UsageCostSQL %v (%v)", r[0], r[1], r[2], r[3], r[4])
		}
	}
}

// insertAnyKind inserts r, through raw SQL when its kind is one the store
// refuses (a row another wfb version or a merge may bring).
func insertAnyKind(ctx context.Context, d *DB, r *Result) error {
	if r.ErrorKind == "" || wfb.KindOrder(r.ErrorKind) < len(wfb.ErrorKinds) {
		return d.InsertResult(ctx, r)
	}
	_, err := d.db.ExecContext(ctx, `INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, error_kind,
		usage_source, metered_cost_usd, cost_usd) VALUES (?, ?, ?, ?, ?, ?, '2026-01-01T00:00:00.000Z', 0, ?, ?, ?, ?)`,
		r.RunID, r.AttemptID, r.Task, r.Arm, r.Rep, r.Attempt, r.ErrorKind, nullString(r.UsageSource), nullFloat(r.MeteredCostUSD), nullFloat(r.CostUSD))
	return err
}

func show(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestArmAndRunSummariesCountCellsAndTheOneCost stops a summary view from
// counting attempts where it says cells, or the agent's cost where the
// wire priced one: one cell retried after a provider error (two attempts,
// one cell ok), one failed, one errored, one attempt the wire priced apart
// from the agent's figure, one unmeasured.
func TestArmAndRunSummariesCountCellsAndTheOneCost(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	add := func(id string, rep, attempt int, kind string, src string, metered, agent *float64) {
		r := okResult(id)
		r.Rep, r.Attempt = rep, attempt
		r.OK, r.ErrorKind = kind == "", kind
		r.UsageSource, r.MeteredCostUSD, r.CostUSD = src, metered, agent
		if agent != nil {
			r.CostSource = "reported"
		}
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	add("a1", 0, 1, wfb.KindProviderError, "", nil, nil)
	add("a2", 0, 2, "", wfb.UsageMetered, ptr(0.01), ptr(0.5))
	add("a3", 1, 1, wfb.KindVerifyFailed, wfb.UsageReported, nil, ptr(0.25))
	add("a4", 2, 1, wfb.KindSandboxRefused, "", nil, nil)
	want := []any{int64(3), int64(1), int64(1), int64(1), int64(4), int64(2), 0.26, int64(1), int64(2), 0.75}
	arm := queryOne(t, d, `SELECT cells, ok, failed, errored, attempts, cost_usd_n, cost_usd_sum, cost_usd_metered_n,
		agent_cost_usd_n, agent_cost_usd_sum FROM arm_summary_v`)
	run := queryOne(t, d, `SELECT cells, ok, failed, errored, attempts, cost_usd_n, cost_usd_sum, cost_usd_metered_n,
		agent_cost_usd_n, agent_cost_usd_sum FROM run_summary_v`)
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })
	if diff := cmp.Diff(want, arm, approx); diff != "" {
		t.Errorf("arm_summary_v (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, run, approx); diff != "" {
		t.Errorf("run_summary_v (-want +got):\n%s", diff)
	}
}

// TestAnOlderFilesChecksGetTheirVerdicts stops rows recorded before the
// verdicts were typed from reading as unchecked: the upgrade gives each its
// verdict from its text, and the rows stay append-only after it.
func TestAnOlderFilesChecksGetTheirVerdicts(t *testing.T) {
	ctx := context.Background()
	path, raw := fileAtVersion(t, 8)
	if _, err := raw.Exec(`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('old', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'old')`); err != nil {
		t.Fatal(err)
	}
	for i, c := range [][2]any{{"agree", "agree"}, {"disagree: input_tokens wire 3, agent 2", "disagree: wire $1, agent $2"}, {"refused: cache_read_input_tokens: x", nil}, {nil, nil}} {
		if _, err := raw.Exec(`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, usage_check, cost_check)
			VALUES ('old', ?, 't', 'a', ?, 1, '2026-01-01T00:00:00.000Z', 1, ?, ?)`, fmt.Sprint("att-", i), i, c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, rows, err := d.Query(ctx, `SELECT usage_verdict, cost_verdict FROM results ORDER BY rep`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"agree", "agree"}, {"disagree", "disagree"}, {"refused", nil}, {nil, nil}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("verdicts after the upgrade (-want +got):\n%s", diff)
	}
	if _, err := d.db.ExecContext(ctx, `UPDATE results SET ok = 0`); err == nil {
		t.Error("results took an update after the upgrade: the append-only guard is gone")
	}
}

// TestAVerdictAndItsTextGoTogether stops a row from being stored with a
// verdict its text does not say, or with one of the two alone.
func TestAVerdictAndItsTextGoTogether(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, c := range []struct {
		name string
		edit func(*Result)
	}{
		{"text alone", func(r *Result) { r.UsageCheck = "agree" }},
		{"verdict alone", func(r *Result) { r.CostVerdict = wfb.VerdictAgree }},
		{"another verdict", func(r *Result) {
			r.UsageVerdict, r.UsageCheck = wfb.VerdictAgree, "disagree: input_tokens wire 3, agent 2"
		}},
		{"refused cost", func(r *Result) { r.CostVerdict, r.CostCheck = wfb.VerdictRefused, "refused: x" }},
	} {
		r := okResult("att-" + c.name)
		c.edit(r)
		if err := d.InsertResult(ctx, r); err == nil {
			t.Errorf("%s: stored", c.name)
		}
	}
	if _, err := d.db.ExecContext(ctx, `INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, usage_check)
		VALUES ('run-1', 'raw', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1, 'agree')`); err == nil {
		t.Error("the schema took a usage_check without its verdict")
	}
}

// TestAnUnwitnessedVerdictIsStored: an attempt whose agent reported usage
// that no request on the wire witnessed gets a usage verdict of its own,
// which both the store's validation and the file's trigger (migration
// 0010) take; a cost cannot be unwitnessed, and a word outside the
// vocabulary is still refused by the file itself.
func TestAnUnwitnessedVerdictIsStored(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	r := okResult("att-unwitnessed")
	r.UsageVerdict, r.UsageCheck = wfb.VerdictUnwitnessed, "unwitnessed: the agent reported usage (input 2000) but no request reached the meter"
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatalf("an unwitnessed row was refused: %v", err)
	}
	_, rows, err := d.Query(ctx, `SELECT usage_verdict FROM results WHERE attempt_id = 'att-unwitnessed'`)
	if err != nil || !cmp.Equal([][]any{{"unwitnessed"}}, rows) {
		t.Errorf("usage_verdict %v (%v), want unwitnessed", rows, err)
	}
	c := okResult("att-cost")
	c.CostVerdict, c.CostCheck = wfb.VerdictUnwitnessed, "unwitnessed: x"
	if err := d.InsertResult(ctx, c); err == nil {
		t.Error("a cost verdict of unwitnessed was stored")
	}
	for i, v := range []string{"unwitnessed", "bogus"} {
		_, err := d.db.ExecContext(ctx, `INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, usage_check, usage_verdict)
			VALUES ('run-1', ?, 't', 'a', ?, 1, '2026-01-01T00:00:00.000Z', 1, ?, ?)`, "raw-"+v, 70+i, v+": x", v)
		if (err == nil) != (v == "unwitnessed") {
			t.Errorf("the file's trigger on usage_verdict %q: %v", v, err)
		}
	}
}
