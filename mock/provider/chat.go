package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The OpenAI Chat Completions API (POST .../chat/completions: the openai
// SDKs and @ai-sdk/openai-compatible join a base URL such as
// http://HOST/v1 and "/chat/completions"), which opencode, Qwen Code and
// most OpenAI-compatible clients speak, is served from the same Script as
// the other APIs and shares their reply sequence: the n-th model request
// of any kind gets the n-th reply. One script serves it this way:
//
//   - text becomes the assistant message's content, tools its tool_calls,
//     each {id, type: "function", function: {name, arguments}} whose
//     arguments are the JSON-encoded input. A reply with tools and no text
//     has content null; one with neither has content "".
//   - an MCP tool named as Claude Code names it (mcp__SERVER__TOOL) is
//     called by the name the request offers it under (chatMCPNames): Qwen
//     Code's mcp__SERVER__TOOL or opencode's SERVER_TOOL, each character
//     other than a letter, a digit, '_' or '-' made '_' (what OpenAI allows
//     in a function name); a request that offers neither gets the first.
//   - stop_reason becomes finish_reason: "stop" by default (end_turn and
//     stop_sequence too), "tool_calls" when the reply has tools (tool_use),
//     "length" for max_tokens, anything else as written.
//   - usage is translated as for the Responses API (cached tokens are a
//     SUBSET of the prompt) under Chat Completions' names: prompt_tokens,
//     prompt_tokens_details.cached_tokens, completion_tokens,
//     completion_tokens_details.reasoning_tokens and total_tokens. A key
//     absent from the script is absent on the wire, a reply with no usage
//     key at all has no usage, and values that are not whole numbers are
//     served verbatim with total_tokens left out.
//   - status, error, delay_ms and hang behave as for the other APIs; an
//     error body is {"error": ERROR}, OpenAI's shape (as for Responses).
//
// A streamed reply is data: lines only, each a chat.completion.chunk: the
// role, the text in halves, per tool call a chunk with its id, type and
// name and then its arguments in halves (each with the call's index), a
// chunk with the finish_reason, and data: [DONE]. With
// stream_options.include_usage true in the request, every chunk carries
// "usage": null and one more chunk before [DONE], whose choices are empty,
// carries the usage; without it no chunk carries usage, as OpenAI streams
// (a reply with no usage key sends no usage chunk either, as a server that
// ignores include_usage). cut_after_events counts chunks and drops the
// connection before the finish_reason chunk however large it is: the
// stream never finishes; with cut_cleanly the response ends there as if
// whole. A non-streamed reply is one chat.completion object.

func isChat(method, path string) bool {
	return method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(path, "/"), "/chat/completions")
}

// ChatRequests returns the recorded POST .../chat/completions requests
// only.
func (p *Provider) ChatRequests() []Request { return p.requestsTo(isChat) }

