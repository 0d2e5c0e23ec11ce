package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chatBody is a Chat Completions request as the openai SDKs send one (and
// @ai-sdk/openai-compatible, which opencode uses): a system and a user
// message, tools as {type: function, function: {name, description,
// parameters}}, and, streaming, stream_options.include_usage when usage
// is asked for.
func chatBody(stream, includeUsage bool, tools ...string) map[string]any {
	body := map[string]any{
		"model": "qwen3-coder-plus",
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a coding agent."},
			map[string]any{"role": "user", "content": "review the change"},
		},
	}
	if stream {
		body["stream"] = true
		if includeUsage {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
	}
	var decl []any
	for _, name := range tools {
		decl = append(decl, map[string]any{"type": "function", "function": map[string]any{
			"name": name, "description": "a tool",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{}},
		}})
	}
	if decl != nil {
		body["tools"] = decl
		body["tool_choice"] = "auto"
	}
	return body
}

// chatSSE reads a Chat Completions stream the way the openai SDKs do:
// data: lines, each a JSON chunk, until data: [DONE]. It returns the
// chunks, whether [DONE] came, and the error that ended the stream (nil
// for a clean end).
func chatSSE(r io.Reader) (chunks []map[string]any, done bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			blank = true
		case !blank:
			return chunks, done, fmt.Errorf("two lines in one event: %q", line)
		case done:
			return chunks, done, fmt.Errorf("%q after [DONE]", line)
		case line == "data: [DONE]":
			done, blank = true, false
		case strings.HasPrefix(line, "data: "):
			dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(line, "data: ")))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return chunks, done, fmt.Errorf("data is not JSON: %v", err)
			}
			chunks, blank = append(chunks, m), false
		default:
			return chunks, done, fmt.Errorf("unexpected line %q", line)
		}
	}
	return chunks, done, sc.Err()
}

// chatStream posts a streaming request to path and reads it whole, or up
// to the error that cut it.
func chatStream(t *testing.T, url string, body any) (*http.Response, []map[string]any, bool, error) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-chat-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	chunks, done, err := chatSSE(resp.Body)
	return resp, chunks, done, err
}

// chatJoin is what a client makes of a stream: the text, each tool call
// (by index) as name and arguments, the finish reasons, and the usage
// chunks.
type chatJoined struct {
	Text    string
	Calls   []string // "id name arguments"
	Finish  []string
	Usage   []string // each non-null usage, as JSON
	Nulls   int      // chunks whose usage is null
	NoUsage int      // chunks without a usage key
}

func chatJoin(t *testing.T, chunks []map[string]any) chatJoined {
	t.Helper()
	var j chatJoined
	type call struct{ id, name, args string }
	var calls []*call
	for i, c := range chunks {
		if c["object"] != "chat.completion.chunk" {
			t.Errorf("chunk %d: object %v", i, c["object"])
		}
		switch u, ok := c["usage"]; {
		case !ok:
			j.NoUsage++
		case u == nil:
			j.Nulls++
		default:
			j.Usage = append(j.Usage, respJSON(t, u))
		}
		for _, ch := range c["choices"].([]any) {
			choice := ch.(map[string]any)
			if f, _ := choice["finish_reason"].(string); f != "" {
				j.Finish = append(j.Finish, f)
			}
			d := choice["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				j.Text += s
			}
			tcs, _ := d["tool_calls"].([]any)
			for _, tc := range tcs {
				m := tc.(map[string]any)
				idx, err := m["index"].(json.Number).Int64()
				if err != nil {
					t.Fatalf("chunk %d: a tool call delta without an index: %v", i, m)
				}
				for int(idx) >= len(calls) {
					calls = append(calls, &call{})
				}
				fn := m["function"].(map[string]any)
				if id, ok := m["id"].(string); ok {
					calls[idx].id = id
				}
				if n, ok := fn["name"].(string); ok {
					calls[idx].name += n
				}
				if a, ok := fn["arguments"].(string); ok {
					calls[idx].args += a
				}
			}
		}
	}
	for _, c := range calls {
		j.Calls = append(j.Calls, c.id+" "+c.name+" "+c.args)
	}
	return j
}

