package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sseTestEvent is one server-sent event as a client sees it.
type sseTestEvent struct {
	Name string
	Data map[string]any
}

// sseRead parses a stream the way a strict client does: every event needs an
// event: line and a JSON data: line. It returns the events read and the
// error that ended the stream (nil for a clean end).
func sseRead(r io.Reader) ([]sseTestEvent, error) {
	var events []sseTestEvent
	var name, data string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name == "" && data == "" {
				continue
			}
			if name == "" || data == "" {
				return events, fmt.Errorf("event without an event: or data: line (event %q, data %q)", name, data)
			}
			dec := json.NewDecoder(strings.NewReader(data))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return events, fmt.Errorf("event %s: data is not JSON: %v", name, err)
			}
			events = append(events, sseTestEvent{Name: name, Data: m})
			name, data = "", ""
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		default:
			return events, fmt.Errorf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return events, err
	}
	if name != "" || data != "" {
		return events, io.ErrUnexpectedEOF
	}
	return events, nil
}

func sseNames(events []sseTestEvent) []string {
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
	}
	return names
}

// startProvider starts a provider for script and closes it with the test.
func startProvider(t testing.TB, script *Script) *Provider {
	t.Helper()
	p, err := Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// post posts body (JSON-encoded unless it is a string) to url.
func post(t testing.TB, url string, body any, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	var raw []byte
	if s, ok := body.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return resp, out
}

// decode decodes a JSON body keeping numbers as written.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, b)
	}
	return m
}

func streamBody(model string) map[string]any {
	return map[string]any{
		"model": model, "stream": true, "max_tokens": 1024,
		"messages": []any{map[string]any{"role": "user", "content": "review the change"}},
	}
}

// TestProviderStreamsTextInTheAPIsEventOrder stops a stream a real client
// rejects: events out of order, a missing event: line, a message_start
// without the requested model, or text a client must not have to guess.
func TestProviderStreamsTextInTheAPIsEventOrder(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{Text: "hello, world", Usage: FullUsage(2000, 300, 7000, 1000)}})
	resp, body := post(t, p.URL()+"/v1/messages", streamBody("claude-test-model"), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, err := sseRead(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, body)
	}
	wantNames := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(wantNames, sseNames(events)); diff != "" {
		t.Fatalf("event order (-want +got):\n%s", diff)
	}
	for _, e := range events {
		if e.Data["type"] != e.Name {
			t.Errorf("event %s has data type %v", e.Name, e.Data["type"])
		}
	}
	msg := events[0].Data["message"].(map[string]any)
	wantStart := map[string]any{
		"type": "message", "role": "assistant", "model": "claude-test-model", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": json.Number("2000"), "cache_read_input_tokens": json.Number("7000"),
			"cache_creation_input_tokens": json.Number("1000"),
		},
	}
	id, _ := msg["id"].(string)
	delete(msg, "id")
	if !strings.HasPrefix(id, "msg_") {
		t.Errorf("message id %q, want msg_...", id)
	}
	if diff := cmp.Diff(wantStart, msg); diff != "" {
		t.Errorf("message_start (-want +got):\n%s", diff)
	}
	var text string
	for _, e := range events[2:4] {
		d := e.Data["delta"].(map[string]any)
		if d["type"] != "text_delta" {
			t.Errorf("delta type %v, want text_delta", d["type"])
		}
		text += d["text"].(string)
	}
	if text != "hello, world" {
		t.Errorf("joined text deltas = %q, want %q", text, "hello, world")
	}
	wantDelta := map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{
			"input_tokens": json.Number("2000"), "output_tokens": json.Number("300"),
			"cache_read_input_tokens": json.Number("7000"), "cache_creation_input_tokens": json.Number("1000"),
		},
	}
	if diff := cmp.Diff(wantDelta, events[5].Data); diff != "" {
		t.Errorf("message_delta (-want +got):\n%s", diff)
	}
}

