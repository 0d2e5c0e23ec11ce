package mock

import "encoding/json"

// Script is what the provider serves: Replies in order, one per request,
// then Default for every later request.
type Script struct {
	Replies []Reply `json:"replies,omitempty"`
	Default *Reply  `json:"default,omitempty"`
}

// Reply is one scripted model turn, or a scripted failure.
type Reply struct {
	// Text is the assistant's text block (may be empty).
	Text string `json:"text,omitempty"`
	// Tools are tool_use blocks the model asks for, in order.
	Tools []Tool `json:"tools,omitempty"`
	// StopReason overrides the stop reason; by default "tool_use" when
	// Tools is non-empty, else "end_turn".
	StopReason string `json:"stop_reason,omitempty"`
	// Usage is served verbatim: a key that is absent (or whose value is nil)
	// is ABSENT on the wire; any other value, even -5, true or "1200", is
	// sent as it is so that consumers' validation can be tested.
	Usage Usage `json:"usage,omitempty"`
	// Status, when not 0 or 200, makes the reply an HTTP error with Error as
	// the error object, e.g. 529 with {"type": "overloaded_error"}.
	Status int             `json:"status,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// DelayMS delays the response (headers included) by this many ms.
	DelayMS int `json:"delay_ms,omitempty"`
	// Hang never answers: the request blocks until the client goes away or
	// the server closes.
	Hang bool `json:"hang,omitempty"`
	// CutAfterEvents, when > 0, ends a streamed reply abruptly after that
	// many SSE events (no message_stop), as a dropped connection would.
	CutAfterEvents int `json:"cut_after_events,omitempty"`
}

// Tool is a tool_use block: the tool's name and its input object.
type Tool struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// Usage maps usage field names to the values the provider serves for them.
// Values are served verbatim; nil or absent means the field is not sent.
type Usage map[string]any

// UsageFields are the four Anthropic usage fields a complete measurement
// carries.
var UsageFields = []string{
	"input_tokens",
	"output_tokens",
	"cache_read_input_tokens",
	"cache_creation_input_tokens",
}

// FullUsage returns a Usage with all four fields set.
func FullUsage(input, output, cacheRead, cacheCreation int64) Usage {
	return Usage{
		"input_tokens":                input,
		"output_tokens":               output,
		"cache_read_input_tokens":     cacheRead,
		"cache_creation_input_tokens": cacheCreation,
	}
}
