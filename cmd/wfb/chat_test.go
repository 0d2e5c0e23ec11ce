package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/store"
)

// The tests here run OpenAI Chat Completions the whole way: wfb mock
// serve (the scripted provider) behind wfb proxy (the meter), both real
// processes, into a real results file; the requests are written as the
// openai SDKs (and @ai-sdk/openai-compatible) send them.

// chatReq is a Chat Completions request body as the openai SDKs send one:
// messages, tools as {type: function, function: {...}}, and for a stream
// stream_options.include_usage when usage asks for it.
func chatReq(messages []any, stream, usage bool) map[string]any {
	body := map[string]any{
		"model":    "qwen3-coder-plus",
		"messages": messages,
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "read_file", "description": "Read a file",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}}},
			map[string]any{"type": "function", "function": map[string]any{"name": "everything_echo", "description": "Echo (MCP server everything)",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}}},
		},
		"tool_choice": "auto",
	}
	if stream {
		body["stream"] = true
		if usage {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
	}
	return body
}

// chatTurn is what a client makes of one answer.
type chatTurn struct {
	Status int
	Text   string
	Calls  []chatCall
	Usage  map[string]any // nil: none on the wire
	Done   bool           // a stream's [DONE] came
}

type chatCall struct{ ID, Name, Arguments string }

// postChat sends body to base's /chat/completions with the key as a
// bearer token (as the SDKs do), and reads the answer as a client does:
// a stream's content deltas joined, tool calls joined by index, the usage
// chunk; a whole completion's message.
func postChat(t *testing.T, base string, body map[string]any) chatTurn {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, base+"/chat/completions", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+proxySecret)
	req.Header.Set("User-Agent", "OpenAI/JS 5.12.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	turn := chatTurn{Status: resp.StatusCode}
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		return turn
	}
	type message struct {
		Content   *string `json:"content"`
		ToolCalls []struct {
			Index    int    `json:"index"`
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	var chunk struct {
		Choices []struct {
			Message message `json:"message"`
			Delta   message `json:"delta"`
		} `json:"choices"`
		Usage map[string]any `json:"usage"`
	}
	calls := map[int]*chatCall{}
	take := func(m message) {
		if m.Content != nil {
			turn.Text += *m.Content
		}
		for _, tc := range m.ToolCalls {
			c := calls[tc.Index]
			if c == nil {
				c = &chatCall{}
				calls[tc.Index] = c
			}
			c.ID += tc.ID
			c.Name += tc.Function.Name
			c.Arguments += tc.Function.Arguments
		}
	}
	if body["stream"] != true {
		if err := json.NewDecoder(resp.Body).Decode(&chunk); err != nil {
			t.Fatalf("the completion is not JSON: %v", err)
		}
		if len(chunk.Choices) > 0 {
			m := chunk.Choices[0].Message
			for j := range m.ToolCalls {
				m.ToolCalls[j].Index = j // a whole message's calls have none
			}
			take(m)
		}
		turn.Usage = chunk.Usage
	} else {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if data == "[DONE]" {
				turn.Done = true
				continue
			}
			chunk.Choices, chunk.Usage = nil, nil
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				t.Fatalf("a chunk is not JSON: %v: %s", err, data)
			}
			for _, ch := range chunk.Choices {
				take(ch.Delta)
			}
			if chunk.Usage != nil {
				turn.Usage = chunk.Usage
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("read the stream: %v", err)
		}
	}
	keys := make([]int, 0, len(calls))
	for k := range calls {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		turn.Calls = append(turn.Calls, *calls[k])
	}
	return turn
}

// wireRow is what the results file holds of one metered request.
type wireRow struct {
	Protocol, ErrorType                                     string
	Status, Billed                                          int64
	Input, Output, CacheRead, CacheCreation, Reasoning, Raw any // nil: NULL
	Streamed                                                int64
	Problem                                                 string
}

func wireRows(t *testing.T, dbPath, attempt string) []wireRow {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, rows, err := db.Query(ctx, `SELECT COALESCE(protocol, ''), COALESCE(error_type, ''), status, billed, input_tokens, output_tokens,
		cache_read_input_tokens, cache_creation_input_tokens, reasoning_output_tokens, usage_raw, streamed, COALESCE(usage_problem, '')
		FROM requests WHERE attempt_id = ? ORDER BY seq`, attempt)
	if err != nil {
		t.Fatal(err)
	}
	var out []wireRow
	for _, r := range rows {
		out = append(out, wireRow{Protocol: r[0].(string), ErrorType: r[1].(string), Status: r[2].(int64), Billed: r[3].(int64),
			Input: r[4], Output: r[5], CacheRead: r[6], CacheCreation: r[7], Reasoning: r[8], Raw: r[9], Streamed: r[10].(int64), Problem: r[11].(string)})
	}
	return out
}