// TestChatStreamsDeltasThenFinishThenUsageThenDone stops a Chat
// Completions stream an OpenAI-compatible client cannot finish a turn
// from: text not split across chunks (a client that keeps only one would
// pass), a tool call whose arguments arrive without its index, a
// finish_reason before the last delta, usage anywhere but a last chunk with
// empty choices, a stream without [DONE], or usage in Anthropic semantics
// (OpenAI's cached tokens are a subset of the prompt).
func TestChatStreamsDeltasThenFinishThenUsageThenDone(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{
		Text: "writing",
		Tools: []Tool{
			{Name: "write_file", Input: map[string]any{"file_path": "/tmp/out.json", "content": "{}"}},
			{Name: "run_shell_command", Input: map[string]any{"command": "ls"}},
		},
		Usage:           FullUsage(100, 20, 300, 40),
		ReasoningTokens: 7,
	}})
	resp, chunks, done, err := chatStream(t, p.URL()+"/v1/chat/completions", chatBody(true, true, "write_file", "run_shell_command"))
	if err != nil || !done {
		t.Fatalf("read stream: %v, [DONE] %v", err, done)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	j := chatJoin(t, chunks)
	want := chatJoined{
		Text: "writing",
		Calls: []string{
			`call_mock_000001_1 write_file {"content":"{}","file_path":"/tmp/out.json"}`,
			`call_mock_000001_2 run_shell_command {"command":"ls"}`,
		},
		Finish: []string{"tool_calls"},
		Usage:  []string{`{"completion_tokens":20,"completion_tokens_details":{"reasoning_tokens":7},"prompt_tokens":440,"prompt_tokens_details":{"cached_tokens":300},"total_tokens":460}`},
		Nulls:  len(chunks) - 1,
	}
	if diff := cmp.Diff(want, j); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	first := chunks[0]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	if first["role"] != "assistant" {
		t.Errorf("the first delta has no role: %v", first)
	}
	textChunks := 0
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			if s, _ := ch.(map[string]any)["delta"].(map[string]any)["content"].(string); s != "" {
				textChunks++
			}
		}
	}
	if textChunks < 2 {
		t.Errorf("the text came in %d chunk(s); a client must be made to join them", textChunks)
	}
	n := len(chunks)
	if choices := chunks[n-1]["choices"].([]any); len(choices) != 0 {
		t.Errorf("the usage chunk has choices %v; OpenAI sends it with none", choices)
	}
	if f := chunks[n-2]["choices"].([]any)[0].(map[string]any); f["finish_reason"] != "tool_calls" || len(f["delta"].(map[string]any)) != 0 {
		t.Errorf("the chunk before the usage is %v, want the finish_reason with an empty delta", f)
	}
	for _, c := range chunks {
		if c["model"] != "qwen3-coder-plus" || c["id"] != "chatcmpl-mock_000001" {
			t.Errorf("chunk model %v id %v", c["model"], c["id"])
		}
	}
	if n := len(p.ChatRequests()); n != 1 || len(p.ResponsesRequests())+len(p.MessageRequests()) != 0 {
		t.Errorf("recorded %d chat requests and %d others; want 1 and 0", n, len(p.ResponsesRequests())+len(p.MessageRequests()))
	}
}

