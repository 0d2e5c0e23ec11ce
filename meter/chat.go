package meter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
)

// chatCompletions is the OpenAI Chat Completions API (POST
// .../chat/completions, under whatever base URL the client was given),
// which most OpenAI-compatible servers (vLLM, Ollama, llama.cpp, hosted
// gateways) speak: a chat.completion object, or SSE of data: lines only,
// each a chat.completion.chunk, ending with data: [DONE]. Its usage has the
// Responses API's arithmetic under other names: prompt_tokens INCLUDE
// prompt_tokens_details.cached_tokens, so wfb's input is their difference
// and its cache read the cached tokens; completion_tokens include
// completion_tokens_details.reasoning_tokens. It reports no cache writes.
//
// A stream carries usage only when the request sets
// stream_options.include_usage: then in a last chunk whose choices are
// empty (the chunks before it say "usage": null); without it no chunk
// has any, and the request's figures are not measured — the meter
// forwards the request as the agent wrote it, never adding the option.
// The API documents no default for an omitted figure (usage, the details
// objects and their fields are all optional, and servers other than
// OpenAI's often leave the details out), so an omitted figure is absent,
// never 0: without prompt_tokens_details.cached_tokens neither the cache
// read nor the uncached input is known. A mid-stream failure is a chunk
// {"error": {...}}; vLLM's error body is {"object": "error", ...}.
//
// A 2xx response is billed when it reached its end: the whole body, or a
// stream's [DONE].
type chatCompletions struct{}

func (chatCompletions) name() string { return ProtocolOpenAIChat }

// decoder keeps the request to say, should a stream carry no usage,
// whether it asked for some: read then, off the agent's path.
func (chatCompletions) decoder(request []byte) decoder { return &chatDecoder{request: request} }

// errorBody is OpenAI's error shape, as for the Responses API.
func (chatCompletions) errorBody(status int, kind, msg string) []byte {
	return openAI{}.errorBody(status, kind, msg)
}

// chatError is an error object as OpenAI-compatible servers send it: code
// may be a string, a number or null.
type chatError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// chatBody is a chat.completion, a chunk of one, or an error body.
type chatBody struct {
	Object      string          `json:"object"`
	Model       string          `json:"model"`
	Usage       json.RawMessage `json:"usage"`
	Choices     json.RawMessage `json:"choices"`
	ServiceTier json.RawMessage `json:"service_tier"`
	// Error is {"error": {...}} (OpenAI's), or {"error": "text"}.
	Error     json.RawMessage `json:"error"`
	chatError                 // vLLM's {"object": "error", "message": ..., "type": ..., "code": 400}
}

// wrapped is the body's {"error": ...}, or nil when it has none.
func (b *chatBody) wrapped() *chatError {
	if !isSet(b.Error) {
		return nil
	}
	var e chatError
	if json.Unmarshal(b.Error, &e) != nil {
		var msg string
		if json.Unmarshal(b.Error, &msg) != nil {
			msg = string(b.Error)
		}
		e = chatError{Message: msg}
	}
	return &e
}

type chatDecoder struct {
	request   []byte          // the request body, read only by missing
	streamed  bool            // events came, not a whole body
	usage     json.RawMessage // the last usage that was not null
	tier      json.RawMessage
	model     string
	done      bool // data: [DONE]
	errType   string
	detail    string
	malformed string
}

func (d *chatDecoder) object(data []byte) {
	var b chatBody
	if err := json.Unmarshal(data, &b); err != nil {
		d.malformed = fmt.Sprintf("the response is not JSON: %v", err)
		return
	}
	switch e := b.wrapped(); {
	case e != nil:
		d.setError(e)
	case b.Object == "error":
		d.setError(&b.chatError)
	case b.Object == "chat.completion" || (b.Object == "" && b.Choices != nil):
		d.take(&b)
	default:
		d.malformed = fmt.Sprintf("the response is not a chat.completion (object %q)", b.Object)
	}
}

