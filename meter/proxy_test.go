package meter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// TestOverloadedThenSuccessCountsTheSuccessOnce stops an outage from making
// an arm look cheaper or dearer: the 529 is metered (status, error type,
// retry marker on the re-send) but carries no usage, and the summary counts
// the successful answer exactly once.
func TestOverloadedThenSuccessCountsTheSuccessOnce(t *testing.T) {
	up := newUpstream(t, messagesSSE(startOf(usageFull), usageFull), messagesError(529, "overloaded_error"))
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	body := `{"model":"claude-asked","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	if status, got := post(t, a.BaseURL()+"/v1/messages", body); status != 529 || !strings.Contains(got, "overloaded_error") {
		t.Fatalf("first answer %d %s", status, got)
	}
	if status, _ := post(t, a.BaseURL()+"/v1/messages", body); status != 200 {
		t.Fatalf("second answer %d", status)
	}
	log := end(t, a)
	if len(log.Records) != 2 {
		t.Fatalf("%d records, want 2", len(log.Records))
	}
	failed, ok := log.Records[0], log.Records[1]
	if failed.Status != 529 || failed.ErrorType != "overloaded_error" || failed.Billed || failed.Seq != 1 {
		t.Errorf("the 529: %+v", failed)
	}
	if ok.Status != 200 || !ok.Billed || ok.RetryOf != 1 || ok.Seq != 2 {
		t.Errorf("the success: status %d billed %v retry of %d", ok.Status, ok.Billed, ok.RetryOf)
	}
	s := log.Summary
	if diff := cmp.Diff([]int{2}, s.Billed); diff != "" {
		t.Errorf("billed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, s.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	want := map[string]int64{FieldInput: 2000, FieldOutput: 300, FieldCacheRead: 7000, FieldCacheCreation: 1000}
	for _, f := range s.Fields() {
		if w, ok := want[f.Name]; ok && (f.Sum.Value == nil || *f.Sum.Value != w || !cmp.Equal(f.Sum.From, []int{2})) {
			t.Errorf("%s: %v from %v, want %d from [2] (%s)", f.Name, f.Sum.Value, f.Sum.From, w, f.Sum.Why)
		}
	}
	if c := CrossCheck(Reported{ptr(int64(2000)), ptr(int64(300)), ptr(int64(7000)), ptr(int64(1000))}, s); c.Outcome != wfb.VerdictAgree {
		t.Errorf("cross-check %s, want agree", c)
	}
}

// TestNonStreamingFallbackIsMarked: Claude Code falls back to a
// non-streaming request when a stream fails; the fallback is the same
// request but for its stream setting, and must be told apart from a new
// turn.
func TestNonStreamingFallbackIsMarked(t *testing.T) {
	cut := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"model":"claude-served","usage":{"input_tokens":5}}}`)
		panic(http.ErrAbortHandler)
	}
	up := newUpstream(t, messagesJSON(usageFull), cut)
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	req, _ := http.NewRequest(http.MethodPost, a.BaseURL()+"/v1/messages", strings.NewReader(`{"model":"m","stream":true,"messages":[1,2]}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Error("the cut stream read as complete: the agent must see the cut")
		}
		resp.Body.Close()
	}
	post(t, a.BaseURL()+"/v1/messages", `{"model":"m","messages":[1,2]}`)
	log := end(t, a)
	first, second := log.Records[0], log.Records[1]
	if first.ProxyError != ErrUpstreamCut || first.Billed {
		t.Errorf("cut stream: proxy error %q billed %v", first.ProxyError, first.Billed)
	}
	if first.Usage.Input.State != Present || first.Usage.Input.Value != 5 {
		t.Errorf("the cut stream's usage as the wire showed it is not kept: %+v", first.Usage.Input)
	}
	if second.FallbackOf != 1 || second.RetryOf != 0 || !second.Billed {
		t.Errorf("fallback of %d, retry of %d, billed %v; want 1, 0, true", second.FallbackOf, second.RetryOf, second.Billed)
	}
	if v := log.Summary.Input.Value; v == nil || *v != 2000 {
		t.Errorf("summary input %v, want 2000 (the cut stream is not billed)", v)
	}
}

// TestStreamPassesThroughEventByEvent proves the proxy flushes each event:
// the upstream sends the second event only once the agent has read the
// first, so a proxy that buffers would deadlock (bounded by a timeout).
func TestStreamPassesThroughEventByEvent(t *testing.T) {
	firstRead := make(chan struct{})
	slow := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"model":"claude-served","usage":`+startOf(usageFull)+`}}`)
		select {
		case <-firstRead:
		case <-time.After(5 * time.Second):
			return // the test fails below: the first event never arrived
		}
		sseEnd(w)
	}
	a, resp := streamThrough(t, slow)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(firstRead)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "message_stop") {
		t.Fatalf("the stream did not finish: %q", rest)
	}
	r := end(t, a).Records[0]
	if !r.Billed || r.TTFB == nil || *r.TTFB > r.Latency || r.Usage.Output.Value != 300 {
		t.Errorf("billed %v ttfb %v latency %v output %+v", r.Billed, r.TTFB, r.Latency, r.Usage.Output)
	}
}

