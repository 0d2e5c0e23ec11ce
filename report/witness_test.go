package report

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestAReportSaysWhoseWordTheUsageIs stops usage only the agent witnessed
// from being shown as if it were measured, with nothing said: per arm, the
// attempts whose agent reported usage while no request reached the meter
// (unwitnessed) and those recorded with the meter off (agent-reported
// only) are counted in notes. A metered run's attempt whose agent reported
// no usage to witness is neither.
func TestAReportSaysWhoseWordTheUsageIs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	zero, in := int64(0), int64(2000)
	type att struct {
		arm     string
		tokens  *int64
		source  string
		verdict wfb.Verdict
	}
	for n, run := range []struct {
		id, config string
		atts       []att
	}{
		{"on", `{"command":"run","meter":"on"}`, []att{
			{"a", &in, wfb.UsageReported, wfb.VerdictUnwitnessed},
			{"a", &zero, wfb.UsageReported, ""}, // nothing to witness
			{"a", &in, wfb.UsageMetered, wfb.VerdictAgree},
			{"b", &in, wfb.UsageMetered, wfb.VerdictAgree},
		}},
		{"off", `{"command":"session","meter":"off"}`, []att{
			{"a", &in, wfb.UsageReported, ""},
			{"a", &zero, wfb.UsageReported, ""},
			{"a", nil, "", ""}, // no usage recorded at all
		}},
	} {
		if err := db.CreateRun(ctx, store.Run{ID: run.id, Kind: "run", StartedAt: start.Add(time.Duration(n) * time.Hour), Status: wfb.RunComplete, Harness: "test", Config: run.config}); err != nil {
			t.Fatal(err)
		}
		for rep, a := range run.atts {
			r := &store.Result{RunID: run.id, AttemptID: fmt.Sprintf("%s-%d", run.id, rep), Task: "t", Arm: a.arm, Rep: rep, Attempt: 1,
				StartedAt: start.Add(time.Duration(n)*time.Hour + time.Duration(rep)*time.Minute), OK: true,
				InputTokens: a.tokens, UsageSource: a.source, UsageVerdict: a.verdict}
			switch a.verdict {
			case wfb.VerdictAgree:
				r.MeteredInputTokens, r.UsageCheck = a.tokens, "agree"
			case wfb.VerdictUnwitnessed:
				r.UsageCheck = "unwitnessed: the agent reported usage (input 2000) but no request reached the meter"
			}
			if err := db.InsertResult(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	ro, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	cols, err := LoadColumns(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	// Run by run and every run at once: the two loader paths.
	for _, sel := range []Selection{{Spec: "on,off", RunIDs: []string{"on", "off"}}, {Spec: "all"}} {
		tab := NewTabulator(TabulateOptions{Metrics: cols.Metrics()})
		if err := LoadRows(ctx, ro, cols, sel, tab.Add); err != nil {
			t.Fatal(err)
		}
		res := tab.Result()
		notes := strings.Join(res.MetricNotes, "\n")
		for _, want := range []string{
			"a: unwitnessed: 1 of 6 attempts reported usage but made no request through the meter (usage_verdict unwitnessed)",
			"a: agent-reported only: 2 of 6 attempts' usage was not witnessed by the wire (meter off)",
		} {
			if !strings.Contains(notes, want) {
				t.Errorf("%s: the notes lack %q:\n%s", sel.Spec, want, notes)
			}
		}
		if strings.Contains(notes, "b: unwitnessed") || strings.Contains(notes, "b: agent-reported") {
			t.Errorf("%s: arm b, witnessed, is noted:\n%s", sel.Spec, notes)
		}
	}
}
