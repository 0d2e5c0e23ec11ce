package provider

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The OpenAI Responses API (POST .../v1/responses), which Codex speaks, is
// served from the same Script as the Messages API and shares its reply
// sequence: the n-th model request of either kind gets the n-th reply. One
// script serves both APIs this way:
//
//   - text becomes an assistant "message" output item with one
//     "output_text" part.
//   - each tool becomes a "function_call" item whose arguments are the
//     JSON-encoded input (Codex's exec_command takes {cmd: "..."}), or, when
//     the request declares a free-form tool of that name (type "custom",
//     such as Codex's apply_patch), a "custom_tool_call" item whose input is
//     the tool input's "input" string. An MCP tool, named as Claude Code
//     names it (mcp__SERVER__TOOL), is served as Codex declares it: a
//     function_call of name TOOL (each character other than a letter, a
//     digit or '_' made '_', as Codex makes it) in namespace mcp__SERVER.
//   - usage is translated to OpenAI's semantics, where cached tokens are a
//     SUBSET of input tokens (Anthropic's cache fields ADD to input):
//     input_tokens = input_tokens + cache_read_input_tokens +
//     cache_creation_input_tokens, input_tokens_details.cached_tokens =
//     cache_read_input_tokens, output_tokens = output_tokens,
//     output_tokens_details.reasoning_tokens = Reply.ReasoningTokens, and
//     total_tokens = input + output. A key absent from the script is absent
//     on the wire (input_tokens is absent when the script's input_tokens is;
//     input_tokens_details when cache_read_input_tokens is), and a reply
//     with no usage key at all has no usage object. Values that are not
//     whole numbers (-5 is one; "1200", true and 1.5 are not) cannot be
//     added up, so they are served verbatim in their own field and
//     total_tokens is left out.
//   - status, error, delay_ms, hang and cut_after_events behave as for the
//     Messages API. An error body is {"error": ERROR}, OpenAI's shape; a
//     cut stream never reaches response.completed.
//
// A streamed reply is response.created, then per output item
// response.output_item.added and response.output_item.done, then
// response.completed carrying the whole response and its usage. A
// non-streamed reply is the response object itself.

func isResponses(method, path string) bool {
	return method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(path, "/"), "/v1/responses")
}

// ResponsesRequests returns the recorded POST .../v1/responses requests
// only: Codex's model turns.
func (p *Provider) ResponsesRequests() []Request { return p.requestsTo(isResponses) }

// respObject is a Responses API response; the struct fixes the field order.
type respObject struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	CreatedAt int64      `json:"created_at"`
	Status    string     `json:"status"`
	Model     string     `json:"model"`
	Output    []respItem `json:"output"`
	Usage     Usage      `json:"usage,omitempty"`
}

