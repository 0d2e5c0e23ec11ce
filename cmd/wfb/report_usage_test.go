package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// meteredFixture is a results file with two runs of one arm: in each, one
// attempt whose usage the wire and the agent agree on (1000 input tokens)
// and, in run m2, one whose agent reported 100 where the wire measured
// 5000.
func meteredFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close() // a reader then finds the file whole, its log checkpointed
	i64 := func(v int64) *int64 { return &v }
	start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	for n, id := range []string{"m1", "m2"} {
		if err := db.CreateRun(ctx, store.Run{ID: id, Kind: "run", StartedAt: start.Add(time.Duration(n) * time.Hour), Status: wfb.RunComplete, Harness: "test"}); err != nil {
			t.Fatal(err)
		}
		for rep, agent := range []int64{1000, 100} {
			wire, check := int64(1000), "agree"
			if rep == 1 {
				if id == "m1" {
					continue
				}
				wire, check = 5000, "disagree: input_tokens wire 5000, agent 100"
			}
			r := store.Result{RunID: id, AttemptID: fmt.Sprintf("%s-%d", id, rep), Task: "t", Arm: "a", Rep: rep, Attempt: 1,
				StartedAt: start.Add(time.Duration(n)*time.Hour + time.Duration(rep)*time.Minute), OK: true,
				InputTokens: i64(agent), MeteredInputTokens: i64(wire), UsageSource: wfb.UsageMetered, UsageCheck: check,
				UsageVerdict: wfb.Verdict(strings.SplitN(check, ":", 2)[0])}
			if err := db.InsertResult(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return path
}

// TestReportsUseTheWireAndCountDisagreements stops a report from showing
// the agent's usage where the wire measured other figures (unless asked
// to), and from hiding how many attempts per arm disagreed.
func TestReportsUseTheWireAndCountDisagreements(t *testing.T) {
	db := meteredFixture(t)
	for _, c := range []struct {
		usage []string
		want  string
	}{{nil, "3000"}, {[]string{"--usage", "metered"}, "3000"}, {[]string{"--usage", "reported"}, "550"}} {
		out, errOut, code := runWFB(t, false, append([]string{"report", "m2", "--format", "tsv", "--db", db}, c.usage...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.usage, code, errOut)
		}
		if !strings.Contains(out, "\t"+c.want+"\t") && !strings.Contains(out, "\t"+c.want+"\n") {
			t.Errorf("%v: the median input tokens %s are not in:\n%s", c.usage, c.want, out)
		}
	}
	out, _, _ := runWFB(t, false, "report", "m2", "--format", "markdown", "--db", db)
	if !strings.Contains(out, "usage disagreed with the provider's wire for 1 of 2 attempts") {
		t.Errorf("no disagreement count in:\n%s", out)
	}
	out, errOut, code := runWFB(t, false, "diff", "m1", "m2", "--format", "markdown", "--db", db)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "B: usage disagreed with the provider's wire (usage_check) for attempts of arm a 1") {
		t.Errorf("diff shows no disagreement count:\n%s", out)
	}
	for _, cmd := range []string{"report", "diff"} {
		args := []string{cmd, "--usage", "guessed", "--db", db}
		if cmd == "diff" {
			args = append(args, "m1", "m2")
		}
		if _, errOut, code := runWFB(t, false, args...); code != exitBadInput || !strings.Contains(errOut, `--usage "guessed"`) {
			t.Errorf("%s --usage guessed: exit %d, %q", cmd, code, errOut)
		}
	}
}
