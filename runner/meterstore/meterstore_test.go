package meterstore

// The metering proxy through the real path: a real mock provider over HTTP
// as the upstream, the real proxy on loopback, the requests filed in a real
// SQLite file and read back from it.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func startMeter(t *testing.T, db *store.DB) *Meter {
	t.Helper()
	m, err := Start(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// post sends a Messages request of model to base and returns the answer's
// body.
func post(t *testing.T, base, model string) []byte {
	t.Helper()
	resp, err := http.Post(base+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"`+model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func ptr(v int64) *int64 { return &v }

// TestARecordIsFiledAsItsRowWithNullsKept stops the conversion from turning
// a figure the wire lacked or carried as nonsense into a number, or losing
// what the wire carried: NULL stays NULL with the raw text and the reason
// kept, a measured 0 stays 0, an unanswered request has no status, and
// a first request is the retry of none.
func TestARecordIsFiledAsItsRowWithNullsKept(t *testing.T) {
	ttfb := 1500 * time.Microsecond
	r := meter.Record{
		ID: "req-1", AttemptID: "att-1", Seq: 2, Protocol: meter.ProtocolAnthropic, Method: "POST", Path: "/v1/messages",
		Status: 200, Latency: -time.Millisecond, TTFB: &ttfb, RetryOf: 1, Billed: true,
		Usage: meter.Usage{Semantics: wfb.SemanticsAnthropic,
			Input:         meter.Count{State: meter.Present, Value: 0, Native: "usage.input_tokens"},
			Output:        meter.Count{State: meter.Present, Value: 7, Native: "usage.output_tokens"},
			CacheRead:     meter.Count{State: meter.Nonsense, Raw: "-5", Native: "usage.cache_read_input_tokens", Why: "usage.cache_read_input_tokens is negative (-5)"},
			CacheCreation: meter.Count{State: meter.Absent, Native: "usage.cache_creation_input_tokens", Why: "usage.cache_creation_input_tokens is missing"},
			Reasoning:     meter.Count{State: meter.NotReported},
		},
	}
	got := Row(r)
	want := store.MeteredRequest{
		RequestID: "req-1", AttemptID: "att-1", Seq: 2, Protocol: meter.ProtocolAnthropic, Method: "POST", Path: "/v1/messages",
		Status: ptr(200), LatencyMS: 0, TTFBMS: ptr(1), RetryOf: ptr(1), Billed: true, UsageSemantics: wfb.SemanticsAnthropic,
		InputTokens: ptr(0), OutputTokens: ptr(7),
		UsageRaw:     map[string]string{"usage.cache_read_input_tokens": "-5"},
		UsageProblem: "usage.cache_read_input_tokens is negative (-5); usage.cache_creation_input_tokens is missing",
		Exchange:     &store.Exchange{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	unanswered := Row(meter.Record{ID: "req-2", AttemptID: "att-1", Seq: 1})
	if unanswered.Status != nil || unanswered.TTFBMS != nil || unanswered.RetryOf != nil || unanswered.FallbackOf != nil {
		t.Errorf("an unanswered first request: status %v ttfb %v retry of %v fallback of %v, want all NULL",
			unanswered.Status, unanswered.TTFBMS, unanswered.RetryOf, unanswered.FallbackOf)
	}
}

// TestTheMeterGivesTheRunnerTheWireOfAnAttempt stops the runner's Meter
// from giving it less than the wire showed: the attempt's requests as
// rows, the billed usage summed and checked against the agent's report,
// the wire's cost at the list price, a provider the meter could not reach
// named; and a request that names no attempt is written to the file at
// once.
func TestTheMeterGivesTheRunnerTheWireOfAnAttempt(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	m := startMeter(t, db)
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "hi", Usage: provider.FullUsage(1200, 30, 4000, 500)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, err := m.Begin(runner.MeterOptions{ID: "att-1", Upstream: p.URL(), MaxRequests: 10})
	if err != nil {
		t.Fatal(err)
	}
	post(t, a.BaseURL(), "claude-sonnet-4-5")
	w := a.End(ctx, runner.ReportedUsage{Input: ptr(1200), Output: ptr(30), CacheRead: ptr(4000), CacheCreation: ptr(400)})
	if len(w.Requests) != 1 || w.Requests[0].AttemptID != "att-1" || !w.Requests[0].Billed || w.Requests[0].Exchange == nil || w.Models != 1 || w.Billed != 1 {
		t.Fatalf("wire: %d requests %+v, %d models, %d billed", len(w.Requests), w.Requests, w.Models, w.Billed)
	}
	sums := []*int64{w.Input, w.Output, w.CacheRead, w.CacheCreation}
	if diff := cmp.Diff([]*int64{ptr(1200), ptr(30), ptr(4000), ptr(500)}, sums); diff != "" {
		t.Errorf("billed usage (-want +got):\n%s", diff)
	}
	if w.Check.Verdict != wfb.VerdictDisagree || !strings.Contains(w.Check.Text, "cache_creation_input_tokens wire 500, agent 400") || len(w.Check.Refused) != 0 {
		t.Errorf("check %+v, want a disagreement on cache writes", w.Check)
	}
	// 1200×$3 + 4000×$0.30 + 500×$3.75 + 30×$15 per million tokens.
	if w.Cost == nil || *w.Cost != 0.007125 || w.CostWhy != "" {
		t.Errorf("cost %v (%q), want exactly 0.007125", w.Cost, w.CostWhy)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	a, err = m.Begin(runner.MeterOptions{ID: "att-2", Upstream: dead, MaxRequests: 10})
	if err != nil {
		t.Fatal(err)
	}
	post(t, a.BaseURL(), "claude-sonnet-4-5")
	w = a.End(ctx, runner.ReportedUsage{})
	if len(w.ProviderFailures) != 1 || !strings.HasPrefix(w.ProviderFailures[0], "request 1 (POST /v1/messages): "+meter.ErrUpstreamUnreachable+": ") || w.Billed != 0 || w.NotBilled == "" {
		t.Errorf("an unreachable provider: failures %q, %d billed, not billed %q", w.ProviderFailures, w.Billed, w.NotBilled)
	}

	base := a.BaseURL()
	post(t, base[:strings.LastIndex(base, "/")]+"/no-such-attempt", "claude-sonnet-4-5")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		stray, err := db.Requests(ctx, "") // "": the unattributed
		if err != nil {
			t.Fatal(err)
		}
		if len(stray) == 1 && stray[0].Status != nil && *stray[0].Status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unattributed request was not written: %+v", stray)
		}
	}
}

// TestExchangesReadBackWhatTheMeterKept stops `wfb mock record` from
// replaying other bytes than the wire carried, or bodies that were not
// kept whole or were damaged in the file: what is read back is the
// request and response as sent, and a cut or damaged body says so.
func TestExchangesReadBackWhatTheMeterKept(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	m := startMeter(t, db)
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "hi", Usage: provider.FullUsage(10, 2, 0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, id := range []string{"att-whole", "att-cut", "att-damaged"} {
		a, err := m.Begin(runner.MeterOptions{ID: id, Upstream: p.URL(), MaxRequests: 10})
		if err != nil {
			t.Fatal(err)
		}
		answer := post(t, a.BaseURL(), "stand-in")
		rows := a.End(ctx, runner.ReportedUsage{}).Requests
		switch id {
		case "att-cut":
			rows[0].Exchange.ResponseTruncated = true
		case "att-damaged":
			rows[0].Exchange.ResponseSHA256 = strings.Repeat("0", 64)
		}
		if err := db.InsertRequests(ctx, rows); err != nil {
			t.Fatal(err)
		}
		got, err := Exchanges(ctx, db, id)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %d exchanges, %v", id, len(got), err)
		}
		x := got[0]
		switch id {
		case "att-whole":
			if !x.Whole || x.Err != nil || string(x.ResponseBody) != string(answer) || !strings.Contains(string(x.RequestBody), `"model":"stand-in"`) ||
				x.ContentType != "application/json" || x.Seq != 1 || x.Status == nil || *x.Status != 200 {
				t.Errorf("whole: %+v\nresponse %s\nanswer %s", x, x.ResponseBody, answer)
			}
		case "att-cut":
			if x.Whole || x.Err != nil || x.ResponseBody != nil {
				t.Errorf("cut: whole %v err %v body %q, want not whole", x.Whole, x.Err, x.ResponseBody)
			}
		case "att-damaged":
			if x.Whole || !errors.Is(x.Err, store.ErrCorrupt) || !strings.HasPrefix(x.Err.Error(), "response body: ") {
				t.Errorf("damaged: whole %v err %v, want a corrupt response body", x.Whole, x.Err)
			}
		}
	}
}
