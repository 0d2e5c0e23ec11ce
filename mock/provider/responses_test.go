package provider

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func respBody(stream bool, tools ...any) map[string]any {
	return map[string]any{
		"model": "gpt-5-codex", "stream": stream,
		"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "review"}}}},
		"tools": tools,
	}
}

// respJSON re-encodes v (decoded with UseNumber) for comparison with a
// literal.
func respJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResponsesStreamsItemsThenCompletedWithUsage stops a Responses stream
// Codex cannot finish a turn from: items out of order, a text or tool call
// missing from the done items, usage outside response.completed, or usage
// in Anthropic semantics (cached tokens must be a subset of input).
func TestResponsesStreamsItemsThenCompletedWithUsage(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{
		Text:            "writing",
		Tools:           []Tool{{Name: "exec_command", Input: map[string]any{"cmd": "echo hi > out.json"}}},
		Usage:           FullUsage(100, 20, 300, 40),
		ReasoningTokens: 7,
	}})
	resp, body := post(t, p.URL()+"/v1/responses", respBody(true), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, err := sseRead(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	wantNames := []string{"response.created",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed"}
	if diff := cmp.Diff(wantNames, sseNames(events)); diff != "" {
		t.Fatalf("event order (-want +got):\n%s", diff)
	}
	for i, e := range events {
		if e.Data["type"] != e.Name {
			t.Errorf("event %d: data type %v, event name %s", i, e.Data["type"], e.Name)
		}
	}
	done := []string{respJSON(t, events[2].Data["item"]), respJSON(t, events[4].Data["item"])}
	want := []string{
		`{"content":[{"annotations":[],"text":"writing","type":"output_text"}],"id":"msg_mock_000001","role":"assistant","status":"completed","type":"message"}`,
		`{"arguments":"{\"cmd\":\"echo hi \\u003e out.json\"}","call_id":"call_mock_000001_1","id":"fc_mock_000001_1","name":"exec_command","status":"completed","type":"function_call"}`,
	}
	if diff := cmp.Diff(want, done); diff != "" {
		t.Errorf("done items (-want +got):\n%s", diff)
	}
	if _, ok := events[0].Data["response"].(map[string]any)["usage"]; ok {
		t.Errorf("response.created carries usage; only response.completed may")
	}
	completed := events[5].Data["response"].(map[string]any)
	wantUsage := `{"input_tokens":440,"input_tokens_details":{"cached_tokens":300},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":7},"total_tokens":460}`
	if got := respJSON(t, completed["usage"]); got != wantUsage {
		t.Errorf("usage\n got %s\nwant %s", got, wantUsage)
	}
	if n := len(p.ResponsesRequests()); n != 1 || len(p.MessageRequests()) != 0 {
		t.Errorf("recorded %d responses requests, %d messages requests; want 1 and 0", n, len(p.MessageRequests()))
	}
}

// TestResponsesUsageKeepsOmittedFieldsOmitted stops the mock from
// inventing usage: a field the script leaves out must be absent on the
// wire, so that a consumer's "missing usage" handling can be tested, and
// values that are not whole numbers are passed through, not summed.
func TestResponsesUsageKeepsOmittedFieldsOmitted(t *testing.T) {
	cases := []struct {
		name  string
		reply Reply
		want  string // the usage object; "" when absent
	}{
		{"no usage at all", Reply{Text: "hi"}, ""},
		{"output only", Reply{Text: "hi", Usage: Usage{"output_tokens": 5}}, `{"output_tokens":5}`},
		{"input without cache", Reply{Text: "hi", Usage: Usage{"input_tokens": 9, "output_tokens": 1}}, `{"input_tokens":9,"output_tokens":1,"total_tokens":10}`},
		{"nil value is absent", Reply{Text: "hi", Usage: Usage{"input_tokens": 9, "cache_read_input_tokens": nil}}, `{"input_tokens":9}`},
		{"string is verbatim", Reply{Text: "hi", Usage: Usage{"input_tokens": "1200", "output_tokens": 1, "cache_read_input_tokens": 3}}, `{"input_tokens":"1200","input_tokens_details":{"cached_tokens":3},"output_tokens":1}`},
		{"negative is summed as written", Reply{Text: "hi", Usage: Usage{"input_tokens": -5, "output_tokens": 1}}, `{"input_tokens":-5,"output_tokens":1,"total_tokens":-4}`},
		{"float is verbatim", Reply{Text: "hi", Usage: Usage{"input_tokens": json.Number("1.0"), "output_tokens": 1}}, `{"input_tokens":1.0,"output_tokens":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.reply
			p := startProvider(t, &Script{Default: &r})
			for _, stream := range []bool{false, true} {
				_, body := post(t, p.URL()+"/v1/responses", respBody(stream), nil)
				var obj map[string]any
				if stream {
					events, err := sseRead(bytes.NewReader(body))
					if err != nil || len(events) == 0 {
						t.Fatalf("read stream: %v (%d events)", err, len(events))
					}
					obj = events[len(events)-1].Data["response"].(map[string]any)
				} else {
					obj = decode(t, body)
				}
				u, present := obj["usage"]
				got := ""
				if present {
					got = respJSON(t, u)
				}
				if got != c.want {
					t.Errorf("stream=%v: usage %q, want %q", stream, got, c.want)
				}
			}
		})
	}
}

// TestResponsesFreeFormToolBecomesACustomToolCall stops Codex's apply_patch
// from arriving as a function call it cannot run: a tool the request
// declares as "custom" is answered with a custom_tool_call carrying the
// raw input.
func TestResponsesFreeFormToolBecomesACustomToolCall(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
	p := startProvider(t, &Script{Default: &Reply{Tools: []Tool{{Name: "apply_patch", Input: map[string]any{"input": patch}}}}})
	_, body := post(t, p.URL()+"/v1/responses", respBody(false, map[string]any{"type": "custom", "name": "apply_patch"}), nil)
	obj := decode(t, body)
	out := obj["output"].([]any)
	want := `[{"call_id":"call_mock_000001_1","id":"fc_mock_000001_1","input":` + respJSON(t, patch) + `,"name":"apply_patch","status":"completed","type":"custom_tool_call"}]`
	if got := respJSON(t, out); got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}

	// Declared as a function instead, the same tool is a function call.
	_, body = post(t, p.URL()+"/v1/responses", respBody(false, map[string]any{"type": "function", "name": "apply_patch"}), nil)
	if typ := decode(t, body)["output"].([]any)[0].(map[string]any)["type"]; typ != "function_call" {
		t.Errorf("declared as a function: item type %v, want function_call", typ)
	}
}

// TestResponsesScriptedFailureIsAnOpenAIErrorBody stops a scripted failure
// from reaching Codex in a shape it does not read as an API error.
func TestResponsesScriptedFailureIsAnOpenAIErrorBody(t *testing.T) {
	cases := []struct {
		reply Reply
		code  int
		want  string
	}{
		{Reply{Status: 529}, 529, `{"error":{"code":null,"message":"Overloaded","param":null,"type":"server_error"}}`},
		{Reply{Status: 400}, 400, `{"error":{"code":null,"message":"Invalid request","param":null,"type":"invalid_request_error"}}`},
		{Reply{Status: 429}, 429, `{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"type":"rate_limit_error"}}`},
		{Reply{Status: 500, Error: json.RawMessage(`{"type":"server_error","message":"boom"}`)}, 500, `{"error":{"type":"server_error","message":"boom"}}`},
	}
	for _, c := range cases {
		t.Run(http.StatusText(c.code), func(t *testing.T) {
			r := c.reply
			p := startProvider(t, &Script{Default: &r})
			for _, stream := range []bool{false, true} {
				resp, body := post(t, p.URL()+"/v1/responses", respBody(stream), nil)
				if resp.StatusCode != c.code || string(body) != c.want {
					t.Errorf("stream=%v: %d %s, want %d %s", stream, resp.StatusCode, body, c.code, c.want)
				}
			}
		})
	}
}

// TestResponsesAndMessagesShareOneReplySequence stops one script from
// meaning different things to the two APIs: the n-th model request of
// either kind gets the n-th reply.
func TestResponsesAndMessagesShareOneReplySequence(t *testing.T) {
	p := startProvider(t, &Script{Replies: []Reply{{Text: "first"}, {Text: "second"}}, Default: &Reply{Text: "later"}})
	msgBody := streamBody("claude-mock")
	msgBody["stream"] = false
	_, b1 := post(t, p.URL()+"/v1/messages", msgBody, nil)
	_, b2 := post(t, p.URL()+"/v1/responses", respBody(false), nil)
	_, b3 := post(t, p.URL()+"/v1/responses", respBody(false), nil)
	if got := decode(t, b1)["content"].([]any)[0].(map[string]any)["text"]; got != "first" {
		t.Errorf("messages request 1 did not get reply 1: %s", b1)
	}
	text := func(b []byte) any {
		return decode(t, b)["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	}
	if got := []any{text(b2), text(b3)}; !cmp.Equal(got, []any{"second", "later"}) {
		t.Errorf("responses texts %v, want [second later]", got)
	}
}

// TestResponsesCutStreamNeverCompletes stops a scripted dropped connection
// from looking like a finished turn.
func TestResponsesCutStreamNeverCompletes(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{Text: "dropped", CutAfterEvents: 99}})
	req, err := http.NewRequest(http.MethodPost, p.URL()+"/v1/responses", bytes.NewReader([]byte(respJSON(t, respBody(true)))))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, _ := sseRead(resp.Body)
	for _, e := range events {
		if e.Name == "response.completed" {
			t.Fatalf("a cut stream reached response.completed: %v", sseNames(events))
		}
	}
	if len(events) != 3 {
		t.Errorf("events %v, want the 3 before response.completed", sseNames(events))
	}
}

// TestAnMCPToolIsCalledInEachAgentsOwnSpelling lets one script drive an
// MCP tool call of every agent: Claude Code calls mcp__SERVER__TOOL,
// Codex a function TOOL (hyphens made underscores) in namespace
// mcp__SERVER — a flat name it answers "unsupported call" — and Gemini CLI
// mcp_SERVER_TOOL.
func TestAnMCPToolIsCalledInEachAgentsOwnSpelling(t *testing.T) {
	tools := []Tool{{Name: "mcp__everything__get-env", Input: map[string]any{}}, {Name: "mcp__", Input: map[string]any{}}}
	p := startProvider(t, &Script{Default: &Reply{Tools: tools}})
	_, body := post(t, p.URL()+"/v1/responses", respBody(false), nil)
	out := decode(t, body)["output"].([]any)
	first, second := out[0].(map[string]any), out[1].(map[string]any)
	if first["namespace"] != "mcp__everything" || first["name"] != "get_env" || first["type"] != "function_call" {
		t.Errorf("codex's MCP call: %v; want function get_env in namespace mcp__everything", first)
	}
	if _, ok := second["namespace"]; ok || second["name"] != "mcp__" {
		t.Errorf("a name that is not mcp__SERVER__TOOL: %v; want it served as written, with no namespace", second)
	}
	_, chunks, err := gemStream(t, p, gemBody("go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(chunks, ""), `"name":"mcp_everything_get-env"`) {
		t.Errorf("gemini's MCP call: %s; want name mcp_everything_get-env", chunks)
	}
}

// TestAReplyCanAnswerOnlyARequestThatOffersATool lets an arm given a tool
// and an arm without it share one script: the reply that calls the tool
// answers only a request that offers it, in each API's own shape.
func TestAReplyCanAnswerOnlyARequestThatOffersATool(t *testing.T) {
	script := func() *Script {
		return &Script{
			Replies: []Reply{{Text: "with", Match: &Match{Offers: "mcp__code__find-symbol"}}},
			Default: &Reply{Text: "without"},
		}
	}
	text := func(t *testing.T, body []byte) string {
		t.Helper()
		return string(body)
	}
	tests := []struct {
		name, path string
		offering   map[string]any
	}{
		{"messages", "/v1/messages", map[string]any{"model": "m", "max_tokens": 10, "messages": []any{map[string]any{"role": "user", "content": "hi"}},
			"tools": []any{map[string]any{"name": "mcp__code__find-symbol", "input_schema": map[string]any{"type": "object"}}}}},
		{"responses", "/v1/responses", map[string]any{"model": "m", "input": []any{},
			"tools": []any{map[string]any{"type": "namespace", "name": "mcp__code", "tools": []any{map[string]any{"type": "function", "name": "find_symbol"}}}}}},
		{"gemini", "/v1beta/models/m:generateContent", map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}},
			"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "mcp_code_find-symbol"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProvider(t, script())
			bare := maps.Clone(tt.offering)
			delete(bare, "tools")
			if _, body := post(t, p.URL()+tt.path, bare, nil); !strings.Contains(text(t, body), "without") {
				t.Errorf("a request offering no tool got %s; want the default", body)
			}
			if _, body := post(t, p.URL()+tt.path, tt.offering, nil); !strings.Contains(text(t, body), "with") || strings.Contains(text(t, body), "without") {
				t.Errorf("a request offering the tool got %s; want the matched reply", body)
			}
		})
	}
}