// TestChatStreamWithoutIncludeUsageCarriesNoUsage stops the mock from
// sending what OpenAI does not: without stream_options.include_usage a
// stream carries no usage at all (not even null), so that a consumer's
// handling of a stream without usage can be tested.
func TestChatStreamWithoutIncludeUsageCarriesNoUsage(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{Text: "hi", Usage: FullUsage(10, 5, 0, 0)}})
	for _, body := range []map[string]any{chatBody(true, false), func() map[string]any {
		b := chatBody(true, false)
		b["stream_options"] = map[string]any{"include_usage": false}
		return b
	}()} {
		_, chunks, done, err := chatStream(t, p.URL()+"/v1/chat/completions", body)
		if err != nil || !done {
			t.Fatalf("read stream: %v, [DONE] %v", err, done)
		}
		j := chatJoin(t, chunks)
		if j.NoUsage != len(chunks) || j.Text != "hi" || !cmp.Equal(j.Finish, []string{"stop"}) {
			t.Errorf("stream_options %v: %+v, want %d chunks without a usage key", body["stream_options"], j, len(chunks))
		}
	}
}

// TestChatJSONReplyIsOneChatCompletion stops a non-streamed answer a
// client cannot read: the object, the assistant message with its text or
// null beside tool calls, the finish_reason, and usage in OpenAI's
// arithmetic.
func TestChatJSONReplyIsOneChatCompletion(t *testing.T) {
	p := startProvider(t, &Script{Replies: []Reply{
		{Text: "done", Usage: FullUsage(9, 1, 0, 0), StopReason: "max_tokens"},
		{Tools: []Tool{{Name: "write_file", Input: map[string]any{"file_path": "/a", "n": json.Number("1.5")}}}},
	}})
	_, b1 := post(t, p.URL()+"/v1/chat/completions", chatBody(false, false), nil)
	_, b2 := post(t, p.URL()+"/v1/chat/completions", chatBody(false, false), nil)
	got := []string{respJSON(t, decode(t, b1)["choices"]), respJSON(t, decode(t, b2)["choices"])}
	want := []string{
		`[{"finish_reason":"length","index":0,"logprobs":null,"message":{"content":"done","refusal":null,"role":"assistant"}}]`,
		`[{"finish_reason":"tool_calls","index":0,"logprobs":null,"message":{"content":null,"refusal":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"file_path\":\"/a\",\"n\":1.5}","name":"write_file"},"id":"call_mock_000002_1","type":"function"}]}}]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	obj := decode(t, b1)
	if obj["object"] != "chat.completion" || obj["model"] != "qwen3-coder-plus" || respJSON(t, obj["usage"]) != `{"completion_tokens":1,"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":0},"total_tokens":10}` {
		t.Errorf("completion %s", b1)
	}
	if _, has := decode(t, b2)["usage"]; has {
		t.Errorf("a reply without usage carries usage: %s", b2)
	}
}

// TestChatUsageKeepsOmittedFieldsOmitted stops the mock from inventing
// usage: a field the script leaves out must be absent on the wire, in a
// whole reply and in a stream that asked for usage, and a value that is no
// whole number is passed through, not summed.
func TestChatUsageKeepsOmittedFieldsOmitted(t *testing.T) {
	cases := []struct {
		name  string
		reply Reply
		want  string // the usage object; "" when absent
	}{
		{"no usage at all", Reply{Text: "hi"}, ""},
		{"no cache fields: no prompt_tokens_details", Reply{Text: "hi", Usage: Usage{"input_tokens": 9, "output_tokens": 1}}, `{"completion_tokens":1,"prompt_tokens":9,"total_tokens":10}`},
		{"output only", Reply{Text: "hi", Usage: Usage{"output_tokens": 5}}, `{"completion_tokens":5}`},
		{"reasoning without output", Reply{Text: "hi", ReasoningTokens: 3}, `{"completion_tokens_details":{"reasoning_tokens":3}}`},
		{"string is verbatim", Reply{Text: "hi", Usage: Usage{"input_tokens": "1200", "output_tokens": 1, "cache_read_input_tokens": 3}}, `{"completion_tokens":1,"prompt_tokens":"1200","prompt_tokens_details":{"cached_tokens":3}}`},
		{"negative is summed as written", Reply{Text: "hi", Usage: Usage{"input_tokens": -5, "output_tokens": 1}}, `{"completion_tokens":1,"prompt_tokens":-5,"total_tokens":-4}`},
		{"bool is verbatim", Reply{Text: "hi", Usage: Usage{"input_tokens": 5, "output_tokens": true}}, `{"completion_tokens":true,"prompt_tokens":5}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.reply
			p := startProvider(t, &Script{Default: &r})
			_, body := post(t, p.URL()+"/v1/chat/completions", chatBody(false, false), nil)
			got := ""
			if u, ok := decode(t, body)["usage"]; ok {
				got = respJSON(t, u)
			}
			if got != c.want {
				t.Errorf("json: usage %s, want %s", got, c.want)
			}
			_, chunks, done, err := chatStream(t, p.URL()+"/v1/chat/completions", chatBody(true, true))
			if err != nil || !done {
				t.Fatalf("read stream: %v, [DONE] %v", err, done)
			}
			j := chatJoin(t, chunks)
			got = strings.Join(j.Usage, " ")
			if got != c.want {
				t.Errorf("stream: usage chunks %q, want %q", got, c.want)
			}
		})
	}
}