// respItem is one output item: a message, a function call or a custom
// (free-form) tool call.
type respItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status,omitempty"`
	Role      string        `json:"role,omitempty"`
	Content   []respContent `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Input     *string       `json:"input,omitempty"`
}

type respContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// serveResponses answers a Responses API request with reply, after the
// shared delay and hang handling. It returns a note for the log; a scripted
// cut aborts the handler.
func (p *Provider) serveResponses(w http.ResponseWriter, reply Reply, id string, body map[string]any, stream bool) string {
	status, failed := wrappedFailure(w, reply, respDefaultError)
	if failed {
		return ""
	}
	model, _ := body["model"].(string)
	if model == "" {
		model = "gpt-mock"
	}
	resp, err := respBuild(reply, id, model, respCustomTools(body))
	var out []byte
	if err == nil {
		out, err = json.Marshal(resp)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, errorObject("api_error", "mock provider: "+err.Error()))
		return "unencodable reply"
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
		return ""
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	s := &sseWriter{w: w, limit: reply.CutAfterEvents}
	if s.limit > 0 {
		// The cut must land before response.completed.
		s.limit = min(s.limit, 1+2*len(resp.Output))
	}
	err = respWriteEvents(s, resp)
	if err == errSSECut {
		if reply.CutCleanly {
			return "cut cleanly"
		}
		// The deferred record and log in serveHTTP run on this panic.
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

type (
	respEventResponse struct {
		Type     string     `json:"type"`
		Seq      int        `json:"sequence_number"`
		Response respObject `json:"response"`
	}
	respEventItem struct {
		Type        string   `json:"type"`
		Seq         int      `json:"sequence_number"`
		OutputIndex int      `json:"output_index"`
		Item        respItem `json:"item"`
	}
)

func respWriteEvents(s *sseWriter, resp respObject) error {
	created := resp
	created.Status = "in_progress"
	created.Output = []respItem{}
	created.Usage = nil
	seq := 0
	if err := s.event("response.created", respEventResponse{Type: "response.created", Seq: seq, Response: created}); err != nil {
		return err
	}
	for i, item := range resp.Output {
		added := item
		added.Status = "in_progress"
		if item.Type == "message" {
			added.Content = []respContent{}
		}
		seq++
		if err := s.event("response.output_item.added", respEventItem{Type: "response.output_item.added", Seq: seq, OutputIndex: i, Item: added}); err != nil {
			return err
		}
		seq++
		if err := s.event("response.output_item.done", respEventItem{Type: "response.output_item.done", Seq: seq, OutputIndex: i, Item: item}); err != nil {
			return err
		}
	}
	seq++
	return s.event("response.completed", respEventResponse{Type: "response.completed", Seq: seq, Response: resp})
}

// respCustomTools returns the names of the free-form ("custom") tools a
// request declares.
func respCustomTools(body map[string]any) map[string]bool {
	names := map[string]bool{}
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if typ, _ := m["type"].(string); typ == "custom" {
			if name, _ := m["name"].(string); name != "" {
				names[name] = true
			}
		}
	}
	return names
}

func respBuild(reply Reply, id, model string, custom map[string]bool) (respObject, error) {
	resp := respObject{
		ID:        "resp_mock_" + id,
		Object:    "response",
		CreatedAt: time.Now().Unix(),
		Status:    "completed",
		Model:     model,
		Usage:     respUsage(reply.Usage, reply.ReasoningTokens),
	}
	if reply.Text != "" || len(reply.Tools) == 0 {
		resp.Output = append(resp.Output, respItem{
			Type:    "message",
			ID:      "msg_mock_" + id,
			Status:  "completed",
			Role:    "assistant",
			Content: []respContent{{Type: "output_text", Text: reply.Text, Annotations: []any{}}},
		})
	}
	for i, t := range reply.Tools {
		item := respItem{
			ID:     fmt.Sprintf("fc_mock_%s_%d", id, i+1),
			Status: "completed",
			CallID: fmt.Sprintf("call_mock_%s_%d", id, i+1),
			Name:   t.Name,
		}
		if custom[t.Name] {
			in, ok := t.Input["input"].(string)
			if !ok || len(t.Input) != 1 {
				return resp, fmt.Errorf("tool %d (%s) is a free-form tool in this request: its input must be {input: \"...\"}", i+1, t.Name)
			}
			item.Type, item.Input = "custom_tool_call", &in
		} else {
			input := t.Input
			if input == nil {
				input = map[string]any{}
			}
			args, err := json.Marshal(input)
			if err != nil {
				return resp, fmt.Errorf("tool %d (%s): %w", i+1, t.Name, err)
			}
			s := string(args)
			item.Type, item.Arguments = "function_call", &s
			if server, tool, ok := splitMCPName(t.Name); ok {
				item.Namespace, item.Name = "mcp__"+server, codexToolName(tool)
			}
		}
		resp.Output = append(resp.Output, item)
	}
	return resp, nil
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

// respUsage translates a script's (Anthropic) usage into a Responses usage
// object, as documented above; nil when the script has no usage key.
func respUsage(u Usage, reasoning any) Usage { return openAIUsage(u, reasoning, responsesUsageNames) }

// openAIUsage translates a script's (Anthropic) usage into an OpenAI usage
// object with the names n; nil when the script has no usage key.
func openAIUsage(u Usage, reasoning any, n openAIUsageNames) Usage {
	su := readScriptUsage(u, reasoning)
	if su.empty {
		return nil
	}
	wire := Usage{}
	if su.hasPrompt {
		wire[n.input] = su.prompt
	}
	if su.hasCached {
		wire[n.inputDetails] = map[string]any{"cached_tokens": su.cached}
	}
	if su.hasOut {
		wire[n.output] = su.out
	}
	if reasoning != nil {
		wire[n.outputDetails] = map[string]any{"reasoning_tokens": reasoning}
	}
	// Reasoning is part of OpenAI's output tokens, not added to the total.
	if su.summable {
		wire["total_tokens"] = su.total
	}
	return wire
}

// scriptUsage is a script's (Anthropic) usage read for the APIs whose
// prompt count includes cached tokens.
type scriptUsage struct {
	empty bool // no usage key at all, and no reasoning
	// prompt is input_tokens plus the cache fields (promptTotal).
	prompt, out, cached any
	hasPrompt, hasOut   bool
	hasCached           bool
	total               int64 // prompt + output, when summable
	summable            bool  // prompt and output are both whole numbers
	reasoningTotal      int64 // total + reasoning, when reasoningSummable
	reasoningSummable   bool
}

func readScriptUsage(u Usage, reasoning any) scriptUsage {
	var su scriptUsage
	var promptWhole bool
	su.prompt, su.hasPrompt, promptWhole = promptTotal(u)
	su.out, su.hasOut = u["output_tokens"]
	su.hasOut = su.hasOut && su.out != nil
	su.cached, su.hasCached = u["cache_read_input_tokens"]
	su.hasCached = su.hasCached && su.cached != nil
	su.empty = !su.hasPrompt && !su.hasOut && !su.hasCached && u["cache_creation_input_tokens"] == nil && reasoning == nil
	p, _ := su.prompt.(int64)
	o, outWhole := respWhole(su.out)
	su.total, su.summable = p+o, su.hasPrompt && promptWhole && su.hasOut && outWhole
	r, rWhole := respWhole(reasoning)
	su.reasoningTotal = su.total + r
	su.reasoningSummable = su.summable && (reasoning == nil || rWhole)
	return su
}

// promptTotal is the whole prompt of a script's (Anthropic) usage:
// input_tokens plus the two cache fields that are present, an int64 when
// all are whole numbers (whole), else input_tokens as written. has is false
// when input_tokens is absent or null.
func promptTotal(u Usage) (v any, has, whole bool) {
	in, ok := u["input_tokens"]
	if !ok || in == nil {
		return nil, false, false
	}
	sum, whole := respWhole(in)
	for _, k := range []string{"cache_read_input_tokens", "cache_creation_input_tokens"} {
		if extra := u[k]; extra != nil {
			n, ok := respWhole(extra)
			whole = whole && ok
			sum += n
		}
	}
	if !whole {
		return in, true, false
	}
	return sum, true, true
}

// respWhole reads v as a whole number, as a script holds one: a Go integer,
// or a json.Number written without a fraction or exponent.
func respWhole(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// wrappedFailure answers a scripted failure with {"error": ERROR}, the
// shape OpenAI's and Google's APIs share (def gives ERROR when the script
// has none), and says so; otherwise it returns the status of the normal
// reply.
func wrappedFailure(w http.ResponseWriter, reply Reply, def func(int) json.RawMessage) (status int, failed bool) {
	if reply.Status != 0 && (reply.Status < 200 || reply.Status > 299) {
		obj := reply.Error
		if len(obj) == 0 {
			obj = def(reply.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":%s}`, obj)
		return reply.Status, true
	}
	if reply.Status != 0 {
		return reply.Status, false
	}
	return http.StatusOK, false
}

