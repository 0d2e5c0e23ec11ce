package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// recordCases are replies a recording must give back as they were: text
// and tool calls, every kind of usage value verbatim (absent, nonsense,
// float), statuses, stop reasons.
var recordCases = []Reply{
	{Text: "writing it", Tools: []Tool{{Name: "Write", Input: map[string]any{"file_path": "/tmp/x", "content": "a\nb", "n": 3, "f": json.Number("1.5")}}},
		Usage: FullUsage(2000, 300, 7000, 1000)},
	{Tools: []Tool{{Name: "Bash", Input: map[string]any{"command": "ls"}}, {Name: "Read", Input: map[string]any{"file_path": "/a"}}},
		Usage: Usage{"input_tokens": -5, "output_tokens": "1200", "cache_read_input_tokens": true, "cache_creation_input_tokens": json.Number("1.0")}},
	{Text: "no cache fields", Usage: Usage{"input_tokens": 10, "output_tokens": 5}},
	{Text: "cut short", StopReason: "max_tokens", Usage: FullUsage(1, 2, 3, 4)},
	{Text: "", Usage: nil},
	{Status: 529, Error: json.RawMessage(`{"type":"overloaded_error","message":"Overloaded"}`)},
	{Status: 400, Error: json.RawMessage(`{"type":"invalid_request_error","message":"bad","param":null}`)},
	{Text: "created", Status: 201, Usage: FullUsage(1, 1, 0, 0)},
}

// canon is v as JSON with object keys sorted, numbers as written.
func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := decodeVerbatim(b, &generic); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(generic)
	return string(b)
}

// recordOne serves reply through the provider over HTTP at turn 1 of a
// conversation and records the exchange as the meter keeps it.
func recordOne(t *testing.T, reply Reply, api string, stream bool) (Reply, []string) {
	t.Helper()
	p := startProvider(t, &Script{Replies: []Reply{reply}})
	body := map[string]any{"model": "claude-sonnet-4-5", "stream": stream, "max_tokens": 100,
		"messages": []any{
			map[string]any{"role": "user", "content": "go"},
			map[string]any{"role": "assistant", "content": "earlier"},
			map[string]any{"role": "user", "content": "again"},
		}}
	path := "/v1/messages"
	switch api {
	case apiResponses:
		body = respBody(stream, map[string]any{"type": "custom", "name": "apply_patch"})
		body["input"] = append(body["input"].([]any),
			map[string]any{"type": "function_call", "name": "x", "arguments": "{}", "call_id": "c"},
			map[string]any{"type": "function_call_output", "call_id": "c", "output": "done"})
		path = "/v1/responses"
	case apiChat:
		body = chatBody(stream, stream)
		body["messages"] = append(body["messages"].([]any),
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "x", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "c", "content": "done"})
		path = "/v1/chat/completions"
	}
	reqBody, _ := json.Marshal(body)
	resp, err := http.Post(p.URL()+path, "application/json", bytes.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil && reply.CutAfterEvents == 0 {
		t.Fatalf("read the response: %v", err)
	}
	got, notes, err := RecordReply(Recorded{Responses: api == apiResponses, ChatCompletions: api == apiChat, Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Request: reqBody, Response: out})
	if err != nil {
		t.Fatalf("record: %v\nresponse: %s", err, out)
	}
	return got, notes
}

// TestARecordedReplyServesTheSameAnswer stops `wfb mock record` from
// turning a session into a script that answers differently: each reply,
// served by the provider in each protocol and format and recorded from
// the wire, must come back as the same reply, matched to the request's
// model and turn.
func TestARecordedReplyServesTheSameAnswer(t *testing.T) {
	for _, api := range []string{apiMessages, apiResponses, apiChat} {
		for _, stream := range []bool{false, true} {
			for i, reply := range recordCases {
				t.Run(fmt.Sprintf("%s/stream=%v/%d", api, stream, i), func(t *testing.T) {
					want := reply
					turn := 1
					want.Match = &Match{Model: "claude-sonnet-4-5", Turn: &turn}
					switch api {
					case apiResponses:
						want.Match.Model = "gpt-5-codex"
						want.StopReason = "" // the Responses API has none
					case apiChat:
						want.Match.Model = "qwen3-coder-plus"
					}
					if api != apiMessages && (want.Status == 0 || want.Status < 300) {
						want.Usage = respRecorded(reply.Usage)
					}
					got, _ := recordOne(t, reply, api, stream)
					if canon(t, want) != canon(t, got) {
						t.Errorf("recorded\n%s\nwant\n%s", canon(t, got), canon(t, want))
					}
				})
			}
		}
	}
}

// respRecorded is what a recording of an OpenAI API gives back for usage
// u: the same figures, but cache writes folded into input (the APIs have
// no field for them).
func respRecorded(u Usage) Usage {
	if u == nil {
		return nil
	}
	out := Usage{}
	for k, v := range u {
		out[k] = v
	}
	in, iok := respWhole(u["input_tokens"])
	cc, cok := respWhole(u["cache_creation_input_tokens"])
	delete(out, "cache_creation_input_tokens")
	if iok && cok {
		out["input_tokens"] = in + cc
	}
	if _, ok := u["cache_creation_input_tokens"]; ok && !cok {
		out = Usage{"input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"], "cache_read_input_tokens": u["cache_read_input_tokens"]}
	}
	return out
}

