package meter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fake upstream speaks each protocol the way wfb's mock provider (and
// the real APIs) do: SSE with event: lines, flushed per event; Messages
// usage in message_start (no output) and again, whole, in message_delta;
// Responses usage in response.completed; errors in each API's shape.

// received is one request the fake upstream got.
type received struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

// fakeUpstream serves each request with the next handler of its queue,
// then with def; it records what it received.
type fakeUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	queue []http.HandlerFunc
	def   http.HandlerFunc
	got   []received
}

func newUpstream(t testing.TB, def http.HandlerFunc, queue ...http.HandlerFunc) *fakeUpstream {
	u := &fakeUpstream{queue: queue, def: def}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.got = append(u.got, received{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
	h := u.def
	if len(u.queue) > 0 {
		h, u.queue = u.queue[0], u.queue[1:]
	}
	u.mu.Unlock()
	h(w, r)
}

func (u *fakeUpstream) received() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.got...)
}

// usageFull is a complete Messages usage object.
const usageFull = `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}`

// messagesJSON answers a Messages request with usage (a JSON object text).
func messagesJSON(usage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-served","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":%s}`, usage)
	}
}

// sse writes one event and flushes it.
func sse(w http.ResponseWriter, name, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	w.(http.Flusher).Flush()
}

// messagesSSE streams a Messages reply: startUsage in message_start,
// deltaUsage in message_delta.
func messagesSSE(startUsage, deltaUsage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		writeMessagesEvents(w, startUsage, deltaUsage)
	}
}

func writeMessagesEvents(w http.ResponseWriter, startUsage, deltaUsage string) {
	sse(w, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-served","content":[],"stop_reason":null,"stop_sequence":null,"usage":`+startUsage+`}}`)
	sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	sse(w, "ping", `{"type":"ping"}`)
	sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"o"}}`)
	sse(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"k"}}`)
	sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":`+deltaUsage+`}`)
	sse(w, "message_stop", `{"type":"message_stop"}`)
}

// startOf is the part of a Messages usage object message_start carries:
// all but output_tokens, as the mock serves it.
func startOf(usage string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(usage), &m); err != nil {
		return usage
	}
	delete(m, "output_tokens")
	b, _ := json.Marshal(m)
	return string(b)
}

// messagesError answers status with the Messages error shape.
func messagesError(status int, kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"Overloaded"}}`, kind)
	}
}

// responsesObject is a Responses API response object.
func responsesObject(status, usage string) string {
	u := ""
	if usage != "" {
		u = `,"usage":` + usage
	}
	return `{"id":"resp_1","object":"response","created_at":1,"status":"` + status + `","model":"gpt-served","output":[{"type":"message","id":"m1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}]` + u + `}`
}

// responsesUsage is a Responses usage object.
func responsesUsage(input, cached, output, reasoning string) string {
	return `{"input_tokens":` + input + `,"input_tokens_details":{"cached_tokens":` + cached + `},"output_tokens":` + output + `,"output_tokens_details":{"reasoning_tokens":` + reasoning + `},"total_tokens":0}`
}

func responsesJSON(status, usage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, responsesObject(status, usage))
	}
}

// responsesSSE streams a Responses reply ending in the terminal event
// (response.completed, response.incomplete or response.failed).
func responsesSSE(terminal, status, usage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-served","output":[]}}`)
		sse(w, "response.output_item.done", `{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"type":"message","id":"m1"}}`)
		sse(w, terminal, `{"type":"`+terminal+`","sequence_number":2,"response":`+responsesObject(status, usage)+`}`)
	}
}

// geminiSSE streams a streamGenerateContent reply whose last chunk carries
// usageMetadata.
func geminiSSE(usage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", `{"candidates":[{"content":{"parts":[{"text":"o"}],"role":"model"}}],"modelVersion":"gemini-served"}`)
		w.(http.Flusher).Flush()
		fmt.Fprintf(w, "data: %s\r\n\r\n", `{"candidates":[{"content":{"parts":[{"text":"k"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":`+usage+`,"modelVersion":"gemini-served"}`)
	}
}

// startProxy starts a proxy for upstream u, closed with the test.
func startProxy(t testing.TB, upstream string, opts Options) *Proxy {
	t.Helper()
	opts.Upstream = upstream
	p, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func begin(t testing.TB, p *Proxy, id string, secrets ...string) *Attempt {
	t.Helper()
	a, err := p.Begin(AttemptOptions{ID: id, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// post sends body to url and returns the status and the whole answer.
func post(t testing.TB, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-ant-test-key-0123456789abcdef")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func end(t testing.TB, a *Attempt) Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.End(ctx)
}

// recordingSink keeps what it receives.
type recordingSink struct {
	mu   sync.Mutex
	recs []Record
}

func (s *recordingSink) Record(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
}

func (s *recordingSink) records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.recs...)
}

func ptr[T any](v T) *T { return &v }
