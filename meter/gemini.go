package meter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb"
)

// gemini is the Gemini API's generateContent (JSON) and
// streamGenerateContent (SSE with ?alt=sse, or a JSON array without it).
// Usage is usageMetadata: promptTokenCount INCLUDES
// cachedContentTokenCount; toolUsePromptTokenCount is more input;
// candidatesTokenCount and thoughtsTokenCount are both output. So wfb's
// input is prompt + tool-use prompt − cached, its cache read the cached
// tokens, its output candidates + thoughts, and its reasoning the
// thoughts. It reports no cache writes. Each stream chunk may carry
// usageMetadata; the last one is final.
//
// The API's JSON is proto3's, which omits a count that is zero: an absent
// candidatesTokenCount, cachedContentTokenCount, thoughtsTokenCount or
// toolUsePromptTokenCount is the protocol's way of writing 0, and is read
// as 0 (its Native name says so). promptTokenCount, which no model call
// lacks, must be present.
type gemini struct{}

func (gemini) name() string { return ProtocolGemini }

func (gemini) decoder([]byte) decoder { return &geminiDecoder{} }

func (gemini) errorBody(status int, kind, msg string) []byte {
	st := "UNAVAILABLE"
	switch status {
	case 404:
		st = "NOT_FOUND"
	case 413:
		st = "INVALID_ARGUMENT"
	}
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{"code": status, "status": st, "message": "wfb meter: " + kind + ": " + msg},
	})
	return b
}

type geminiChunk struct {
	ModelVersion  string                     `json:"modelVersion"`
	UsageMetadata map[string]json.RawMessage `json:"usageMetadata"`
	Candidates    []struct {
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	Error *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

type geminiDecoder struct {
	usage     map[string]json.RawMessage
	model     string
	finished  bool // a candidate with a finishReason was seen
	errType   string
	detail    string
	malformed string
}

func (d *geminiDecoder) object(data []byte) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var chunks []json.RawMessage
		if err := json.Unmarshal(t, &chunks); err != nil {
			d.malformed = fmt.Sprintf("the response is not JSON: %v", err)
			return
		}
		for _, c := range chunks {
			d.chunk(c)
		}
		return
	}
	d.chunk(data)
}

func (d *geminiDecoder) wants(string) bool { return true }

func (d *geminiDecoder) event(_ string, data []byte) {
	// Chunks carry no event name: skip decoding those that can say nothing
	// new (no usage, no finish, no error, and the model already known).
	if d.model != "" && !bytes.Contains(data, []byte(`"usageMetadata"`)) &&
		!bytes.Contains(data, []byte(`"finishReason"`)) && !bytes.Contains(data, []byte(`"error"`)) {
		return
	}
	d.chunk(data)
}

func (d *geminiDecoder) chunk(data []byte) {
	var c geminiChunk
	if err := json.Unmarshal(data, &c); err != nil {
		d.malformed = fmt.Sprintf("a response chunk is not JSON: %v", err)
		return
	}
	if c.Error != nil {
		d.errType, d.detail = c.Error.Status, wfb.Clip(c.Error.Message, 300)
		if d.errType == "" {
			d.errType = "error"
		}
		return
	}
	if c.ModelVersion != "" {
		d.model = c.ModelVersion
	}
	if c.UsageMetadata != nil {
		d.usage = c.UsageMetadata
	}
	for _, cand := range c.Candidates {
		if cand.FinishReason != "" {
			d.finished = true
		}
	}
}

func (d *geminiDecoder) result(status int, complete bool) outcome {
	o := outcome{model: d.model, errorType: d.errType, detail: d.detail}
	o.billed = is2xx(status) && d.errType == "" && (complete || d.finished)
	u := Usage{Semantics: wfb.SemanticsGemini, CacheCreation: notReported("Gemini")}
	switch {
	case d.malformed != "" && o.billed:
		u.setUnread(d.malformed)
	case d.usage == nil && o.billed:
		u.setUnread("usageMetadata is missing from the response")
	case d.usage != nil:
		readGeminiUsage(&u, d.usage)
	}
	o.usage = u
	return o
}

func readGeminiUsage(u *Usage, m map[string]json.RawMessage) {
	const p = "usageMetadata."
	prompt := readCount(m, p, "promptTokenCount")
	toolPrompt := protoCount(m, "toolUsePromptTokenCount")
	cached := protoCount(m, "cachedContentTokenCount")
	candidates := protoCount(m, "candidatesTokenCount")
	thoughts := protoCount(m, "thoughtsTokenCount")
	u.CacheRead = cached
	u.Input = subtract(add(prompt, toolPrompt), cached, FieldInput)
	u.Output = add(candidates, thoughts)
	u.Reasoning = thoughts
}

// protoCount reads a count proto3 JSON omits when it is zero.
func protoCount(m map[string]json.RawMessage, name string) Count {
	if _, ok := m[name]; !ok {
		return Count{State: Present, Native: "usageMetadata." + name + " (absent: proto3's 0)"}
	}
	return readCount(m, "usageMetadata.", name)
}

// add sums two figures that together make one of wfb's.
func add(a, b Count) Count {
	c := Count{Native: a.Native + " + " + b.Native}
	switch {
	case a.State != Present:
		c.State, c.Raw, c.Why = a.State, a.Raw, a.Why
	case b.State != Present:
		c.State, c.Raw, c.Why = b.State, b.Raw, b.Why
	case a.Value > (1<<63-1)-b.Value:
		c.State, c.Raw = Nonsense, fmt.Sprintf("%d + %d", a.Value, b.Value)
		c.Why = c.Native + " is out of range"
	default:
		c.State, c.Value = Present, a.Value+b.Value
	}
	return c
}