func (d *chatDecoder) wants(string) bool { return true }

func (d *chatDecoder) event(name string, data []byte) {
	d.streamed = true
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		d.done = true
		return
	}
	// Most chunks are content deltas: skip decoding those that can say
	// nothing new (no usage, error or first service tier, the model
	// already known). A key is a quoted name followed by a colon; inside a
	// string its quotes would be escaped.
	if d.model != "" && !setField(data, "usage") && !bytes.Contains(data, []byte(`"error"`)) &&
		(d.tier != nil || !setField(data, "service_tier")) && name != "error" {
		return
	}
	var b chatBody
	if err := json.Unmarshal(data, &b); err != nil {
		d.malformed = fmt.Sprintf("stream chunk is not JSON: %v", err)
		return
	}
	switch e := b.wrapped(); {
	case e != nil:
		d.setError(e)
	case b.Object == "error" || name == "error":
		d.setError(&b.chatError)
	default:
		d.take(&b)
	}
}

// take keeps what a completion or chunk says of the model, the usage and
// the service tier.
func (d *chatDecoder) take(b *chatBody) {
	if b.Model != "" {
		d.model = b.Model
	}
	if isSet(b.Usage) {
		d.usage = b.Usage
	}
	if d.tier == nil && isSet(b.ServiceTier) {
		d.tier = b.ServiceTier
	}
}

func (d *chatDecoder) setError(e *chatError) {
	d.errType, d.detail = e.Type, wfb.Clip(e.Message, 300)
	if d.errType == "" {
		var code string
		if json.Unmarshal(e.Code, &code) != nil && isSet(e.Code) {
			code = strings.TrimSpace(string(e.Code))
		}
		d.errType = code
	}
	if d.errType == "" {
		d.errType = "error"
	}
}

func (d *chatDecoder) result(status int, complete bool) outcome {
	o := outcome{model: d.model, errorType: d.errType, detail: d.detail}
	o.billed = is2xx(status) && d.errType == "" && (complete || d.done)
	u := Usage{Semantics: wfb.SemanticsOpenAI, CacheCreation: notReported("OpenAI Chat Completions")}
	switch {
	case d.malformed != "" && o.billed:
		u.setUnread(d.malformed)
	case d.usage == nil && o.billed:
		u.setUnread(d.missing())
	case d.usage != nil:
		usage, c, ok := readObject(map[string]json.RawMessage{"usage": d.usage}, "", "usage")
		if !ok {
			for _, f := range u.Fields() {
				if f.Count.State != NotReported {
					*f.Count = c
				}
			}
			break
		}
		readOpenAIUsage(&u, usage, chatUsageNames)
	}
	if o.billed || d.usage != nil {
		o.surcharges = openAISurcharges(d.tier)
	}
	o.usage = u
	return o
}

// missing says why a billed response has no usage.
func (d *chatDecoder) missing() string {
	if !d.streamed {
		return "usage is missing from the response"
	}
	var req struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	json.Unmarshal(d.request, &req) //nolint:errcheck // a body that says nothing asks for nothing
	if req.StreamOptions.IncludeUsage {
		return "usage is missing from the stream, though the request set stream_options.include_usage"
	}
	return "usage is missing from the stream: the request did not set stream_options.include_usage, without which a Chat Completions stream carries none"
}

// isSet says whether a raw JSON value is there and not null.
func isSet(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && !bytes.Equal(s, []byte("null"))
}

// setField says whether data may hold the key name with a value other
// than null: a false answer is sure, a true one may not be.
func setField(data []byte, name string) bool {
	key := []byte(`"` + name + `"`)
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return false
		}
		data = bytes.TrimLeft(data[i+len(key):], " \t\r\n")
		if len(data) == 0 || data[0] != ':' {
			continue
		}
		if !bytes.HasPrefix(bytes.TrimLeft(data[1:], " \t\r\n"), []byte("null")) {
			return true
		}
	}
}
