package provider

import "encoding/json"

// Script is what the provider serves: Replies in order, one per model
// request (POST /v1/messages, POST /v1/responses, POST .../chat/completions,
// or Gemini's POST /v1beta/models/{model}:generateContent or
// :streamGenerateContent: all share the sequence), then Default for every
// later request. Without a
// Default, the built-in DefaultReply is served: the text "ok" with usage
// input 10, output 5, cache_read 0, cache_creation 0.
//
// A script file (LoadScript) is YAML; JSON is accepted, being YAML. It is
// read strictly: an unknown field is an error, and every error names the
// file, line, column and field, all of them at once. An example:
//
//	replies:
//	  - text: "reviewing"
//	    tools:                      # tool_use blocks, in order
//	      - name: Write
//	        input: {file_path: /tmp/out.json, content: "{}"}
//	    usage:                      # absent or null: ABSENT on the wire
//	      input_tokens: 2000
//	      output_tokens: 300
//	      cache_read_input_tokens: 7000
//	      cache_creation_input_tokens: 1000
//	  - text: "thought hard"
//	    usage: {input_tokens: 900, output_tokens: 120}
//	    reasoning_tokens: 80        # OpenAI's and Gemini's APIs only
//	  - status: 529                 # a scripted failure
//	    error: {type: overloaded_error, message: Overloaded}
//	    retry_after_ms: 10          # retry-after-ms: 10, retry-after: 1
//	  - text: "slow"
//	    delay_ms: 1500
//	  - hang: true
//	  - text: "dropped"
//	    cut_after_events: 3
//	  - text: "answers the second request of a conversation"
//	    match: {turn: 1, model: claude-sonnet-4-5}
//	  - text: "ends short"
//	    cut_after_events: 1
//	    cut_cleanly: true
//	default:
//	  text: "done"
//	  usage: {input_tokens: 10, output_tokens: 5,
//	          cache_read_input_tokens: -5, cache_creation_input_tokens: "1200"}
//
// The fields of a reply:
//
//   - text: the assistant's text block. A reply with neither text nor tools
//     is one empty text block.
//   - tools: a list of {name, input}; name must be non-empty, input must be
//     an object (absent: {}). Each becomes a tool_use block with an id
//     "toolu_...".
//   - stop_reason: served as written; by default "tool_use" when the reply
//     has tools, else "end_turn".
//   - usage: any of input_tokens, output_tokens, cache_read_input_tokens,
//     cache_creation_input_tokens (another key is an error). The VALUES are
//     not validated: -5, true, "1200", 1.5 are served verbatim (1.0 stays
//     1.0), so that consumers' validation can be tested. A field that is
//     absent or null is absent on the wire.
//   - reasoning_tokens: served by the Responses API as
//     usage.output_tokens_details.reasoning_tokens (Chat Completions:
//     usage.completion_tokens_details.reasoning_tokens; Gemini:
//     thoughtsTokenCount), like a usage value: verbatim (-5, "80", 1.5
//     included), absent on the wire when absent or null. The Messages API
//     has no such field and ignores it.
//   - status: an HTTP status, 100-599. A non-2xx status makes the reply a
//     failure: the body is {"type":"error","error":ERROR}, also for a
//     streaming request (the status comes before any event). A 2xx status
//     other than 200 is used for a normal reply. 1xx statuses are not
//     useful: net/http sends them as informational responses.
//   - error: the error object of a failure; only with a non-2xx status.
//     Without one, a 4xx/5xx status gets the API's error type for it
//     (529 overloaded_error, 429 rate_limit_error, 401
//     authentication_error, other 5xx api_error, ...). A failure has no
//     text, tools, stop_reason, usage, cut_after_events or cut_cleanly.
//   - retry_after_ms: a failure's retry hint: the response carries
//     retry-after-ms: N and retry-after: N/1000 seconds rounded up, which
//     clients that honour them wait instead of their own backoff (opencode
//     does for any status; Qwen Code only for 429 and 503; the OpenAI and
//     Anthropic SDKs read retry-after-ms first). Only with a non-2xx status.
//   - delay_ms: wait this long (>= 0) before answering, headers included.
//   - hang: never answer; the request blocks until the client disconnects
//     or the provider is closed, and then the connection is dropped.
//   - match: {turn, model, offers}, any of them: the reply answers only a
//     request that fits (see Match); offers: a tool the request offers. A request takes the first reply not
//     yet served that fits it, so replies without match are served in
//     order; a request no reply fits gets the default. Not on the default.
//   - cut_after_events: for a streamed reply, drop the connection after
//     this many SSE events (>= 0; 0 means no cut). A cut stream never
//     reaches message_stop, however large the number. A non-streamed reply
//     is answered whole.
//   - cut_cleanly: with cut_after_events, end the cut stream as a complete
//     HTTP response instead of dropping the connection: the stream simply
//     stops short of its final event (message_stop, response.completed,
//     Gemini's finishReason, Chat Completions' finish_reason and [DONE]),
//     which some clients take as a whole answer.
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
	// Status, when set and not 2xx, makes the reply an HTTP error with Error
	// as the error object, e.g. 529 with {"type": "overloaded_error"}; a
	// 4xx/5xx without Error gets the API's default error object for it.
	Status int             `json:"status,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// RetryAfterMS, on a failure, is the retry hint its response carries:
	// retry-after-ms and retry-after headers (0: none).
	RetryAfterMS int `json:"retry_after_ms,omitempty"`
	// DelayMS delays the response (headers included) by this many ms.
	DelayMS int `json:"delay_ms,omitempty"`
	// Hang never answers: the request blocks until the client goes away or
	// the server closes.
	Hang bool `json:"hang,omitempty"`
	// CutAfterEvents, when > 0, ends a streamed reply abruptly after that
	// many SSE events (no message_stop), as a dropped connection would.
	CutAfterEvents int `json:"cut_after_events,omitempty"`
	// CutCleanly ends a cut stream as a complete HTTP response rather than
	// a dropped connection.
	CutCleanly bool `json:"cut_cleanly,omitempty"`
	// ReasoningTokens is served as the Responses API's
	// output_tokens_details.reasoning_tokens, Chat Completions'
	// completion_tokens_details.reasoning_tokens and Gemini's
	// thoughtsTokenCount (verbatim; nil: absent). The Messages API has no
	// such field and ignores it.
	ReasoningTokens any `json:"reasoning_tokens,omitempty"`
	// Match, when set, restricts the reply to the requests it fits (see
	// Match); nil answers any. Not allowed on the default.
	Match *Match `json:"match,omitempty"`
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

// failure reports whether the reply is a scripted HTTP error.
func (r Reply) failure() bool { return r.Status != 0 && (r.Status < 200 || r.Status > 299) }