// sseEnd sends a stream's last two events.
func sseEnd(w http.ResponseWriter) {
	sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":`+usageFull+`}`)
	sse(w, "message_stop", `{"type":"message_stop"}`)
}

// streamThrough posts a streaming request through a proxy in front of
// handler, for one attempt.
func streamThrough(t *testing.T, handler http.HandlerFunc) (*Attempt, *http.Response) {
	t.Helper()
	up := newUpstream(t, handler)
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	resp, err := http.Post(a.BaseURL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	return a, resp
}

// TestALargeEventIsNotHeldBehindTheNextOne stops a proxy that flushes a
// stream only after a short read: an event larger than the relay buffer
// fills whole reads, and the upstream then waits for the agent to have it
// all before it sends anything more, so its tail must be flushed with no
// further read to prompt it.
func TestALargeEventIsNotHeldBehindTheNextOne(t *testing.T) {
	text := strings.Repeat("z", 3*relayBufferSize+123)
	first := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`
	firstRead := make(chan struct{})
	slow := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"model":"m","usage":`+startOf(usageFull)+`}}`)
		sse(w, "content_block_delta", first)
		select {
		case <-firstRead:
		case <-time.After(5 * time.Second):
			return // the test fails below: the event was held
		}
		sseEnd(w)
	}
	a, resp := streamThrough(t, slow)
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 1<<20)
	var got strings.Builder
	for !strings.Contains(got.String(), text+`"}}`+"\n\n") {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("the large event never arrived whole (%d bytes read): %v", got.Len(), err)
		}
	}
	close(firstRead)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "message_stop") {
		t.Fatalf("the stream did not finish: %q", rest)
	}
	if r := end(t, a).Records[0]; !r.Billed || r.ResponseBytes != int64(got.Len()+len(rest)) {
		t.Errorf("billed %v, %d bytes relayed; want billed, %d", r.Billed, r.ResponseBytes, got.Len()+len(rest))
	}
}