// respDefaultError is the error object for a scripted failure status that
// has none, named the way the OpenAI API names them.
func respDefaultError(status int) json.RawMessage {
	kind, code, msg := "server_error", "", http.StatusText(status)
	switch {
	case status == 400:
		kind, msg = "invalid_request_error", "Invalid request"
	case status == 401:
		kind, code, msg = "invalid_request_error", "invalid_api_key", "Incorrect API key provided"
	case status == 404:
		kind, code, msg = "invalid_request_error", "model_not_found", "Not found"
	case status == 429:
		kind, code, msg = "rate_limit_error", "rate_limit_exceeded", "Rate limit reached"
	case status == 529:
		kind, msg = "server_error", "Overloaded"
	case status >= 400 && status < 500:
		kind = "invalid_request_error"
	}
	if msg == "" {
		msg = fmt.Sprintf("scripted status %d", status)
	}
	obj := map[string]any{"type": kind, "message": msg, "param": nil, "code": nil}
	if code != "" {
		obj["code"] = code
	}
	out, _ := json.Marshal(obj)
	return out
}

// splitMCPName splits an MCP tool's name as Claude Code spells it,
// mcp__SERVER__TOOL, into the server and the tool.
func splitMCPName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// codexToolName is an MCP tool's name as Codex offers it to the model:
// every character but a letter, a digit and '_' made '_' (get-env is
// get_env).
func codexToolName(tool string) string { return nameChars(tool, "_") }

// nameChars is name with every character but a letter, a digit and those
// in keep made '_'.
func nameChars(name, keep string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || strings.ContainsRune(keep, r) {
			return r
		}
		return '_'
	}, name)
}
