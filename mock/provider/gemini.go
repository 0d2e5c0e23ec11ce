package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API (POST .../v1beta/models/{model}:generateContent, and
// :streamGenerateContent, SSE with ?alt=sse, a JSON array of chunks
// without), which Gemini CLI speaks, is served from the same Script as the
// Messages and Responses APIs and shares their reply sequence: the n-th
// model request of any kind gets the n-th reply. One script serves all
// three APIs this way:
//
//   - text becomes a {text} part, tools {functionCall: {name, args}} parts
//     (args is the tool's input), of one candidate whose content has role
//     "model". An MCP tool named as Claude Code names it
//     (mcp__SERVER__TOOL) is called as Gemini CLI declares it,
//     mcp_SERVER_TOOL.
//   - stop_reason becomes the candidate's finishReason: "STOP" by default
//     (the API says STOP after a function call too), end_turn, tool_use
//     and stop_sequence are STOP, max_tokens is MAX_TOKENS, and anything
//     else (SAFETY, MALFORMED_FUNCTION_CALL, ...) is served as written.
//   - usage is translated to Gemini's semantics, where the prompt count
//     INCLUDES cached tokens (Anthropic's cache fields ADD to input):
//     promptTokenCount = input_tokens + cache_read_input_tokens +
//     cache_creation_input_tokens, cachedContentTokenCount =
//     cache_read_input_tokens, candidatesTokenCount = output_tokens,
//     thoughtsTokenCount = reasoning_tokens, and totalTokenCount = prompt +
//     candidates + thoughts. A key absent from the script is absent on the
//     wire (promptTokenCount when the script's input_tokens is), a reply
//     with no usage key at all has no usageMetadata, and values that are
//     not whole numbers are served verbatim in their own field, with
//     totalTokenCount left out.
//   - modelVersion is the model named in the path.
//   - status, error, delay_ms and hang behave as for the other APIs. An
//     error body is {"error": ERROR}, Google's shape, ERROR by default
//     {code, message, status} with the status Google names (429
//     RESOURCE_EXHAUSTED, 503 UNAVAILABLE, ...).
//
// A streamed reply is one chunk per half of the text (so that clients are
// made to join them), then one chunk with the function calls; the last
// chunk carries finishReason and usageMetadata. cut_after_events drops the
// connection before that last chunk however large it is: the stream never
// reaches a finishReason; with cut_cleanly the response ends there as if
// whole (a JSON array is closed). A non-streamed reply is the whole
// response.

func isGemini(method, path string) bool {
	p := strings.TrimSuffix(path, "/")
	return method == http.MethodPost && strings.Contains(p, "/models/") &&
		(strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent"))
}

// GeminiRequests returns the recorded generateContent and
// streamGenerateContent requests only: Gemini CLI's model turns.
func (p *Provider) GeminiRequests() []Request { return p.requestsTo(isGemini) }

// geminiModel is the {model} of .../models/{model}:method.
func geminiModel(path string) string {
	_, m, _ := strings.Cut(path, "/models/")
	m, _, _ = strings.Cut(m, ":")
	if m == "" {
		return "gemini-mock"
	}
	return m
}

// The response's structs fix the field order.
type (
	gemResponse struct {
		Candidates    []gemCandidate `json:"candidates"`
		UsageMetadata Usage          `json:"usageMetadata,omitempty"`
		ModelVersion  string         `json:"modelVersion"`
		ResponseID    string         `json:"responseId"`
	}
	gemCandidate struct {
		Content      gemContent `json:"content"`
		FinishReason string     `json:"finishReason,omitempty"`
		Index        int        `json:"index"`
	}
	gemContent struct {
		Parts []gemPart `json:"parts"`
		Role  string    `json:"role"`
	}
	gemPart struct {
		Text         *string      `json:"text,omitempty"`
		FunctionCall *gemFuncCall `json:"functionCall,omitempty"`
	}
	gemFuncCall struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
)

// serveGemini answers a Gemini API request with reply, after the shared
// delay and hang handling. It returns a note for the log; a scripted cut
// aborts the handler.
func serveGemini(w http.ResponseWriter, r *http.Request, reply Reply, id string) string {
	status, failed := wrappedFailure(w, reply, gemDefaultError)
	if failed {
		return ""
	}
	chunks := gemChunks(reply, id, geminiModel(r.URL.Path))
	whole := gemJoin(chunks)
	out, err := json.Marshal(whole)
	if err != nil {
		writeError(w, http.StatusInternalServerError, errorObject("api_error", "mock provider: "+err.Error()))
		return "unencodable reply"
	}
	stream := strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), ":streamGenerateContent")
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
		return ""
	}
	sse := r.URL.Query().Get("alt") == "sse"
	send := len(chunks)
	if reply.CutAfterEvents > 0 {
		send = min(reply.CutAfterEvents, len(chunks)-1)
	}
	note := "stream"
	if !sse {
		note = "stream (json array)"
	}
	if err := gemWriteStream(w, status, chunks[:send], sse, send < len(chunks) && !reply.CutCleanly); err != nil {
		if err == errSSECut {
			panic(http.ErrAbortHandler)
		}
		return note + " " + err.Error()
	}
	if send < len(chunks) {
		note += fmt.Sprintf(" cut cleanly after %d chunks", send)
	}
	return note
}

