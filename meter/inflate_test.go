package meter

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// gzipped is s gzip-encoded.
func gzipped(t testing.TB, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	for _, p := range parts {
		if _, err := io.WriteString(zw, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// serveGzip answers with body as a gzip-encoded response of type ct.
func serveGzip(ct string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(body)
	}
}

// postRaw posts as an agent that decodes nothing itself: what the proxy
// relays is what it reads. acceptEncoding "" sends none.
func postRaw(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("Content-Type", "application/json")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestAGzipBombIsRelayedEncodedAndReadBounded stops the proxy from handing
// an agent a gzip bomb decoded: it asked the upstream for gzip on its own
// behalf and its transport decoded the answer, so a few MiB on the wire
// reached the agent as all they stood for (2 GiB in the report; 80 MiB
// here). The agent now gets the bytes as sent; the meter decodes its own
// copy up to MaxInflatedBytes and records the usage as not measured past
// it (a JSON body is read up to its own, smaller bound: a stream is not).
func TestAGzipBombIsRelayedEncodedAndReadBounded(t *testing.T) {
	start := "event: message_start\ndata: " + `{"type":"message_start","message":{"model":"claude-served","usage":` + startOf(usageFull) + "}}\n\n"
	bomb := gzipped(t, start, strings.Repeat(":\n", (MaxInflatedBytes+16<<20)/2))
	up := newUpstream(t, serveGzip("text/event-stream", bomb))
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	resp, got := postRaw(t, a.BaseURL()+"/v1/messages", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(got, bomb) {
		t.Fatalf("the agent got %d bytes, Content-Encoding %q; want the %d gzip bytes sent", len(got), resp.Header.Get("Content-Encoding"), len(bomb))
	}
	r := end(t, a).Records[0]
	if r.ResponseBytes != int64(len(bomb)) {
		t.Errorf("response bytes %d, want the %d relayed", r.ResponseBytes, len(bomb))
	}
	if r.Usage.Input.State == Present || !strings.Contains(r.Usage.Input.Why, "64 MiB") {
		t.Errorf("input usage %+v: want not measured, naming the bound", r.Usage.Input)
	}
	if !r.Exchange.Response.Truncated || r.Exchange.Response.Size > MaxInflatedBytes {
		t.Errorf("kept response: %d bytes, truncated %v", r.Exchange.Response.Size, r.Exchange.Response.Truncated)
	}
}

// TestAGzipAnswerIsMeteredAndRelayedAsSent: an ordinary gzip-encoded
// answer reaches the agent encoded, its usage is read from the decoded
// body, which is what is kept; an agent that accepts no gzip makes the
// meter ask the upstream for identity.
func TestAGzipAnswerIsMeteredAndRelayedAsSent(t *testing.T) {
	body := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-served","content":[],"stop_reason":"end_turn","usage":%s}`, usageFull)
	enc := gzipped(t, body)
	up := newUpstream(t, serveGzip("application/json", enc))
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	resp, got := postRaw(t, a.BaseURL()+"/v1/messages", "gzip, deflate, br")
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(got, enc) {
		t.Fatalf("the agent got %q (%s)", got, resp.Header.Get("Content-Encoding"))
	}
	postRaw(t, a.BaseURL()+"/v1/messages", "")
	log := end(t, a)
	r := log.Records[0]
	if !r.Billed || r.Usage.Input.Value != 2000 || r.Usage.Output.Value != 300 {
		t.Errorf("billed %v, usage %+v", r.Billed, r.Usage)
	}
	if kept, err := r.Exchange.Response.Decode(); err != nil || string(kept) != body {
		t.Errorf("kept response %q, %v; want the decoded body", kept, err)
	}
	rcv := up.received()
	if ae := rcv[0].Header.Get("Accept-Encoding"); ae != "gzip" {
		t.Errorf("upstream asked for %q, want gzip", ae)
	}
	if ae := rcv[1].Header.Get("Accept-Encoding"); ae != "identity" {
		t.Errorf("for an agent accepting no gzip, upstream asked for %q, want identity", ae)
	}
}

// TestAHugeHeaderIsKeptBounded stops an upstream's 8 MiB response header
// from being kept whole, outside the attempt's budget for bodies: a value
// is cut at MaxKeptHeaderValue saying how much more there was, and a set
// at MaxKeptHeaderBytes, naming what was left out.
func TestAHugeHeaderIsKeptBounded(t *testing.T) {
	big := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("b", 8<<20))
		for i := range 20 {
			w.Header().Set(fmt.Sprintf("X-Many-%02d", i), strings.Repeat("m", 7<<10))
		}
		messagesJSON(usageFull)(w, r)
	}
	up := newUpstream(t, big)
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	if status, _ := post(t, a.BaseURL()+"/v1/messages", `{"model":"m"}`); status != 200 {
		t.Fatalf("status %d", status)
	}
	r := end(t, a).Records[0]
	h := r.Exchange.ResponseHeader
	total := 0
	for k, vs := range h {
		for _, v := range vs {
			total += len(k) + len(v)
		}
	}
	if total > MaxKeptHeaderBytes+1024 {
		t.Errorf("%d header bytes kept, want at most about %d", total, MaxKeptHeaderBytes)
	}
	if v := h.Get("X-Big"); len(v) > MaxKeptHeaderValue+100 || !strings.Contains(v, fmt.Sprintf("%d bytes more not kept", 8<<20-MaxKeptHeaderValue)) {
		t.Errorf("X-Big kept as %d bytes ending %q", len(v), v[max(0, len(v)-60):])
	}
	if n := h.Get(HeadersNotKept); !strings.Contains(n, "header values") {
		t.Errorf("%s: %q; want the headers left out counted", HeadersNotKept, n)
	}
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type not kept: %v", h["Content-Type"])
	}
}