// TestChatMCPToolIsCalledByTheNameTheRequestOffers stops one script from
// failing an arm because its agent spells MCP tools its own way: the
// script's mcp__SERVER__TOOL is called as opencode (SERVER_TOOL) or Qwen
// Code (mcp__SERVER__TOOL) offers it, always a name OpenAI accepts; and
// match: offers finds the tool under either spelling.
func TestChatMCPToolIsCalledByTheNameTheRequestOffers(t *testing.T) {
	cases := []struct {
		name    string
		offered []string
		want    string
	}{
		{"opencode", []string{"read", "everything_get-env"}, "everything_get-env"},
		{"qwen code", []string{"read_file", "mcp__everything__get-env"}, "mcp__everything__get-env"},
		{"not offered", []string{"read"}, "mcp__everything__get-env"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startProvider(t, &Script{
				Replies: []Reply{{Text: "offered", Match: &Match{Offers: "mcp__everything__get-env"}, Tools: []Tool{{Name: "mcp__everything__get-env"}}}},
				Default: &Reply{Text: "not offered", Tools: []Tool{{Name: "mcp__everything__get-env"}}},
			})
			_, body := post(t, p.URL()+"/v1/chat/completions", chatBody(false, false, c.offered...), nil)
			msg := decode(t, body)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
			name := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["name"]
			if name != c.want {
				t.Errorf("called %v, want %s", name, c.want)
			}
			wantText := "offered"
			if c.name == "not offered" {
				wantText = "not offered"
			}
			if msg["content"] != wantText {
				t.Errorf("answered %q, want %q (match: offers)", msg["content"], wantText)
			}
		})
	}
	// A name OpenAI would refuse is made one it accepts.
	if got := chatMCPNames("my server", "a.b"); !cmp.Equal(got, []string{"mcp__my_server__a_b", "my_server_a_b"}) {
		t.Errorf("names %v", got)
	}
	if got := chatMCPNames(strings.Repeat("s", 70), "t")[0]; len(got) != 64 {
		t.Errorf("a name of %d characters; OpenAI takes at most 64", len(got))
	}
}

// TestChatScriptedFailureIsAnOpenAIErrorBody stops a scripted failure from
// reaching an OpenAI-compatible client in another API's shape: the status
// as scripted (429, 500, OpenAI's 503 for overload, and Anthropic's 529
// kept as written), before any chunk, as {"error": {message, type, param,
// code}}; a scripted error object is served as written.
func TestChatScriptedFailureIsAnOpenAIErrorBody(t *testing.T) {
	cases := []struct {
		reply Reply
		want  string
	}{
		{Reply{Status: 429}, `{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"type":"rate_limit_error"}}`},
		{Reply{Status: 500}, `{"error":{"code":null,"message":"Internal Server Error","param":null,"type":"server_error"}}`},
		{Reply{Status: 503, Error: json.RawMessage(`{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}`)},
			`{"error":{"code":null,"message":"The engine is currently overloaded, please try again later","param":null,"type":"server_error"}}`},
		{Reply{Status: 529}, `{"error":{"code":null,"message":"Overloaded","param":null,"type":"server_error"}}`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/stream=%v", c.reply.Status, stream), func(t *testing.T) {
				r := c.reply
				p := startProvider(t, &Script{Default: &r})
				resp, body := post(t, p.URL()+"/v1/chat/completions", chatBody(stream, stream), nil)
				if resp.StatusCode != c.reply.Status || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if got := respJSON(t, decode(t, body)); got != c.want {
					t.Errorf("body\n got %s\nwant %s", got, c.want)
				}
			})
		}
	}
}