// chatCases are the requests TestChatCompletionsThroughWfbProxyRecordWhatTheWireSaid
// sends, one attempt each, in the order of the script's replies.
var chatCases = []struct {
	name          string
	reply         string // the script's reply (YAML flow mapping)
	stream, usage bool
	want          wireRow
	problem       string // in usage_problem
}{
	{"stream with include_usage", `{text: "ok", usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000}, reasoning_tokens: 40}`, true, true,
		wireRow{Status: 200, Billed: 1, Input: int64(2000), Output: int64(300), CacheRead: int64(7000), Reasoning: int64(40), Streamed: 1}, ""},
	{"whole completion", `{text: "ok", usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000}, reasoning_tokens: 40}`, false, false,
		wireRow{Status: 200, Billed: 1, Input: int64(2000), Output: int64(300), CacheRead: int64(7000), Reasoning: int64(40)}, ""},
	{"measured zeros stay zeros", `{text: "ok", usage: {input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0}, reasoning_tokens: 0}`, true, true,
		wireRow{Status: 200, Billed: 1, Input: int64(0), Output: int64(0), CacheRead: int64(0), Reasoning: int64(0), Streamed: 1}, ""},
	{"no details (a server without prompt caching figures)", `{text: "ok", usage: {input_tokens: 2000, output_tokens: 300}}`, false, false,
		wireRow{Status: 200, Billed: 1, Output: int64(300)}, "usage.prompt_tokens_details is missing"},
	{"no usage at all", `{text: "ok"}`, false, false,
		wireRow{Status: 200, Billed: 1}, "usage is missing from the response"},
	{"stream without include_usage", `{text: "ok", usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000}}`, true, false,
		wireRow{Status: 200, Billed: 1, Streamed: 1}, "the request did not set stream_options.include_usage"},
	{"a negative cached count", `{text: "ok", usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: -5}}`, true, true,
		wireRow{Status: 200, Billed: 1, Output: int64(300), Streamed: 1,
			Raw: `{"usage.prompt_tokens - usage.prompt_tokens_details.cached_tokens":"-5","usage.prompt_tokens_details.cached_tokens":"-5"}`}, "is negative (-5)"},
	{"a string output count", `{text: "ok", usage: {input_tokens: 2000, output_tokens: "300", cache_read_input_tokens: 0}}`, false, false,
		wireRow{Status: 200, Billed: 1, Input: int64(2000), CacheRead: int64(0), Raw: `{"usage.completion_tokens":"\"300\""}`}, "usage.completion_tokens"},
	{"429", `{status: 429}`, true, true, wireRow{Status: 429, ErrorType: "rate_limit_error"}, ""},
	{"500", `{status: 500}`, true, true, wireRow{Status: 500, ErrorType: "server_error"}, ""},
	{"503 overloaded", `{status: 503, error: {message: "The engine is currently overloaded", type: server_error, param: null, code: null}}`, false, false,
		wireRow{Status: 503, ErrorType: "server_error"}, ""},
	{"529", `{status: 529}`, true, true, wireRow{Status: 529, ErrorType: "server_error"}, ""},
	{"tool calls streamed", `{text: "calling", tools: [{name: read_file, input: {path: /w/a.txt}}, {name: mcp__everything__echo, input: {message: hi}}], usage: {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0}}`, true, true,
		wireRow{Status: 200, Billed: 1, Input: int64(10), Output: int64(5), CacheRead: int64(0), Streamed: 1}, "usage.completion_tokens_details is missing"},
}

// TestChatCompletionsThroughWfbProxyRecordWhatTheWireSaid stops wfb from
// recording a Chat Completions wire as anything but what it carried: each
// request, through wfb proxy in front of wfb mock serve, is one row of the
// results file with protocol openai-chat-completions and usage in wfb's
// one meaning (cached tokens are part of prompt_tokens, so input is their
// difference); what the server left out — usage, prompt_tokens_details, a
// stream's usage that was never asked for — is NULL with the reason, a
// measured 0 is 0, a lie is NULL with the wire's text, an error status
// (429, 500, OpenAI's 503 overload, 529) is a failed request with the
// error's type, and a streamed tool call reaches the client whole. The key
// the client sent is nowhere in the file.
func TestChatCompletionsThroughWfbProxyRecordWhatTheWireSaid(t *testing.T) {
	dir := t.TempDir()
	var script strings.Builder
	script.WriteString("replies:\n")
	for _, c := range chatCases {
		fmt.Fprintf(&script, "  - %s\n", c.reply)
	}
	scriptPath := filepath.Join(dir, "chat.yaml")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := startWfb(t, nil, "mock", "serve", "--script", scriptPath)
	upstream := serve.line(t)
	dbPath := filepath.Join(dir, "wfb.db")
	proxy := startWfb(t, []string{"OPENAI_API_KEY=" + proxySecret}, "proxy", "--upstream", upstream, "--db", dbPath, "--attempts", fmt.Sprint(len(chatCases)))
	var bases, ids []string
	for range chatCases {
		base, id, _ := strings.Cut(proxy.line(t), "\t")
		bases, ids = append(bases, base+"/v1"), append(ids, id)
	}
	turns := make([]chatTurn, len(chatCases))
	for i, c := range chatCases {
		msgs := []any{map[string]any{"role": "user", "content": "review; my key is " + proxySecret}}
		turns[i] = postChat(t, bases[i], chatReq(msgs, c.stream, c.usage))
	}
	if code := proxy.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("wfb proxy exit %d: %s", code, proxy.stderr)
	}
	serve.stop(t, syscall.SIGTERM)

	for i, c := range chatCases {
		t.Run(c.name, func(t *testing.T) {
			rows := wireRows(t, dbPath, ids[i])
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			got := rows[0]
			want := c.want
			want.Protocol = "openai-chat-completions"
			problem := got.Problem
			got.Problem = ""
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the row (-want +got):\n%s", diff)
			}
			if !strings.Contains(problem, c.problem) || (c.problem == "") != (problem == "") {
				t.Errorf("usage_problem %q, want it to say %q", problem, c.problem)
			}
			if turns[i].Status != int(c.want.Status) {
				t.Errorf("the client was answered %d", turns[i].Status)
			}
		})
	}
	tools := turns[len(turns)-1]
	wantCalls := []string{`read_file {"path":"/w/a.txt"}`, `everything_echo {"message":"hi"}`}
	var gotCalls []string
	for _, c := range tools.Calls {
		gotCalls = append(gotCalls, c.Name+" "+c.Arguments)
	}
	if diff := cmp.Diff(wantCalls, gotCalls); diff != "" || tools.Text != "calling" || !tools.Done {
		t.Errorf("the streamed tool calls through the proxy (-want +got):\n%s\ntext %q, [DONE] %v", diff, tools.Text, tools.Done)
	}
	requireNoSecretInFiles(t, dir, proxySecret)
}