// TestProviderStreamsToolInputOnlyAsInputJSONDelta stops a tool call that
// Claude Code would run with empty input: it ignores input placed in
// content_block_start and reads only input_json_delta.
func TestProviderStreamsToolInputOnlyAsInputJSONDelta(t *testing.T) {
	input := map[string]any{"file_path": "/tmp/art/review-output.json", "content": `{"verdict": "approve"} — ü`}
	p := startProvider(t, &Script{Default: &Reply{Text: "writing", Tools: []Tool{
		{Name: "Write", Input: input},
		{Name: "Read", Input: map[string]any{"file_path": "/etc/hostname"}},
	}}})
	_, body := post(t, p.URL()+"/v1/messages?beta=true", streamBody("m"), nil)
	events, err := sseRead(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, body)
	}
	type block struct {
		Type, ID, Name string
		StartInput     any
		Deltas         int
		Joined         string
	}
	var blocks []*block
	for _, e := range events {
		switch e.Name {
		case "content_block_start":
			cb := e.Data["content_block"].(map[string]any)
			id, _ := cb["id"].(string)
			name, _ := cb["name"].(string)
			blocks = append(blocks, &block{Type: cb["type"].(string), ID: id, Name: name, StartInput: cb["input"]})
		case "content_block_delta":
			b := blocks[len(blocks)-1]
			if idx := e.Data["index"].(json.Number).String(); idx != fmt.Sprint(len(blocks)-1) {
				t.Errorf("delta index %s inside block %d", idx, len(blocks)-1)
			}
			d := e.Data["delta"].(map[string]any)
			b.Deltas++
			switch d["type"] {
			case "text_delta":
				b.Joined += d["text"].(string)
			case "input_json_delta":
				b.Joined += d["partial_json"].(string)
			default:
				t.Errorf("unexpected delta %v", d)
			}
		}
	}
	if len(blocks) != 3 {
		t.Fatalf("got %d blocks, want text + 2 tool_use", len(blocks))
	}
	for i, b := range blocks[1:] {
		if b.Type != "tool_use" || !strings.HasPrefix(b.ID, "toolu_") {
			t.Errorf("block %d: type %q id %q, want tool_use with toolu_ id", i+1, b.Type, b.ID)
		}
		if diff := cmp.Diff(map[string]any{}, b.StartInput); diff != "" {
			t.Errorf("block %d: content_block_start input must be {} (-want +got):\n%s", i+1, diff)
		}
		if b.Deltas < 2 {
			t.Errorf("block %d: input in %d delta(s), want it split so clients must join", i+1, b.Deltas)
		}
	}
	if blocks[1].ID == blocks[2].ID {
		t.Errorf("two tool_use blocks share id %q", blocks[1].ID)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(blocks[1].Joined), &got); err != nil {
		t.Fatalf("joined input_json_delta is not JSON: %v: %q", err, blocks[1].Joined)
	}
	if diff := cmp.Diff(input, got); diff != "" {
		t.Errorf("Write input (-want +got):\n%s", diff)
	}
	stop := events[len(events)-2].Data["delta"].(map[string]any)["stop_reason"]
	if stop != "tool_use" {
		t.Errorf("stop_reason %v, want tool_use", stop)
	}
}