// The objects' structs fix the field order, as the API sends it.
type (
	chatCompletion struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []chatChoice `json:"choices"`
		Usage   Usage        `json:"usage,omitempty"`
	}
	chatChoice struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		Logprobs     *struct{}   `json:"logprobs"`
		FinishReason string      `json:"finish_reason"`
	}
	chatMessage struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		Refusal   *string        `json:"refusal"`
		ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	}
	chatToolCall struct {
		Index    *int         `json:"index,omitempty"` // in a stream's deltas only
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}

	chatChunk struct {
		ID      string            `json:"id"`
		Object  string            `json:"object"`
		Created int64             `json:"created"`
		Model   string            `json:"model"`
		Choices []chatChunkChoice `json:"choices"`
		// Usage is null on every chunk but the last when the request asks
		// for usage, and absent when it does not.
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	chatChunkChoice struct {
		Index        int       `json:"index"`
		Delta        chatDelta `json:"delta"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	chatDelta struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	}
)

// serveChat answers a Chat Completions request with reply, after the
// shared delay and hang handling. It returns a note for the log; a
// scripted cut aborts the handler.
func serveChat(w http.ResponseWriter, reply Reply, id string, body map[string]any, stream bool) string {
	status, failed := wrappedFailure(w, reply, respDefaultError)
	if failed {
		return ""
	}
	model, _ := body["model"].(string)
	if model == "" {
		model = "gpt-mock"
	}
	c, err := chatBuild(reply, id, model, body)
	var out []byte
	if err == nil {
		out, err = json.Marshal(c)
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
	opts, _ := body["stream_options"].(map[string]any)
	includeUsage, _ := opts["include_usage"].(bool)
	chunks, finish := chatChunks(c, includeUsage)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	s := &sseWriter{w: w, limit: reply.CutAfterEvents}
	if s.limit > 0 {
		// The cut must land before the finish_reason chunk.
		s.limit = min(s.limit, finish)
	}
	err = chatWriteStream(s, chunks)
	if err == errSSECut {
		if reply.CutCleanly {
			return fmt.Sprintf("cut cleanly after %d chunks", s.sent)
		}
		// The deferred record and log in serveHTTP run on this panic.
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func chatWriteStream(s *sseWriter, chunks []chatChunk) error {
	for _, c := range chunks {
		if err := s.event("", c); err != nil {
			return err
		}
	}
	return s.write("", []byte("[DONE]"))
}

// chatBuild is reply as a chat.completion object answering a request with
// body.
func chatBuild(reply Reply, id, model string, body map[string]any) (chatCompletion, error) {
	msg := chatMessage{Role: "assistant"}
	if reply.Text != "" || len(reply.Tools) == 0 {
		text := reply.Text
		msg.Content = &text
	}
	for i, t := range reply.Tools {
		input := t.Input
		if input == nil {
			input = map[string]any{}
		}
		args, err := json.Marshal(input)
		if err != nil {
			return chatCompletion{}, fmt.Errorf("tool %d (%s): %w", i+1, t.Name, err)
		}
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
			ID:       fmt.Sprintf("call_mock_%s_%d", id, i+1),
			Type:     "function",
			Function: chatFunction{Name: chatToolName(body, t.Name), Arguments: string(args)},
		})
	}
	return chatCompletion{
		ID:      "chatcmpl-mock_" + id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
		Choices: []chatChoice{{Message: msg, FinishReason: chatFinishReason(reply)}},
		Usage:   openAIUsage(reply.Usage, reply.ReasoningTokens, chatUsageNames),
	}, nil
}

// chatChunks is c as stream chunks, and the index of the one with the
// finish_reason (the chunks before it are the ones a cut may send).
func chatChunks(c chatCompletion, includeUsage bool) (chunks []chatChunk, finish int) {
	var usageNull json.RawMessage
	if includeUsage && c.Usage != nil {
		usageNull = json.RawMessage("null")
	}
	chunk := func(d chatDelta, finish *string) chatChunk {
		return chatChunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
			Choices: []chatChunkChoice{{Delta: d, FinishReason: finish}}, Usage: usageNull}
	}
	msg := c.Choices[0].Message
	empty := ""
	chunks = append(chunks, chunk(chatDelta{Role: "assistant", Content: &empty}, nil))
	if msg.Content != nil && *msg.Content != "" {
		for _, s := range sseChunks(*msg.Content) {
			chunks = append(chunks, chunk(chatDelta{Content: &s}, nil))
		}
	}
	for i, tc := range msg.ToolCalls {
		head := tc
		head.Index, head.Function.Arguments = &i, ""
		chunks = append(chunks, chunk(chatDelta{ToolCalls: []chatToolCall{head}}, nil))
		for _, s := range sseChunks(tc.Function.Arguments) {
			chunks = append(chunks, chunk(chatDelta{ToolCalls: []chatToolCall{{Index: &i, Function: chatFunction{Arguments: s}}}}, nil))
		}
	}
	finish = len(chunks)
	reason := c.Choices[0].FinishReason
	chunks = append(chunks, chunk(chatDelta{}, &reason))
	if usageNull != nil {
		last := chunk(chatDelta{}, nil)
		last.Choices = []chatChunkChoice{}
		last.Usage, _ = json.Marshal(c.Usage)
		chunks = append(chunks, last)
	}
	return chunks, finish
}

// chatFinishReason is a reply's stop_reason as a finish_reason.
func chatFinishReason(reply Reply) string {
	switch reply.StopReason {
	case "":
		if len(reply.Tools) > 0 {
			return "tool_calls"
		}
		return "stop"
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return reply.StopReason
}

// chatToolName is the function name a Chat Completions reply calls the
// script's tool name by: the name itself, or, for an MCP tool named as
// Claude Code names it, the spelling the request offers (see
// chatMCPNames), else the first.
func chatToolName(body map[string]any, name string) string {
	server, tool, ok := splitMCPName(name)
	if !ok {
		return name
	}
	names := chatMCPNames(server, tool)
	offered := chatFunctionNames(body)
	for _, n := range names {
		if slices.Contains(offered, n) {
			return n
		}
	}
	return names[0]
}

// maxFunctionName is the longest function name OpenAI accepts.
const maxFunctionName = 64

// chatMCPNames are the names an MCP server's tool is offered under by the
// Chat Completions clients wfb knows: mcp__SERVER__TOOL (Qwen Code), then
// SERVER_TOOL (opencode), each character other than a letter, a digit, '_'
// or '-' made '_', as OpenAI's function names allow, and cut at 64.
func chatMCPNames(server, tool string) []string {
	fn := func(s string) string {
		s = nameChars(s, "_-")
		return s[:min(len(s), maxFunctionName)]
	}
	return []string{fn("mcp__" + server + "__" + tool), fn(nameChars(server, "_-") + "_" + nameChars(tool, "_-"))}
}

// chatFunctionNames are the names of the functions a request offers:
// tools[].function.name.
func chatFunctionNames(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		obj, _ := t.(map[string]any)
		fn, _ := obj["function"].(map[string]any)
		if name, _ := fn["name"].(string); name != "" {
			names = append(names, name)
		}
	}
	return names
}