// chatAgent is a minimal OpenAI-compatible agent loop: it asks, and
// while the answer calls tools, answers each call with a tool message and
// asks again. It returns the calls it was asked to make and the usage the
// wire reported to it, summed over its turns.
func chatAgent(stream bool) agentRunner {
	return func(t *testing.T, base, ws string) session {
		msgs := []any{
			map[string]any{"role": "system", "content": "You are a coding agent."},
			map[string]any{"role": "user", "content": "Read a.txt, echo it, and say you are done."},
		}
		s := session{Usage: map[string]string{}}
		sums := map[string]int64{}
		for range 6 {
			turn := postChat(t, base+"/v1", chatReq(msgs, stream, stream))
			if turn.Status != 200 {
				t.Fatalf("answered %d", turn.Status)
			}
			for _, k := range []string{"prompt_tokens", "completion_tokens"} {
				if n, ok := turn.Usage[k].(float64); ok {
					sums[k] += int64(n)
				}
			}
			if d, ok := turn.Usage["prompt_tokens_details"].(map[string]any); ok {
				if n, ok := d["cached_tokens"].(float64); ok {
					sums["cached_tokens"] += int64(n)
				}
			}
			if len(turn.Calls) == 0 {
				break
			}
			var calls []any
			for _, c := range turn.Calls {
				s.Tools = append(s.Tools, c.Name+" "+c.Arguments)
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": turn.Text, "tool_calls": calls})
			for _, c := range turn.Calls {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": c.ID, "content": "result of " + c.Name})
			}
		}
		for k, v := range sums {
			s.Usage[k] = fmt.Sprint(v)
		}
		return s
	}
}

const chatReplayScript = `replies:
  - text: "reading"
    tools:
      - name: read_file
        input: {path: "{{ws}}/a.txt"}
    usage: {input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 300}
    reasoning_tokens: 20
  - tools:
      - name: mcp__everything__echo
        input: {message: "what a.txt says"}
    usage: {input_tokens: 1400, output_tokens: 30, cache_read_input_tokens: 1500}
  - text: "done"
    usage: {input_tokens: 1600, output_tokens: 12, cache_read_input_tokens: 2900}
`

// TestARecordedChatCompletionsConversationReplaysTheSame stops record →
// replay from changing a Chat Completions session: a three-turn
// conversation with tool calls (an MCP tool among them, under the name
// the client offered), through wfb proxy in front of wfb mock serve, is
// recorded with wfb mock record and run again against the recording; it
// must be asked for the same calls and be metered for the same usage,
// streamed and not.
func TestARecordedChatCompletionsConversationReplaysTheSame(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			orig, replay, recorded, _ := recordAndReplay(t, chatReplayScript, chatAgent(stream))
			requireSameSession(t, orig, replay, recorded)
			if want := map[string]int64{"input": 4200, "output": 122, "cache_read": 4700}; !cmp.Equal(orig.Metered, want) {
				t.Errorf("metered %v, want %v", orig.Metered, want)
			}
			if !strings.Contains(strings.Join(orig.Tools, "\n"), "everything_echo ") {
				t.Errorf("the MCP tool was not called under the offered name: %q", orig.Tools)
			}
			if data, _ := os.ReadFile(recorded); strings.Contains(string(data), proxySecret) {
				t.Error("the recorded script holds the key")
			}
		})
	}
}
