package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
)

// Recorded is one model exchange as a metering proxy kept it (wfb's
// exchanges table): what `wfb mock record` turns into a Reply.
type Recorded struct {
	Responses bool // the OpenAI Responses API
	// ChatCompletions: the OpenAI Chat Completions API. Neither this nor
	// Responses: the Anthropic Messages API.
	ChatCompletions bool
	Status          int    // the status the agent was answered
	ContentType     string // the response's
	Request         []byte // the request body as sent
	Response        []byte // the response body as received (a stream whole)
	DelayMS         int    // served as delay_ms (0: none)
}

// RecordReply turns a recorded exchange into the reply that serves the same
// answer: its text, tool calls, stop reason and usage verbatim (a figure
// the wire lacked stays absent, a nonsense one is kept as written), its
// status and error object, and a Match with the request's model and turn.
// What a script cannot say is dropped and named in notes: thinking and
// reasoning blocks (Chat Completions' reasoning_content), usage fields
// beyond the four (and OpenAI's total_tokens, which the provider
// recomputes), text blocks after the first (joined to it), choices after
// the first. A stream that never reached its final event is served cut
// after the events received.
func RecordReply(x Recorded) (r Reply, notes []string, err error) {
	var req map[string]any
	if err := json.Unmarshal(x.Request, &req); err != nil || req == nil {
		return r, nil, fmt.Errorf("the request body is not a JSON object")
	}
	model, _ := req["model"].(string)
	api := apiMessages
	switch {
	case x.Responses:
		api = apiResponses
	case x.ChatCompletions:
		api = apiChat
	}
	turn := requestTurn(req, api)
	r.Match = &Match{Model: model, Turn: &turn}
	r.DelayMS = x.DelayMS
	if x.Status < 200 || x.Status > 299 {
		r.Status, r.Error = x.Status, errorOf(x.Response, api != apiMessages)
		return r, nil, nil
	}
	if x.Status != 200 {
		r.Status = x.Status
	}
	var rec recorder
	mt, _, _ := mime.ParseMediaType(x.ContentType)
	stream := mt == "text/event-stream"
	switch {
	case api == apiResponses && stream:
		err = rec.responsesStream(x.Response)
	case api == apiResponses:
		err = rec.responsesObject(x.Response)
	case api == apiChat && stream:
		err = rec.chatStream(x.Response)
	case api == apiChat:
		err = rec.chatObject(x.Response)
	case stream:
		err = rec.messagesStream(x.Response)
	default:
		err = rec.messagesObject(x.Response)
	}
	if err != nil {
		return r, nil, err
	}
	r.Text, r.Tools, r.Usage, r.ReasoningTokens = rec.text, rec.tools, rec.usage, rec.reasoning
	if rec.stop != "" && rec.stop != defaultStop(r) {
		r.StopReason = rec.stop
	}
	if !rec.complete {
		r.CutAfterEvents = max(rec.events, 1)
		rec.note("the stream broke off after %d events: served cut", rec.events)
	}
	return r, rec.notes, nil
}

func defaultStop(r Reply) string {
	if len(r.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// errorOf is the error object of a failure's body: Anthropic's
// {"type":"error","error":{...}} or OpenAI's {"error":{...}}; a body that
// has none becomes an api_error (OpenAI's APIs: a server_error) carrying
// the body's text.
func errorOf(body []byte, openAI bool) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		var obj map[string]any
		if json.Unmarshal(top["error"], &obj) == nil && obj != nil {
			return top["error"]
		}
	}
	kind := "api_error"
	if openAI {
		kind = "server_error"
	}
	return errorObject(kind, strings.TrimSpace(string(body)))
}

// recorder assembles a reply from a response.
type recorder struct {
	text      string
	texts     int
	tools     []Tool
	stop      string
	usage     Usage
	reasoning any
	complete  bool
	events    int
	notes     []string
}

func (rec *recorder) note(format string, args ...any) {
	rec.notes = append(rec.notes, fmt.Sprintf(format, args...))
}

func (rec *recorder) addText(s string) {
	if rec.texts > 0 && len(rec.tools) > 0 {
		rec.note("a text block after a tool call is served before the tool calls")
	}
	if rec.texts > 0 {
		rec.note("text block %d is joined to the first", rec.texts+1)
	}
	rec.texts++
	rec.text += s
}

func (rec *recorder) addTool(name string, input json.RawMessage) error {
	in := map[string]any{}
	if len(bytes.TrimSpace(input)) > 0 {
		if err := decodeVerbatim(input, &in); err != nil || in == nil {
			return fmt.Errorf("tool call %s: its input is not a JSON object: %.60s", name, input)
		}
	}
	rec.tools = append(rec.tools, Tool{Name: name, Input: in})
	return nil
}

// decodeVerbatim decodes JSON keeping numbers as written: whole numbers as
// int64, the rest as json.Number, so that 1.0 stays 1.0.
func decodeVerbatim(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	wholeNumbers(v)
	return nil
}

func wholeNumbers(v any) any {
	switch x := v.(type) {
	case *map[string]any:
		wholeNumbers(*x)
	case *Usage:
		wholeNumbers(map[string]any(*x))
	case map[string]any:
		for k, e := range x {
			x[k] = wholeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = wholeNumbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
	}
	return v
}

// usageOf keeps the four usage fields of a wire usage object, values
// verbatim; nil when there is none.
func (rec *recorder) usageOf(raw json.RawMessage) Usage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var all map[string]any
	if decodeVerbatim(raw, &all) != nil || all == nil {
		rec.note("the usage is not an object: %.60s; served without usage", raw)
		return nil
	}
	u := Usage{}
	for k, v := range all {
		switch {
		case v == nil:
		case slices.Contains(UsageFields, k):
			u[k] = v
		default:
			rec.note("usage.%s is not served", k)
		}
	}
	return u
}

// sseEvents splits a stream into its events' data payloads.
func sseEvents(body []byte) [][]byte {
	var out [][]byte
	var data []byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), len(body)+1)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if data != nil {
				out = append(out, data)
			}
			data = nil
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
	if data != nil {
		out = append(out, data)
	}
	return out
}

// Marshal renders s as a script file that ParseScript reads back to the
// same script: JSON (which is YAML), indented, every value as it is held
// (1.0 stays 1.0, "1200" a string), after a header of YAML comments, one
// per line of header.
func (s *Script) Marshal(header []string) ([]byte, error) {
	var b bytes.Buffer
	for _, h := range header {
		for _, line := range strings.Split(h, "\n") {
			b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("render script: %w", err)
	}
	return b.Bytes(), nil
}