// TestARecordedCustomToolCallAndReasoningComeBack stops a recording of a
// Codex turn from losing its free-form apply_patch call or its reasoning
// token count.
func TestARecordedCustomToolCallAndReasoningComeBack(t *testing.T) {
	reply := Reply{Tools: []Tool{{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** End Patch"}}},
		Usage: FullUsage(100, 20, 30, 0), ReasoningTokens: 7}
	for _, stream := range []bool{false, true} {
		got, _ := recordOne(t, reply, apiResponses, stream)
		if canon(t, got.Tools) != canon(t, reply.Tools) || canon(t, got.ReasoningTokens) != "7" {
			t.Errorf("stream %v: tools %s reasoning %v, want %s and 7", stream, canon(t, got.Tools), got.ReasoningTokens, canon(t, reply.Tools))
		}
	}
}

// TestARecordedCutStreamIsServedCut stops a stream that broke off from
// being replayed as a whole answer.
func TestARecordedCutStreamIsServedCut(t *testing.T) {
	for _, api := range []string{apiMessages, apiResponses, apiChat} {
		got, notes := recordOne(t, Reply{Text: "dropped", CutAfterEvents: 2, Usage: FullUsage(1, 1, 1, 1)}, api, true)
		if got.CutAfterEvents != 2 || !strings.Contains(strings.Join(notes, ";"), "broke off") {
			t.Errorf("%s: cut after %d, notes %q; want 2 and a note", api, got.CutAfterEvents, notes)
		}
	}
}

// TestAMarshalledScriptParsesBackToItself stops a recorded script file
// that the strict parser refuses, or that serves other values than it
// holds (1.0 as 1, "1200" as 1200, true as "true").
func TestAMarshalledScriptParsesBackToItself(t *testing.T) {
	turn := 2
	s := &Script{Replies: append([]Reply{{Text: "matched \"quoted\" <b> & ünïcode\ttab", Match: &Match{Model: "m", Turn: &turn}}}, recordCases...)}
	file, err := s.Marshal([]string{"recorded from attempt x", "two\nlines"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseScript("rec.yaml", file)
	if err != nil {
		t.Fatalf("parse:\n%v\nfile:\n%s", err, file)
	}
	if canon(t, back) != canon(t, s) {
		t.Errorf("parsed back\n%s\nwant\n%s", canon(t, back), canon(t, s))
	}
}

// TestRepliesWithAMatchAnswerTheRequestsThatFitThem stops a replay that
// serves replies by arrival order alone: an interleaved side request (a
// request at another turn or for another model) must not take the reply
// recorded for the main conversation.
func TestRepliesWithAMatchAnswerTheRequestsThatFitThem(t *testing.T) {
	zero, one := 0, 1
	p := startProvider(t, &Script{
		Replies: []Reply{
			{Text: "first", Match: &Match{Turn: &zero, Model: "big"}},
			{Text: "second", Match: &Match{Turn: &one}},
			{Text: "side", Match: &Match{Model: "small"}},
		},
		Default: &Reply{Text: "fallback"},
	})
	ask := func(model string, turns int) string {
		msgs := []any{map[string]any{"role": "user", "content": "q"}}
		for range turns {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "a"}, map[string]any{"role": "user", "content": "q"})
		}
		_, out := post(t, p.URL()+"/v1/messages", map[string]any{"model": model, "messages": msgs}, nil)
		var m struct{ Content []struct{ Text string } }
		json.Unmarshal(out, &m)
		if len(m.Content) == 0 {
			t.Fatalf("no content: %s", out)
		}
		return m.Content[0].Text
	}
	got := []string{ask("big", 1), ask("small", 0), ask("big", 0), ask("big", 0), ask("big", 1)}
	want := []string{"second", "side", "first", "fallback", "fallback"}
	if canon(t, got) != canon(t, want) {
		t.Errorf("served %v, want %v", got, want)
	}
}

// TestARecordedChatCompletionKeepsReasoningAndLeavesAnUnaskedUsageOut
// stops a recording of a Chat Completions turn from losing its reasoning
// token count, or from inventing usage for a stream that did not ask for
// it (no stream_options.include_usage: the wire had none, so the replay
// serves none); a thinking model's reasoning_content is named as not
// served.
func TestARecordedChatCompletionKeepsReasoningAndLeavesAnUnaskedUsageOut(t *testing.T) {
	reply := Reply{Text: "thought", Usage: FullUsage(100, 20, 30, 0), ReasoningTokens: 7}
	for _, stream := range []bool{false, true} {
		got, _ := recordOne(t, reply, apiChat, stream)
		if canon(t, got.ReasoningTokens) != "7" || canon(t, got.Usage) != `{"cache_read_input_tokens":30,"input_tokens":100,"output_tokens":20}` {
			t.Errorf("stream %v: usage %s reasoning %v", stream, canon(t, got.Usage), got.ReasoningTokens)
		}
	}

	p := startProvider(t, &Script{Default: &reply})
	raw, _ := json.Marshal(chatBody(true, false))
	resp, err := http.Post(p.URL()+"/v1/chat/completions", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got, _, err := RecordReply(Recorded{ChatCompletions: true, Status: 200, ContentType: "text/event-stream", Request: raw, Response: out})
	if err != nil || got.Usage != nil || got.ReasoningTokens != nil || got.Text != "thought" || got.CutAfterEvents != 0 {
		t.Errorf("without include_usage: %+v, %v; want the text, no usage, not cut", got, err)
	}

	thinking := `{"id":"x","object":"chat.completion","model":"qwen3","choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning_content":"hmm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	got, notes, err := RecordReply(Recorded{ChatCompletions: true, Status: 200, ContentType: "application/json", Request: raw, Response: []byte(thinking)})
	if err != nil || got.Text != "ok" || canon(t, got.Usage) != `{"input_tokens":5,"output_tokens":2}` || !strings.Contains(strings.Join(notes, ";"), "reasoning_content is not served") {
		t.Errorf("thinking reply: %+v, notes %q, %v", got, notes, err)
	}
}
