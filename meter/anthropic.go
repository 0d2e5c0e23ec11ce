package meter

import (
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb"
)

// anthropic is the Anthropic Messages API (POST .../v1/messages), JSON or
// SSE. Usage is native wfb semantics: input_tokens is uncached input, and
// cache_read_input_tokens and cache_creation_input_tokens add to it. A
// stream reports usage in message_start and again, cumulatively, in
// message_delta: a field message_delta carries supersedes message_start's.
type anthropic struct{}

func (anthropic) name() string { return ProtocolAnthropic }

func (anthropic) decoder([]byte) decoder { return &anthropicDecoder{} }

func (anthropic) errorBody(status int, kind, msg string) []byte {
	typ := "api_error"
	switch status {
	case 404:
		typ = "not_found_error"
	case 413:
		typ = "request_too_large"
	}
	b, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": "wfb meter: " + kind + ": " + msg},
	})
	return b
}

// anthropicDecoder collects one Messages response.
type anthropicDecoder struct {
	usage     map[string]json.RawMessage // merged; nil until some usage was seen
	model     string
	final     bool   // message_delta or message_stop seen, or a whole message
	errType   string // from an error body or an error event
	detail    string
	malformed string // why a 2xx body could not be read
}

type anthropicError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropicBody is a message, an error body, or any stream event.
type anthropicBody struct {
	Type    string                     `json:"type"`
	Model   string                     `json:"model"`
	Usage   map[string]json.RawMessage `json:"usage"`
	Error   *anthropicError            `json:"error"`
	Message *struct {
		Model string                     `json:"model"`
		Usage map[string]json.RawMessage `json:"usage"`
	} `json:"message"`
}

func (d *anthropicDecoder) object(data []byte) {
	var b anthropicBody
	if err := json.Unmarshal(data, &b); err != nil {
		d.malformed = fmt.Sprintf("the response is not JSON: %v", err)
		return
	}
	switch b.Type {
	case "message":
		d.model, d.final = b.Model, true
		d.merge(b.Usage)
	case "error":
		d.setError(b.Error)
	default:
		d.malformed = fmt.Sprintf("the response is not a message (type %q)", b.Type)
	}
}

// anthropicUsageEvents are the events that say anything about usage, the
// model or the outcome; the many content deltas are not decoded.
var anthropicUsageEvents = map[string]bool{"": true, "message_start": true, "message_delta": true, "message_stop": true, "error": true}

func (d *anthropicDecoder) wants(name string) bool { return anthropicUsageEvents[name] }

func (d *anthropicDecoder) event(name string, data []byte) {
	var b anthropicBody
	if err := json.Unmarshal(data, &b); err != nil {
		d.malformed = fmt.Sprintf("stream event %q is not JSON: %v", name, err)
		return
	}
	if name == "" {
		name = b.Type
	}
	switch name {
	case "message_start":
		if b.Message != nil {
			d.model = b.Message.Model
			d.merge(b.Message.Usage)
		}
	case "message_delta":
		d.final = true
		d.merge(b.Usage)
	case "message_stop":
		d.final = true
	case "error":
		d.setError(b.Error)
	}
}

func (d *anthropicDecoder) setError(e *anthropicError) {
	d.errType = "error"
	if e != nil {
		d.errType, d.detail = e.Type, wfb.Clip(e.Message, 300)
	}
}

// merge lays later usage over earlier: message_delta's figures are
// cumulative.
func (d *anthropicDecoder) merge(u map[string]json.RawMessage) {
	if u == nil {
		return
	}
	if d.usage == nil {
		d.usage = map[string]json.RawMessage{}
	}
	for k, v := range u {
		d.usage[k] = v
	}
}

func (d *anthropicDecoder) result(status int, complete bool) outcome {
	o := outcome{model: d.model, errorType: d.errType, detail: d.detail}
	o.billed = is2xx(status) && d.errType == "" && (d.final || complete)
	o.usage = Usage{Semantics: wfb.SemanticsAnthropic, Reasoning: notReported("Anthropic Messages")}
	switch {
	case d.malformed != "" && o.billed:
		o.usage.setUnread(d.malformed)
	case d.usage == nil && o.billed:
		o.usage.setUnread("usage is missing from the response")
	case d.usage != nil:
		o.usage.Input = readCount(d.usage, "usage.", "input_tokens")
		o.usage.Output = readCount(d.usage, "usage.", "output_tokens")
		o.usage.CacheRead = readCount(d.usage, "usage.", "cache_read_input_tokens")
		o.usage.CacheCreation = readCount(d.usage, "usage.", "cache_creation_input_tokens")
		o.surcharges = anthropicSurcharges(d.usage)
	}
	return o
}

// setUnread marks every figure the protocol reports as absent, for why.
func (u *Usage) setUnread(why string) {
	for _, f := range u.Fields() {
		if f.Count.State != NotReported {
			*f.Count = Count{Native: "usage", Why: why}
		}
	}
}