// TestProviderJSONReply stops the non-streaming fallback (which Claude Code
// uses after a failed stream) from drifting from the streamed answer.
func TestProviderJSONReply(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		want  map[string]any
	}{
		{
			name:  "text",
			reply: Reply{Text: "done", Usage: FullUsage(1, 2, 3, 4)},
			want: map[string]any{
				"type": "message", "role": "assistant", "model": "claude-x",
				"content":     []any{map[string]any{"type": "text", "text": "done"}},
				"stop_reason": "end_turn", "stop_sequence": nil,
				"usage": map[string]any{
					"input_tokens": json.Number("1"), "output_tokens": json.Number("2"),
					"cache_read_input_tokens": json.Number("3"), "cache_creation_input_tokens": json.Number("4"),
				},
			},
		},
		{
			name:  "tools without text",
			reply: Reply{Tools: []Tool{{Name: "Bash", Input: map[string]any{"command": "ls"}}}},
			want: map[string]any{
				"type": "message", "role": "assistant", "model": "claude-x",
				"content": []any{map[string]any{
					"type": "tool_use", "id": "toolu_mock_000001_1", "name": "Bash",
					"input": map[string]any{"command": "ls"},
				}},
				"stop_reason": "tool_use", "stop_sequence": nil, "usage": map[string]any{},
			},
		},
		{
			name:  "scripted stop reason, empty reply",
			reply: Reply{StopReason: "max_tokens"},
			want: map[string]any{
				"type": "message", "role": "assistant", "model": "claude-x",
				"content":     []any{map[string]any{"type": "text", "text": ""}},
				"stop_reason": "max_tokens", "stop_sequence": nil, "usage": map[string]any{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProvider(t, &Script{Default: &tt.reply})
			resp, body := post(t, p.URL()+"/v1/messages", map[string]any{"model": "claude-x", "messages": []any{}}, nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			got := decode(t, body)
			if id, _ := got["id"].(string); id != "msg_mock_000001" {
				t.Errorf("id %q, want msg_mock_000001", id)
			}
			delete(got, "id")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProviderServesUsageVerbatimAndAbsentAsAbsent stops the stand-in from
// zero-filling or "correcting" usage — the bug that made the parent's
// usage guard unfirable from any offline test.
func TestProviderServesUsageVerbatimAndAbsentAsAbsent(t *testing.T) {
	tests := []struct {
		name string
		yaml string // the cache_read_input_tokens line of the script
		want string // the cache_read_input_tokens member on the wire, "" for absent
	}{
		{"negative", "cache_read_input_tokens: -5", `"cache_read_input_tokens":-5`},
		{"boolean", "cache_read_input_tokens: true", `"cache_read_input_tokens":true`},
		{"string", `cache_read_input_tokens: "1200"`, `"cache_read_input_tokens":"1200"`},
		{"float", "cache_read_input_tokens: 1.0", `"cache_read_input_tokens":1.0`},
		{"null", "cache_read_input_tokens: null", ""},
		{"absent", "", ""},
		{"zero is measured", "cache_read_input_tokens: 0", `"cache_read_input_tokens":0`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				src := "default:\n  usage:\n    input_tokens: 2000\n    output_tokens: 300\n"
				if tt.yaml != "" {
					src += "    " + tt.yaml + "\n"
				}
				script, err := ParseScript("s.yaml", []byte(src))
				if err != nil {
					t.Fatal(err)
				}
				p := startProvider(t, script)
				_, body := post(t, p.URL()+"/v1/messages", map[string]any{"model": "m", "stream": stream}, nil)
				var usages []string // every usage object on the wire
				if stream {
					for _, line := range strings.Split(string(body), "\n") {
						if strings.Contains(line, `"message_start"`) || strings.Contains(line, `"message_delta"`) {
							usages = append(usages, line)
						}
					}
				} else {
					usages = []string{string(body)}
				}
				if len(usages) == 0 {
					t.Fatalf("no usage on the wire:\n%s", body)
				}
				for _, u := range usages {
					has := strings.Contains(u, `"cache_read_input_tokens"`)
					switch {
					case tt.want == "" && has:
						t.Errorf("absent field was sent: %s", u)
					case tt.want != "" && !strings.Contains(u, tt.want):
						t.Errorf("want %s verbatim in %s", tt.want, u)
					}
					if strings.Contains(u, `"cache_creation_input_tokens"`) {
						t.Errorf("unscripted cache_creation_input_tokens was sent: %s", u)
					}
				}
				if !strings.Contains(usages[len(usages)-1], `"output_tokens":300`) {
					t.Errorf("final usage lacks output_tokens 300: %s", usages[len(usages)-1])
				}
			})
		}
	}
}

// TestProviderScriptedFailureComesBeforeAnyEvent stops a 529 from being
// served as a 200 stream (a silent pass), and pins the error body shape and
// the default error objects.
func TestProviderScriptedFailureComesBeforeAnyEvent(t *testing.T) {
	tests := []struct {
		name   string
		reply  Reply
		status int
		want   string
	}{
		{"scripted 529", Reply{Status: 529, Error: json.RawMessage(`{"type":"overloaded_error","message":"Overloaded"}`)},
			529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"529 default object", Reply{Status: 529}, 529, `{"type":"error","error":{"message":"Overloaded","type":"overloaded_error"}}`},
		{"401 default object", Reply{Status: 401}, 401, `{"type":"error","error":{"message":"Invalid API key","type":"authentication_error"}}`},
		{"429 default object", Reply{Status: 429}, 429, `{"type":"error","error":{"message":"Rate limited","type":"rate_limit_error"}}`},
		{"503 default object", Reply{Status: 503}, 503, `{"type":"error","error":{"message":"Service Unavailable","type":"api_error"}}`},
		{"418 default object", Reply{Status: 418}, 418, `{"type":"error","error":{"message":"I'm a teapot","type":"invalid_request_error"}}`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				p := startProvider(t, &Script{Default: &tt.reply})
				resp, body := post(t, p.URL()+"/v1/messages", map[string]any{"model": "m", "stream": stream}, nil)
				if resp.StatusCode != tt.status {
					t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("content type %q, want application/json", ct)
				}
				if diff := cmp.Diff(tt.want, string(body)); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestProviderServesRepliesInOrderThenDefaultEvenConcurrently stops a reply
// being served twice or skipped when an agent's requests overlap.
func TestProviderServesRepliesInOrderThenDefaultEvenConcurrently(t *testing.T) {
	var replies []Reply
	for i := range 20 {
		replies = append(replies, Reply{Text: fmt.Sprintf("r%02d", i)})
	}
	p := startProvider(t, &Script{Replies: replies, Default: &Reply{Text: "default"}})
	got := make(chan string, 30)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			_, body := post(t, p.URL()+"/v1/messages", map[string]any{"model": "m"}, nil)
			m := decode(t, body)
			got <- m["content"].([]any)[0].(map[string]any)["text"].(string)
		})
	}
	wg.Wait()
	close(got)
	counts := map[string]int{}
	for s := range got {
		counts[s]++
	}
	want := map[string]int{"default": 10}
	for i := range 20 {
		want[fmt.Sprintf("r%02d", i)] = 1
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("replies served (-want +got):\n%s", diff)
	}

	// In order, sequentially.
	q := startProvider(t, &Script{Replies: replies[:2]})
	var texts []string
	for range 4 {
		_, body := post(t, q.URL()+"/v1/messages", map[string]any{}, nil)
		texts = append(texts, decode(t, body)["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	if diff := cmp.Diff([]string{"r00", "r01", "ok", "ok"}, texts); diff != "" {
		t.Errorf("served in order, then the built-in default (-want +got):\n%s", diff)
	}
}

// waitRequests waits until n requests are recorded; the deadline only
// bounds a broken test, it measures nothing.
func waitRequests(t *testing.T, p *Provider, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests arrived", len(p.Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProviderHangBlocksUntilCloseThenDropsTheConnection stops a hung reply
// that answers anyway (so timeouts go untested) or that outlives Close (a
// test that never ends).
func TestProviderHangBlocksUntilCloseThenDropsTheConnection(t *testing.T) {
	for _, reply := range []Reply{{Hang: true}, {DelayMS: 600_000, Text: "too late"}} {
		t.Run(fmt.Sprintf("hang=%v delay=%d", reply.Hang, reply.DelayMS), func(t *testing.T) {
			p := startProvider(t, &Script{Default: &reply})
			done := make(chan error, 1)
			go func() {
				resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil {
						err = fmt.Errorf("answered with status %d", resp.StatusCode)
						done <- err
						return
					}
				}
				done <- nil // the connection dropped, as it should
			}()
			waitRequests(t, p, 1)
			select {
			case err := <-done:
				t.Fatalf("request finished before Close: %v", err)
			default:
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Error(err)
			}
			if got := p.Requests()[0].Status; got != 0 {
				t.Errorf("recorded status %d for a request never answered, want 0", got)
			}
		})
	}
}

// TestProviderHangEndsWhenTheClientGivesUp stops a hung handler leaking
// after its client timed out.
func TestProviderHangEndsWhenTheClientGivesUp(t *testing.T) {
	var log lockedBuffer
	p := New(&Script{Default: &Reply{Hang: true}})
	p.Log = &log
	srvDone := make(chan error, 1)
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { srvDone <- p.Serve(ctx, "127.0.0.1:0", func(u string) { ready <- u }) }()
	url := <-ready
	reqCtx, giveUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(reqCtx, http.MethodPost, url+"/v1/messages", strings.NewReader(`{}`))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitRequests(t, p, 1)
	giveUp()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client error %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "hung, client gone") {
		if time.Now().After(deadline) {
			t.Fatalf("handler did not notice the client leaving; log:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-srvDone; err != nil {
		t.Errorf("Serve after cancel = %v, want nil", err)
	}
}

// TestProviderCutStreamEndsWithoutMessageStop stops a "cut" stream that
// ends cleanly: a dropped connection must look dropped, and must never
// reach message_stop whatever the count.
func TestProviderCutStreamEndsWithoutMessageStop(t *testing.T) {
	tests := []struct {
		cut  int
		want []string
	}{
		{1, []string{"message_start"}},
		{3, []string{"message_start", "content_block_start", "content_block_delta"}},
		{1000, []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
			"content_block_stop", "message_delta"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.cut), func(t *testing.T) {
			p := startProvider(t, &Script{Default: &Reply{Text: "cut me", Usage: FullUsage(1, 1, 1, 1), CutAfterEvents: tt.cut}})
			resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			events, err := sseRead(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("stream ended with %v, want io.ErrUnexpectedEOF (a dropped connection)", err)
			}
			if diff := cmp.Diff(tt.want, sseNames(events)); diff != "" {
				t.Errorf("events before the cut (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProviderAnswersWhereClaudeCodeCalls stops 404s for the URLs a real
// client uses: a path prefix kept from the base URL, ?beta=true, and the
// HEAD probe of the base URL.
func TestProviderAnswersWhereClaudeCodeCalls(t *testing.T) {
	p := startProvider(t, nil)
	tests := []struct {
		method, path string
		want         int
	}{
		{"POST", "/v1/messages", 200},
		{"POST", "/v1/messages?beta=true", 200},
		{"POST", "/anthropic/v1/messages", 200},
		{"POST", "/anthropic/v1/messages?beta=true", 200},
		{"HEAD", "/", 200},
		{"GET", "/", 200},
		{"HEAD", "/anthropic", 200},
		{"POST", "/v1/complete", 404},
		{"GET", "/v1/models", 404},
		{"GET", "/v1/messages", 404},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, p.URL()+tt.path, strings.NewReader(`{"model":"m"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
		})
	}
	if n := len(p.MessageRequests()); n != 4 {
		t.Errorf("MessageRequests() has %d requests, want the 4 POSTs to .../v1/messages", n)
	}
}

// TestProviderRecordsRequestsWithCredentialsRedacted stops an API key from
// reaching a recording, a log line or a failure message, while still
// letting a test assert that the key was sent.
func TestProviderRecordsRequestsWithCredentialsRedacted(t *testing.T) {
	const key = "sk-ant-secret-0123456789"
	var log lockedBuffer
	p := New(nil)
	p.Log = &log
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, "127.0.0.1:0", func(u string) { ready <- u }) }()
	url := <-ready
	body := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "review the change"}}}
	post(t, url+"/v1/messages?beta=true", body, map[string]string{
		"X-Api-Key":         key,
		"X-Goog-Api-Key":    key,
		"Authorization":     "Bearer " + key,
		"Anthropic-Version": "2023-06-01",
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	want := map[string][]string{
		"X-Api-Key":         {"[REDACTED]"},
		"X-Goog-Api-Key":    {"[REDACTED]"},
		"Authorization":     {"[REDACTED]"},
		"Anthropic-Version": {"2023-06-01"},
	}
	got := map[string][]string{}
	for k := range want {
		got[k] = r.Header[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded headers (-want +got):\n%s", diff)
	}
	if r.Method != "POST" || r.Path != "/v1/messages" || r.Query.Get("beta") != "true" || r.Status != 200 || r.At.IsZero() {
		t.Errorf("recorded %s", r)
	}
	if diff := cmp.Diff(any("review the change"), r.Body["messages"].([]any)[0].(map[string]any)["content"]); diff != "" {
		t.Errorf("recorded prompt (-want +got):\n%s", diff)
	}
	for where, text := range map[string]string{"String()": r.String(), "log": log.String(), "headers": fmt.Sprint(r.Header)} {
		if strings.Contains(text, "secret") {
			t.Errorf("the key leaked into %s: %s", where, text)
		}
	}
	if !strings.Contains(log.String(), "POST /v1/messages 200") {
		t.Errorf("log lacks the request line: %q", log.String())
	}
}

// TestProviderToleratesEverythingClaudeCodeSends stops a stand-in that
// chokes on fields a real client sends (system-role messages, thinking,
// metadata, tool definitions...), and one that consumes a scripted reply
// for a request it could not read.
func TestProviderToleratesEverythingClaudeCodeSends(t *testing.T) {
	p := startProvider(t, &Script{Replies: []Reply{{Text: "first"}}})
	resp, body := post(t, p.URL()+"/v1/messages", "not json {", nil)
	if resp.StatusCode != 400 || decode(t, body)["error"].(map[string]any)["type"] != "invalid_request_error" {
		t.Fatalf("non-JSON body: status %d %s, want 400 invalid_request_error", resp.StatusCode, body)
	}
	claudeCode := `{
		"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
		"system": [{"type": "text", "text": "You are Claude Code", "cache_control": {"type": "ephemeral"}}],
		"messages": [
			{"role": "system", "content": "injected reminder"},
			{"role": "user", "content": [{"type": "text", "text": "review the change"}]}
		],
		"tools": [{"name": "Write", "description": "w", "input_schema": {"type": "object"}}],
		"thinking": {"type": "enabled", "budget_tokens": 1024},
		"metadata": {"user_id": "u"},
		"context_management": {"edits": []},
		"output_config": {"effort": "high"},
		"temperature": 1, "some_future_field": [1, 2, 3]
	}`
	resp, body = post(t, p.URL()+"/v1/messages?beta=true", claudeCode, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	events, err := sseRead(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := events[2].Data["delta"].(map[string]any)["text"]; got != "fi" {
		t.Errorf("first delta %q: the bad request consumed the first reply", got)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[0].Body != nil || string(reqs[0].RawBody) != "not json {" || reqs[0].Status != 400 {
		t.Errorf("the bad request was not recorded as sent: %v", reqs)
	}
	if reqs[1].Body["system"] == nil {
		t.Errorf("parsed body lost the system field")
	}
}

// TestServeListensOnLoopbackOnly stops the provider (which answers anyone)
// from being exposed beyond this machine.
func TestServeListensOnLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.2:0", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"192.168.1.10:8080", false},
		{"example.com:80", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckLoopback(tt.addr)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckLoopback(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
			}
			if !tt.ok {
				if !errors.Is(err, ErrNotLoopback) {
					t.Errorf("error %v does not wrap ErrNotLoopback", err)
				}
				served := New(nil).Serve(context.Background(), tt.addr, func(string) { t.Error("Serve listened") })
				if !errors.Is(served, ErrNotLoopback) {
					t.Errorf("Serve(%q) = %v, want ErrNotLoopback", tt.addr, served)
				}
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for the provider's handler
// goroutines and the test to share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func benchmarkProvider(b *testing.B, stream bool) {
	p := startProvider(b, &Script{Default: &Reply{
		Text:  "reviewing the change",
		Tools: []Tool{{Name: "Write", Input: map[string]any{"file_path": "/tmp/review-output.json", "content": `{"verdict":"approve"}`}}},
		Usage: FullUsage(2000, 300, 7000, 1000),
	}})
	body, _ := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": "review the change"}},
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	url := p.URL() + "/v1/messages?beta=true"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n == 0 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
}

// BenchmarkProviderMessages measures one non-streaming model turn over real
// loopback HTTP (keep-alive).
func BenchmarkProviderMessages(b *testing.B) { benchmarkProvider(b, false) }

// BenchmarkProviderMessagesStream measures one streamed model turn (text and
// a tool call, 11 SSE events) over real loopback HTTP.
func BenchmarkProviderMessagesStream(b *testing.B) { benchmarkProvider(b, true) }

// TestProviderDiscardRequestsServesButKeepsNothing stops a long-running
// `wfb mock serve` from holding every request body it ever saw, without
// breaking the reply order or the unique ids.
func TestProviderDiscardRequestsServesButKeepsNothing(t *testing.T) {
	p := New(&Script{Replies: []Reply{{Text: "a"}, {Text: "b"}}})
	p.DiscardRequests = true
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, "127.0.0.1:0", func(u string) { ready <- u }) }()
	url := <-ready
	var got []string
	for range 3 {
		_, body := post(t, url+"/v1/messages", map[string]any{}, nil)
		m := decode(t, body)
		got = append(got, m["id"].(string)+" "+m["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"msg_mock_000001 a", "msg_mock_000002 b", "msg_mock_000003 ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served (-want +got):\n%s", diff)
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("kept %d requests, want none", n)
	}
}

// TestTheLogShowsTheControlsInARequestPath stops an agent from driving
// the terminal `wfb mock serve` logs to through its request path, which
// the log printed percent-decoded: %1b]52 set the clipboard, %0d
// overwrote the line.
func TestTheLogShowsTheControlsInARequestPath(t *testing.T) {
	var log lockedBuffer
	p := New(&Script{})
	p.Log = &log
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	srvDone := make(chan error, 1)
	go func() { srvDone <- p.Serve(ctx, "127.0.0.1:0", func(u string) { ready <- u }) }()
	url := <-ready
	resp, err := http.Post(url+"/v1/%1b]52;c;Y3VybA==%07x%0dOK%e2%80%ae", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-srvDone; err != nil {
		t.Fatal(err)
	}
	got := log.String()
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("the log writes %q raw: %q", bad, got)
		}
	}
	if want := `/v1/␛]52;c;Y3VybA==␇x␍OK\u202e`; !strings.Contains(got, want) {
		t.Errorf("the log does not show the path (%q): %q", want, got)
	}
}