// gemWriteStream writes chunks as SSE data: events, or as the elements of
// one JSON array, flushing each. With drop it then returns errSSECut
// instead of ending the response (an array is left open).
func gemWriteStream(w http.ResponseWriter, status int, chunks []gemResponse, sse, drop bool) error {
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	for i, c := range chunks {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		switch {
		case sse:
			b = append(append([]byte("data: "), b...), "\r\n\r\n"...)
		case i == 0:
			b = append([]byte("["), b...)
		default:
			b = append([]byte(",\r\n"), b...)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	switch {
	case drop:
		return errSSECut
	case !sse && len(chunks) == 0:
		_, err := w.Write([]byte("[]"))
		return err
	case !sse:
		_, err := w.Write([]byte("]"))
		return err
	}
	return nil
}

// gemChunks is reply as stream chunks: the text in halves, the function
// calls, and finishReason and usage on the last one.
func gemChunks(reply Reply, id, model string) []gemResponse {
	var parts [][]gemPart
	if reply.Text != "" || len(reply.Tools) == 0 {
		for _, s := range sseChunks(reply.Text) {
			parts = append(parts, []gemPart{{Text: &s}})
		}
	}
	if len(reply.Tools) > 0 {
		var calls []gemPart
		for _, t := range reply.Tools {
			args := t.Input
			if args == nil {
				args = map[string]any{}
			}
			name := t.Name
			if server, tool, ok := splitMCPName(name); ok {
				name = "mcp_" + server + "_" + tool
			}
			calls = append(calls, gemPart{FunctionCall: &gemFuncCall{Name: name, Args: args}})
		}
		parts = append(parts, calls)
	}
	chunks := make([]gemResponse, len(parts))
	for i, ps := range parts {
		chunks[i] = gemResponse{
			Candidates:   []gemCandidate{{Content: gemContent{Parts: ps, Role: "model"}}},
			ModelVersion: model,
			ResponseID:   "mock_" + id,
		}
	}
	last := &chunks[len(chunks)-1]
	last.Candidates[0].FinishReason = gemFinishReason(reply.StopReason)
	last.UsageMetadata = gemUsage(reply.Usage, reply.ReasoningTokens)
	return chunks
}

// gemJoin is the whole response the chunks make: their parts in one
// candidate, with the last chunk's finishReason and usage. Adjacent text
// parts are joined back into one.
func gemJoin(chunks []gemResponse) gemResponse {
	whole := chunks[len(chunks)-1]
	var parts []gemPart
	for _, c := range chunks {
		for _, p := range c.Candidates[0].Content.Parts {
			if n := len(parts); n > 0 && p.Text != nil && parts[n-1].Text != nil {
				joined := *parts[n-1].Text + *p.Text
				parts[n-1].Text = &joined
				continue
			}
			parts = append(parts, p)
		}
	}
	cand := whole.Candidates[0]
	cand.Content.Parts = parts
	whole.Candidates = []gemCandidate{cand}
	return whole
}

func gemFinishReason(stop string) string {
	switch stop {
	case "", "end_turn", "tool_use", "stop_sequence":
		return "STOP"
	case "max_tokens":
		return "MAX_TOKENS"
	}
	return stop
}

// gemUsage translates a script's (Anthropic) usage into usageMetadata, as
// documented above; nil when the script has no usage key.
func gemUsage(u Usage, thoughts any) Usage {
	su := readScriptUsage(u, thoughts)
	if su.empty {
		return nil
	}
	wire := Usage{}
	if su.hasPrompt {
		wire["promptTokenCount"] = su.prompt
	}
	if su.hasCached {
		wire["cachedContentTokenCount"] = su.cached
	}
	if su.hasOut {
		wire["candidatesTokenCount"] = su.out
	}
	if thoughts != nil {
		wire["thoughtsTokenCount"] = thoughts
	}
	// Thoughts are added to Gemini's total, not part of its candidates.
	if su.reasoningSummable {
		wire["totalTokenCount"] = su.reasoningTotal
	}
	return wire
}

// gemDefaultError is the error object for a scripted failure status that
// has none, named the way Google's APIs name them.
func gemDefaultError(status int) json.RawMessage {
	st := "INTERNAL"
	switch {
	case status == 400:
		st = "INVALID_ARGUMENT"
	case status == 401:
		st = "UNAUTHENTICATED"
	case status == 403:
		st = "PERMISSION_DENIED"
	case status == 404:
		st = "NOT_FOUND"
	case status == 429:
		st = "RESOURCE_EXHAUSTED"
	case status == 503 || status == 529:
		st = "UNAVAILABLE"
	case status == 504:
		st = "DEADLINE_EXCEEDED"
	case status >= 400 && status < 500:
		st = "FAILED_PRECONDITION"
	}
	msg := http.StatusText(status)
	if status == 529 {
		msg = "The model is overloaded. Please try again later."
	}
	if msg == "" {
		msg = fmt.Sprintf("scripted status %d", status)
	}
	out, _ := json.Marshal(map[string]any{"code": status, "message": msg, "status": st})
	return out
}