// TestUnreachableUpstreamIsA502NeverAHang: a provider that refuses
// connections, or whose TLS cannot be verified, is answered at once with a
// 502 in the protocol's shape, and recorded as the meter's error.
func TestUnreachableUpstreamIsA502NeverAHang(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	tlsUp := httptest.NewTLSServer(messagesJSON(usageFull)) // its certificate is not trusted
	defer tlsUp.Close()
	for _, tc := range []struct{ name, upstream, path, shape string }{
		{"refused/messages", refused, "/v1/messages", `"type":"error"`},
		{"refused/responses", refused, "/v1/responses", `"code":"upstream-unreachable"`},
		{"untrusted tls", tlsUp.URL, "/v1/messages", `"type":"error"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxy(t, tc.upstream, Options{ConnectTimeout: 2 * time.Second})
			a := begin(t, p, "att-1")
			start := time.Now()
			status, body := post(t, a.BaseURL()+tc.path, `{"model":"m"}`)
			if status != http.StatusBadGateway || !strings.Contains(body, tc.shape) || !strings.Contains(body, ErrUpstreamUnreachable) {
				t.Errorf("answer %d %s", status, body)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the answer took %v", d)
			}
			r := end(t, a).Records[0]
			if r.ProxyError != ErrUpstreamUnreachable || r.Status != http.StatusBadGateway || r.Billed || r.ErrorDetail == "" {
				t.Errorf("record: proxy error %q status %d billed %v detail %q", r.ProxyError, r.Status, r.Billed, r.ErrorDetail)
			}
		})
	}
}

// TestConcurrentAttemptsNeverMix: attribution is by path token alone, so
// two attempts served at once keep their own requests, whatever the agents
// send.
func TestConcurrentAttemptsNeverMix(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		messagesSSE(startOf(usageFull), usageFull)(w, r)
	})
	p := startProxy(t, up.URL, Options{})
	const perAttempt = 20
	atts := []*Attempt{begin(t, p, "att-a"), begin(t, p, "att-b")}
	var wg sync.WaitGroup
	for _, a := range atts {
		for i := range perAttempt {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each agent claims to be the other in a header: ignored.
				post(t, a.BaseURL()+"/v1/messages", fmt.Sprintf(`{"model":"%s-%d","stream":true}`, a.ID(), i), "X-Attempt", "att-other")
			}()
		}
	}
	wg.Wait()
	for _, a := range atts {
		log := end(t, a)
		if len(log.Records) != perAttempt {
			t.Fatalf("%s: %d records, want %d", a.ID(), len(log.Records), perAttempt)
		}
		for i, r := range log.Records {
			if r.AttemptID != a.ID() || !strings.HasPrefix(r.RequestedModel, a.ID()+"-") || r.Seq != i+1 {
				t.Errorf("%s: record %d is %s/%s seq %d", a.ID(), i, r.AttemptID, r.RequestedModel, r.Seq)
			}
		}
		if v := log.Summary.Output.Value; v == nil || *v != 300*perAttempt {
			t.Errorf("%s: output %v, want %d", a.ID(), v, 300*perAttempt)
		}
	}
}

// TestUnknownPrefixIs404Unattributed: a path naming no live attempt — a
// made-up token, an ended attempt's URL, no prefix at all — is answered
// 404, never forwarded, and recorded without an attempt.
func TestUnknownPrefixIs404Unattributed(t *testing.T) {
	up := newUpstream(t, messagesJSON(usageFull))
	sink := &recordingSink{}
	p := startProxy(t, up.URL, Options{Sink: sink})
	a := begin(t, p, "att-1")
	ended := a.BaseURL()
	end(t, a)
	for _, u := range []string{p.URL() + "/m/0123456789abcdef/v1/messages", ended + "/v1/messages", p.URL() + "/v1/messages"} {
		status, body := post(t, u, `{"model":"m"}`)
		if status != http.StatusNotFound || !strings.Contains(body, "not_found_error") {
			t.Errorf("%s: %d %s", u, status, body)
		}
	}
	if n := len(up.received()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
	recs := sink.records()
	if len(recs) != 3 {
		t.Fatalf("sink got %d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r.AttemptID != "" || r.ProxyError != ErrUnattributed || r.Status != 404 || r.Protocol != ProtocolAnthropic {
			t.Errorf("unattributed record %+v", r)
		}
		if _, ok := r.Exchange.RequestHeader["X-Api-Key"]; ok {
			t.Error("an unattributed record kept the api key header")
		}
	}
}

// TestProxyForwardsWhatTheProviderNeeds: the base URL's path prefix, the
// rest of the path and the query reach the upstream; credentials are
// forwarded; hop-by-hop headers are not.
func TestProxyForwardsWhatTheProviderNeeds(t *testing.T) {
	up := newUpstream(t, messagesJSON(usageFull))
	p := startProxy(t, up.URL+"/gateway/", Options{})
	a := begin(t, p, "att-1")
	post(t, a.BaseURL()+"/v1/messages?beta=true", `{"model":"m"}`,
		"Anthropic-Version", "2023-06-01", "Connection", "X-Hop", "X-Hop", "1", "Authorization", "Bearer tok-123456")
	got := up.received()
	if len(got) != 1 {
		t.Fatalf("%d requests upstream", len(got))
	}
	g := got[0]
	if g.Path != "/gateway/v1/messages" || g.RawQuery != "beta=true" {
		t.Errorf("upstream got %s?%s", g.Path, g.RawQuery)
	}
	if g.Header.Get("X-Api-Key") != "sk-ant-test-key-0123456789abcdef" || g.Header.Get("Authorization") != "Bearer tok-123456" || g.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("credentials or version not forwarded: %v", g.Header)
	}
	if g.Header.Get("X-Hop") != "" {
		t.Error("a header named by Connection was forwarded")
	}
	r := end(t, a).Records[0]
	if r.Path != "/v1/messages?beta=true" || r.Method != "POST" || r.StartedAt.Location() != time.UTC {
		t.Errorf("record path %q method %q started %v", r.Path, r.Method, r.StartedAt)
	}
	// A HEAD probe of the base URL goes to the upstream's base.
	a2 := begin(t, p, "att-2")
	req, _ := http.NewRequest(http.MethodHead, a2.BaseURL(), nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if got := up.received(); len(got) != 2 || got[1].Method != http.MethodHead || got[1].Path != "/gateway" {
		t.Errorf("HEAD probe: %+v", got[len(got)-1])
	}
	if r := end(t, a2).Records[0]; r.Protocol != "" || r.Billed {
		t.Errorf("a probe is no model request: %+v", r)
	}
}

// TestOversizedRequestIs413NotForwarded bounds what the proxy reads.
func TestOversizedRequestIs413NotForwarded(t *testing.T) {
	up := newUpstream(t, messagesJSON(usageFull))
	p := startProxy(t, up.URL, Options{MaxRequestBytes: 1024})
	a := begin(t, p, "att-1")
	status, body := post(t, a.BaseURL()+"/v1/messages", `{"model":"m","pad":"`+strings.Repeat("x", 4096)+`"}`)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "request_too_large") {
		t.Errorf("answer %d %s", status, body)
	}
	if len(up.received()) != 0 {
		t.Error("the oversized request was forwarded")
	}
	r := end(t, a).Records[0]
	if r.ProxyError != ErrRequestTooLarge || r.Status != 413 || !r.Exchange.Request.Truncated {
		t.Errorf("record %q %d truncated %v", r.ProxyError, r.Status, r.Exchange.Request.Truncated)
	}
}

// TestAgentGoneCancelsTheUpstreamRequest: a request the agent abandons
// must not keep the provider (and the attempt's End) waiting.
func TestAgentGoneCancelsTheUpstreamRequest(t *testing.T) {
	upstreamDone := make(chan error, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		upstreamDone <- r.Context().Err()
	})
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.BaseURL()+"/v1/messages", strings.NewReader(`{}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the hung request was answered")
	}
	select {
	case <-upstreamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
	if r := end(t, a).Records[0]; r.ProxyError != ErrClientGone || r.Billed {
		t.Errorf("record %q billed %v", r.ProxyError, r.Billed)
	}
}

// TestEndCancelsWhatIsStillInFlight: End's context bounds the wait for a
// request that never finishes (an agent killed while its child holds the
// connection).
func TestEndCancelsWhatIsStillInFlight(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"model":"x","usage":{"input_tokens":1}}}`)
		<-r.Context().Done()
	})
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	go func() {
		resp, err := http.Post(a.BaseURL()+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	for !strings.Contains(fmt.Sprint(up.received()), "stream") {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan Log, 1)
	go func() { done <- a.End(ctx) }()
	select {
	case log := <-done:
		if len(log.Records) != 1 || log.Records[0].ProxyError != ErrAttemptEnded || log.Records[0].Billed {
			t.Errorf("records %+v", log.Records)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("End hung on an in-flight request")
	}
}

// TestBeginRefusesWhatCannotBeMetered checks the attempt's preconditions
// and that the proxy listens on loopback only.
func TestBeginRefusesWhatCannotBeMetered(t *testing.T) {
	if _, err := Start(Options{Addr: "0.0.0.0:0"}); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("listen on 0.0.0.0: %v", err)
	}
	p := startProxy(t, "", Options{})
	if _, err := p.Begin(AttemptOptions{ID: "a"}); err == nil {
		t.Error("an attempt without upstream was begun")
	}
	if _, err := p.Begin(AttemptOptions{ID: "a", Upstream: "ftp://x"}); err == nil {
		t.Error("an ftp upstream was accepted")
	}
	a, err := p.Begin(AttemptOptions{ID: "a", Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Begin(AttemptOptions{ID: "a", Upstream: "http://127.0.0.1:1"}); !errors.Is(err, ErrAttemptLive) {
		t.Errorf("a second live attempt with one id: %v", err)
	}
	b, _ := p.Begin(AttemptOptions{ID: "b", Upstream: "http://127.0.0.1:1"})
	ua, _ := url.Parse(a.BaseURL())
	ub, _ := url.Parse(b.BaseURL())
	if ua.Hostname() != "127.0.0.1" || ua.Path == ub.Path || len(strings.TrimPrefix(ua.Path, "/m/")) < 32 {
		t.Errorf("base URLs %s and %s", a.BaseURL(), b.BaseURL())
	}
}

// decodeJSON is for assertions on kept bodies.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// TestARequestPastTheCapIsRefusedAndReported stops a runaway agent (a
// scripted tool call answered forever) from sending its provider requests
// until its timeout: the real Claude Code sent ~1,400 in 300 s.
// Past MaxRequests each request is answered 429, recorded, never
// forwarded, and OnCap is called exactly once.
func TestARequestPastTheCapIsRefusedAndReported(t *testing.T) {
	up := newUpstream(t, messagesJSON(usageFull))
	p := startProxy(t, up.URL, Options{})
	var caps atomic.Int32
	capped := make(chan struct{}, 4)
	a, err := p.Begin(AttemptOptions{ID: "att-cap", MaxRequests: 2, OnCap: func() { caps.Add(1); capped <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for range 4 {
		status, body := post(t, a.BaseURL()+"/v1/messages", `{"model":"m"}`)
		statuses = append(statuses, status)
		if status == http.StatusTooManyRequests && !strings.Contains(body, "cap of 2 requests") {
			t.Errorf("refusal says %s", body)
		}
	}
	<-capped
	if want := []int{200, 200, 429, 429}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	if n := len(up.received()); n != 2 {
		t.Errorf("%d requests forwarded, want 2", n)
	}
	recs := end(t, a).Records
	if len(recs) != 4 || recs[2].ProxyError != ErrRequestCap || recs[3].ProxyError != ErrRequestCap || recs[1].ProxyError != "" {
		t.Errorf("records %+v", recs)
	}
	if n := caps.Load(); n != 1 {
		t.Errorf("OnCap called %d times, want once", n)
	}
}
