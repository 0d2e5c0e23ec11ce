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

const gemPath = "/v1beta/models/gemini-2.5-pro"

func gemBody(prompt string) map[string]any {
	return map[string]any{
		"contents":          []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": prompt}}}},
		"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "you are a coding agent"}}},
	}
}

// gemSSE parses a Gemini stream the way its SDK does: data: lines only, no
// event: line, each data a JSON object. It returns the chunks re-encoded,
// and the error that ended the stream (nil for a clean end).
func gemSSE(r io.Reader) ([]string, error) {
	var chunks []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(line, "data: ")))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				return chunks, fmt.Errorf("data is not JSON: %v", err)
			}
			b, _ := json.Marshal(m)
			chunks = append(chunks, string(b))
		default:
			return chunks, fmt.Errorf("unexpected line %q", line)
		}
	}
	return chunks, sc.Err()
}

// gemStream posts a streaming request and reads it whole, or up to the
// error that cut it.
func gemStream(t *testing.T, p *Provider, body any) (*http.Response, []string, error) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(p.URL()+gemPath+":streamGenerateContent?alt=sse", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	chunks, err := gemSSE(resp.Body)
	return resp, chunks, err
}

// TestGeminiStreamsTextThenFunctionCallsWithFinishLast stops a Gemini
// stream Gemini CLI cannot finish a turn from: text not split across
// chunks (a client that keeps only one would pass), a function call
// without its args, a finishReason or usage before the last chunk, usage
// in Anthropic semantics (Gemini's prompt count includes cached tokens),
// or the model not the one requested.
func TestGeminiStreamsTextThenFunctionCallsWithFinishLast(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{
		Text:            "writing",
		Tools:           []Tool{{Name: "write_file", Input: map[string]any{"file_path": "out.json", "content": "{}"}}},
		Usage:           FullUsage(100, 20, 300, 40),
		ReasoningTokens: 7,
	}})
	resp, chunks, err := gemStream(t, p, gemBody("write it"))
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := []string{
		`{"candidates":[{"content":{"parts":[{"text":"wri"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-pro","responseId":"mock_000001"}`,
		`{"candidates":[{"content":{"parts":[{"text":"ting"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-pro","responseId":"mock_000001"}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"args":{"content":"{}","file_path":"out.json"},"name":"write_file"}}],"role":"model"},"finishReason":"STOP","index":0}],` +
			`"modelVersion":"gemini-2.5-pro","responseId":"mock_000001",` +
			`"usageMetadata":{"cachedContentTokenCount":300,"candidatesTokenCount":20,"promptTokenCount":440,"thoughtsTokenCount":7,"totalTokenCount":467}}`,
	}
	if diff := cmp.Diff(want, chunks); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if n := len(p.GeminiRequests()); n != 1 || len(p.MessageRequests())+len(p.ResponsesRequests()) != 0 {
		t.Errorf("recorded %d gemini requests, %d others; want 1 and 0", n, len(p.MessageRequests())+len(p.ResponsesRequests()))
	}
}

// TestGeminiWholeResponseAndJSONArrayStream stops the two other shapes of
// the API from drifting from the SSE one: generateContent answers one
// response with the text joined back into one part, and
// streamGenerateContent without alt=sse answers a JSON array of the chunks.
func TestGeminiWholeResponseAndJSONArrayStream(t *testing.T) {
	p := startProvider(t, &Script{Default: &Reply{Text: "hello", StopReason: "max_tokens", Usage: Usage{"input_tokens": 9, "output_tokens": 1}}})
	_, body := post(t, p.URL()+gemPath+":generateContent", gemBody("hi"), nil)
	want := `{"candidates":[{"content":{"parts":[{"text":"hello"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}],` +
		`"modelVersion":"gemini-2.5-pro","responseId":"mock_000001","usageMetadata":{"candidatesTokenCount":1,"promptTokenCount":9,"totalTokenCount":10}}`
	if got := respJSON(t, decode(t, body)); got != want {
		t.Errorf("generateContent\n got %s\nwant %s", got, want)
	}
	resp, body := post(t, p.URL()+gemPath+":streamGenerateContent", gemBody("hi"), nil)
	var arr []map[string]any
	if err := json.Unmarshal(body, &arr); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("stream without alt=sse: %v, content type %q: %s", err, resp.Header.Get("Content-Type"), body)
	}
	if len(arr) != 2 || arr[1]["usageMetadata"] == nil || arr[0]["usageMetadata"] != nil {
		t.Errorf("array stream: want 2 chunks, usage on the last only: %s", body)
	}
}