// TestChatCutStreamNeverFinishes stops a scripted broken stream from
// looking like a finished turn: cut or cut cleanly, no chunk carries a
// finish_reason or usage, and no [DONE] comes. A cut drops the connection
// (the client sees an error); a clean cut ends the response normally.
func TestChatCutStreamNeverFinishes(t *testing.T) {
	for _, clean := range []bool{false, true} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			p := startProvider(t, &Script{Default: &Reply{Text: "dropped", Tools: []Tool{{Name: "read", Input: map[string]any{"p": 1}}},
				Usage: FullUsage(1, 1, 0, 0), CutAfterEvents: 99, CutCleanly: clean}})
			_, chunks, done, err := chatStream(t, p.URL()+"/v1/chat/completions", chatBody(true, true))
			if clean != (err == nil) {
				t.Errorf("read error %v; want one only for a dropped connection", err)
			}
			j := chatJoin(t, chunks)
			if done || len(j.Finish) > 0 || len(j.Usage) > 0 {
				t.Errorf("a cut stream finished: [DONE] %v, %+v", done, j)
			}
			// role, two text halves, the call's head and two argument halves.
			if len(chunks) != 6 {
				t.Errorf("%d chunks, want the 6 before the finish", len(chunks))
			}
		})
	}
}

// TestChatIsAnsweredUnderAnyBaseURL stops the mock from missing requests a
// client sends under a base URL of its own: the openai SDKs and
// @ai-sdk/openai-compatible append /chat/completions to whatever base URL
// they are given (http://HOST/v1 usually, or a prefix of the user's).
func TestChatIsAnsweredUnderAnyBaseURL(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{Text: "here"}})
	for _, path := range []string{"/v1/chat/completions", "/chat/completions", "/compatible-mode/v1/chat/completions/"} {
		resp, body := post(t, p.URL()+path, chatBody(false, false), nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"content":"here"`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, _ := post(t, p.URL()+"/v1/chat/completions/extra", chatBody(false, false), nil)
	if resp.StatusCode != 404 {
		t.Errorf("a path past /chat/completions answered %d, want 404", resp.StatusCode)
	}
}

// TestChatTurnCountsAssistantMessages stops a recorded or hand-written
// match: {turn} from answering the wrong request of a Chat Completions
// conversation: the turn is the number of assistant messages (tool results
// are role "tool", not turns), and the reply sequence is shared with the
// other APIs.
func TestChatTurnCountsAssistantMessages(t *testing.T) {
	one, zero := 1, 0
	p := startProvider(t, &Script{Replies: []Reply{
		{Text: "second turn", Match: &Match{Turn: &one}},
		{Text: "first turn", Match: &Match{Turn: &zero}},
		{Text: "anthropic next"},
	}})
	later := chatBody(false, false)
	later["messages"] = append(later["messages"].([]any),
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "read", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "file text"})
	_, b1 := post(t, p.URL()+"/v1/chat/completions", later, nil)
	_, b2 := post(t, p.URL()+"/v1/chat/completions", chatBody(false, false), nil)
	msgBody := streamBody("claude-mock")
	msgBody["stream"] = false
	_, b3 := post(t, p.URL()+"/v1/messages", msgBody, nil)
	for i, c := range []struct {
		body []byte
		want string
	}{{b1, `"content":"second turn"`}, {b2, `"content":"first turn"`}, {b3, `"text":"anthropic next"`}} {
		if !strings.Contains(string(c.body), c.want) {
			t.Errorf("request %d: %s, want %s", i+1, c.body, c.want)
		}
	}
}

// TestAScriptedFailureCarriesItsRetryHint stops retry_after_ms from being
// lost on any API, or sent on a success: opencode retries a 5xx five
// times with a backoff of 2 s doubling (80 s for a 529) unless the
// response says how long to wait, and Qwen Code does the same for a 429
// or a 503, so a test of a failure is only fast when the hint arrives.
func TestAScriptedFailureCarriesItsRetryHint(t *testing.T) {
	for _, c := range []struct {
		name, path string
		body       any
	}{
		{"messages", "/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
		{"responses", "/v1/responses", map[string]any{"model": "gpt-5-codex", "input": "hi"}},
		{"chat", "/v1/chat/completions", chatBody(true, true)},
		{"gemini", "/v1beta/models/gemini-2.5-pro:generateContent", map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startProvider(t, &Script{Replies: []Reply{
				{Status: 529, RetryAfterMS: 10},
				{Status: 503, RetryAfterMS: 2500},
				{Status: 429},
				{Text: "fine", RetryAfterMS: 10}, // a success carries no hint
			}})
			for i, want := range [][2]string{{"10", "1"}, {"2500", "3"}, {"", ""}, {"", ""}} {
				resp, _ := post(t, p.URL()+c.path, c.body, nil)
				if got := [2]string{resp.Header.Get("Retry-After-Ms"), resp.Header.Get("Retry-After")}; got != want {
					t.Errorf("reply %d (status %d): retry-after-ms %q retry-after %q, want %q %q", i+1, resp.StatusCode, got[0], got[1], want[0], want[1])
				}
			}
		})
	}
	_, err := ParseScript("s.yaml", []byte("default:\n  text: hi\n  retry_after_ms: 10\n"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:3:19: default.retry_after_ms: is a failure's retry hint; it needs a non-2xx status") {
		t.Errorf("retry_after_ms on a success: %v, want it refused where it is written", err)
	}
	s, err := ParseScript("s.yaml", []byte("default:\n  status: 529\n  retry_after_ms: 10\n"))
	if err != nil || s.Default.RetryAfterMS != 10 {
		t.Errorf("retry_after_ms on a 529: %v, %+v", err, s)
	}
}

// TestEveryWholeChatStreamFinishes stops a streamed reply the script did
// not cut from ending without a finish_reason: opencode 1.18 answers such
// a stream with a new request, forever (691 requests in two minutes), and
// Qwen Code retries it five times. Whatever the reply holds — no text, no
// usage, only tools, a stop reason of its own — one chunk finishes it.
func TestEveryWholeChatStreamFinishes(t *testing.T) {
	for _, r := range []Reply{
		{},
		{Text: "plain"},
		{Tools: []Tool{{Name: "write", Input: map[string]any{"filePath": "/a", "content": "x"}}}},
		{Text: "no usage", Usage: nil},
		{Text: "odd stop", StopReason: "pause_turn", Usage: FullUsage(1, 1, 0, 0)},
		{Text: "bad usage", Usage: Usage{"input_tokens": "7", "output_tokens": -1}},
	} {
		for _, includeUsage := range []bool{false, true} {
			p := startProvider(t, &Script{Default: &r})
			_, chunks, done, err := chatStream(t, p.URL()+"/v1/chat/completions", chatBody(true, includeUsage))
			j := chatJoin(t, chunks)
			if err != nil || !done || len(j.Finish) != 1 || j.Finish[0] == "" {
				t.Errorf("%+v (include_usage %v): finish %q, [DONE] %v, err %v; want one finish_reason", r, includeUsage, j.Finish, done, err)
			}
		}
	}
}
