package meter

import (
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb"
)

// openAI is the OpenAI Responses API (POST .../responses), JSON or SSE.
// Its input_tokens INCLUDE input_tokens_details.cached_tokens, so wfb's
// input is their difference and its cache read the cached tokens;
// output_tokens include output_tokens_details.reasoning_tokens. It reports
// no cache writes. A stream reports usage once, in response.completed (or
// response.incomplete, or response.failed).
//
// A completed or incomplete response is billed; a failed one is billed
// when it carries usage (the provider's statement that tokens were spent),
// and otherwise counts as a failed request.
type openAI struct{}

func (openAI) name() string { return ProtocolOpenAI }

func (openAI) decoder([]byte) decoder { return &openAIDecoder{} }

func (openAI) errorBody(status int, kind, msg string) []byte {
	typ := "server_error"
	if status < 500 {
		typ = "invalid_request_error"
	}
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{"type": typ, "code": kind, "param": nil, "message": "wfb meter: " + kind + ": " + msg},
	})
	return b
}

type openAIError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// openAIResponse is a response object, as a JSON body or inside a stream
// event.
type openAIResponse struct {
	Object string                     `json:"object"`
	Status string                     `json:"status"`
	Model  string                     `json:"model"`
	Usage  map[string]json.RawMessage `json:"usage"`
	Error  *openAIError               `json:"error"`
	// ServiceTier is the tier that served the response ("default", or
	// "flex", "priority", ... at other prices).
	ServiceTier json.RawMessage `json:"service_tier"`
}

type openAIDecoder struct {
	resp      *openAIResponse // the final response, once seen
	model     string
	errType   string
	detail    string
	malformed string
}

func (d *openAIDecoder) object(data []byte) {
	// An error body is {"error": {...}}, with no object.
	var b openAIResponse
	if err := json.Unmarshal(data, &b); err != nil {
		d.malformed = fmt.Sprintf("the response is not JSON: %v", err)
		return
	}
	if b.Object != "response" {
		if b.Error != nil {
			d.setError(b.Error)
			return
		}
		d.malformed = fmt.Sprintf("the response is not a response object (object %q)", b.Object)
		return
	}
	d.final(&b)
}

// openAIUsageEvents are the events that say anything about usage, the
// model or the outcome; output deltas are not decoded.
var openAIUsageEvents = map[string]bool{"": true, "response.created": true, "response.in_progress": true,
	"response.completed": true, "response.incomplete": true, "response.failed": true, "error": true}

func (d *openAIDecoder) wants(name string) bool { return openAIUsageEvents[name] }

func (d *openAIDecoder) event(name string, data []byte) {
	var ev struct {
		Type     string          `json:"type"`
		Response *openAIResponse `json:"response"`
		openAIError
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		d.malformed = fmt.Sprintf("stream event %q is not JSON: %v", name, err)
		return
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response != nil && d.model == "" {
			d.model = ev.Response.Model
		}
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response != nil {
			d.final(ev.Response)
		}
	case "error":
		e := ev.openAIError
		d.setError(&e)
	}
}

func (d *openAIDecoder) final(r *openAIResponse) {
	d.resp = r
	if r.Model != "" {
		d.model = r.Model
	}
	if r.Status == "failed" {
		d.errType = "response.failed"
		if r.Error != nil {
			d.setError(r.Error)
		}
	}
}

func (d *openAIDecoder) setError(e *openAIError) {
	if e == nil {
		d.errType = "error"
		return
	}
	d.errType, d.detail = e.Type, wfb.Clip(e.Message, 300)
	if d.errType == "" {
		d.errType = e.Code
	}
	if d.errType == "" {
		d.errType = "error"
	}
}

func (d *openAIDecoder) result(status int, complete bool) outcome {
	o := outcome{model: d.model, errorType: d.errType, detail: d.detail}
	u := Usage{Semantics: wfb.SemanticsOpenAI, CacheCreation: notReported("OpenAI Responses")}
	r := d.resp
	switch {
	case !is2xx(status):
	case d.malformed != "" && r == nil:
		o.billed = complete
		u.setUnread(d.malformed)
	case r == nil:
		// An error event, or a stream that never reached its end.
		o.billed = d.errType == "" && complete
		if o.billed {
			u.setUnread("the response never reported its final state")
		}
	case r.Status == "failed":
		o.billed = r.Usage != nil
	case r.Status == "completed" || r.Status == "incomplete":
		o.billed = true
	}
	if r != nil && (r.Usage != nil || o.billed) {
		readOpenAIUsage(&u, r.Usage, responsesUsageNames)
		o.surcharges = openAISurcharges(r.ServiceTier)
	}
	o.usage = u
	return o
}

// openAIUsageNames are the field names of one OpenAI API's usage object:
// the Responses API's, or Chat Completions' (whose arithmetic is the same).
type openAIUsageNames struct {
	input, inputDetails, output, outputDetails string
}

var (
	responsesUsageNames = openAIUsageNames{"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details"}
	chatUsageNames      = openAIUsageNames{"prompt_tokens", "prompt_tokens_details", "completion_tokens", "completion_tokens_details"}
)

// readOpenAIUsage maps an OpenAI usage object whose names are n to wfb's
// semantics: input is the native input minus its cached_tokens (both
// must be measured), cache read the cached tokens, output the native
// output, reasoning its reasoning_tokens (which may not exceed it).
func readOpenAIUsage(u *Usage, usage map[string]json.RawMessage, n openAIUsageNames) {
	if usage == nil {
		u.setUnread("usage is missing from the response")
		return
	}
	total := readCount(usage, "usage.", n.input)
	cached := detailCount(usage, n.inputDetails, "cached_tokens")
	u.CacheRead = cached
	u.Input = subtract(total, cached, FieldInput)
	u.Output = readCount(usage, "usage.", n.output)
	reasoning := detailCount(usage, n.outputDetails, "reasoning_tokens")
	if reasoning.State == Present && u.Output.State == Present && reasoning.Value > u.Output.Value {
		reasoning = Count{State: Nonsense, Native: reasoning.Native, Raw: fmt.Sprint(reasoning.Value),
			Why: fmt.Sprintf("%s %d exceeds %s %d (it is part of it)", reasoning.Native, reasoning.Value, u.Output.Native, u.Output.Value)}
	}
	u.Reasoning = reasoning
}

// detailCount reads usage.<obj>.<name>.
func detailCount(usage map[string]json.RawMessage, obj, name string) Count {
	inner, c, ok := readObject(usage, "usage.", obj)
	if !ok {
		c.Native = "usage." + obj + "." + name
		return c
	}
	return readCount(inner, "usage."+obj+".", name)
}