// TestGeminiUsageKeepsOmittedFieldsOmitted stops the mock from inventing
// usage: a field the script leaves out is absent from usageMetadata, and
// values that are not whole numbers are passed through, not summed.
func TestGeminiUsageKeepsOmittedFieldsOmitted(t *testing.T) {
	cases := []struct {
		name  string
		reply Reply
		want  string // usageMetadata; "" when absent
	}{
		{"no usage at all", Reply{Text: "hi"}, ""},
		{"output only", Reply{Text: "hi", Usage: Usage{"output_tokens": 5}}, `{"candidatesTokenCount":5}`},
		{"cache write adds to the prompt", Reply{Text: "hi", Usage: Usage{"input_tokens": 9, "output_tokens": 1, "cache_creation_input_tokens": 4}}, `{"candidatesTokenCount":1,"promptTokenCount":13,"totalTokenCount":14}`},
		{"nil value is absent", Reply{Text: "hi", Usage: Usage{"input_tokens": 9, "cache_read_input_tokens": nil}}, `{"promptTokenCount":9}`},
		{"string is verbatim", Reply{Text: "hi", Usage: Usage{"input_tokens": "1200", "output_tokens": 1, "cache_read_input_tokens": 3}}, `{"cachedContentTokenCount":3,"candidatesTokenCount":1,"promptTokenCount":"1200"}`},
		{"thoughts as written", Reply{Text: "hi", Usage: Usage{"input_tokens": 2, "output_tokens": 1}, ReasoningTokens: json.Number("1.5")}, `{"candidatesTokenCount":1,"promptTokenCount":2,"thoughtsTokenCount":1.5}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.reply
			p := startProvider(t, &Script{Default: &r})
			_, body := post(t, p.URL()+gemPath+":generateContent", gemBody("hi"), nil)
			u, present := decode(t, body)["usageMetadata"]
			got := ""
			if present {
				got = respJSON(t, u)
			}
			if got != c.want {
				t.Errorf("usageMetadata\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestGeminiScriptedFailureIsAGoogleErrorBody stops a scripted failure
// from reaching Gemini CLI in a shape it does not read as an API error,
// streaming or not.
func TestGeminiScriptedFailureIsAGoogleErrorBody(t *testing.T) {
	cases := []struct {
		reply Reply
		code  int
		want  string
	}{
		{Reply{Status: 429}, 429, `{"error":{"code":429,"message":"Too Many Requests","status":"RESOURCE_EXHAUSTED"}}`},
		{Reply{Status: 529}, 529, `{"error":{"code":529,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`},
		{Reply{Status: 400}, 400, `{"error":{"code":400,"message":"Bad Request","status":"INVALID_ARGUMENT"}}`},
		{Reply{Status: 500, Error: json.RawMessage(`{"code":500,"message":"boom"}`)}, 500, `{"error":{"code":500,"message":"boom"}}`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			r := c.reply
			p := startProvider(t, &Script{Default: &r})
			for _, method := range []string{":generateContent", ":streamGenerateContent?alt=sse"} {
				resp, body := post(t, p.URL()+gemPath+method, gemBody("hi"), nil)
				if resp.StatusCode != c.code || string(body) != c.want {
					t.Errorf("%s: %d %s, want %d %s", method, resp.StatusCode, body, c.code, c.want)
				}
			}
		})
	}
}

// TestGeminiCutStreamNeverFinishes stops a scripted broken stream from
// looking like a finished turn: cut or cut cleanly, no chunk carries a
// finishReason or usage. A cut drops the connection (the client sees an
// error); a clean cut ends the response normally, which is the case Gemini
// CLI retries silently.
func TestGeminiCutStreamNeverFinishes(t *testing.T) {
	for _, clean := range []bool{false, true} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			p := startProvider(t, &Script{Default: &Reply{Text: "dropped", Usage: FullUsage(1, 1, 0, 0), CutAfterEvents: 99, CutCleanly: clean}})
			_, chunks, err := gemStream(t, p, gemBody("hi"))
			if clean != (err == nil) {
				t.Errorf("read error %v; want one only for a dropped connection", err)
			}
			if len(chunks) != 1 {
				t.Fatalf("chunks %v, want the 1 before the last", chunks)
			}
			if strings.Contains(chunks[0], "finishReason") || strings.Contains(chunks[0], "usageMetadata") {
				t.Errorf("a cut stream finished: %s", chunks[0])
			}
		})
	}
}

// TestThreeAPIsShareOneReplySequence stops one script from meaning
// different things to different agents: the n-th model request of any API
// gets the n-th reply, and a review placeholder takes its value from a
// Gemini request's contents.
func TestThreeAPIsShareOneReplySequence(t *testing.T) {
	p := startProvider(t, &Script{
		Replies: []Reply{{Text: "first"}, {Text: "second"}},
		Default: &Reply{Text: "later", Tools: []Tool{{Name: "write_file", Input: map[string]any{"file_path": ReviewOutputPlaceholder}}}},
	})
	msgBody := streamBody("claude-mock")
	msgBody["stream"] = false
	_, b1 := post(t, p.URL()+"/v1/messages", msgBody, nil)
	_, b2 := post(t, p.URL()+gemPath+":generateContent", gemBody("hi"), nil)
	_, b3 := post(t, p.URL()+gemPath+":generateContent", gemBody("Write your review as JSON to /tmp/a/review.json (schema)"), nil)
	if got := decode(t, b1)["content"].([]any)[0].(map[string]any)["text"]; got != "first" {
		t.Errorf("messages request did not get reply 1: %s", b1)
	}
	if !strings.Contains(string(b2), `"text":"second"`) {
		t.Errorf("gemini request 1 did not get reply 2: %s", b2)
	}
	if !strings.Contains(string(b3), `"text":"later"`) || !strings.Contains(string(b3), `"args":{"file_path":"/tmp/a/review.json"}`) {
		t.Errorf("gemini request 2 did not get the default with the artifact path: %s", b3)
	}
}
