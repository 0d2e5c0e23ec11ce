package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// wireBlock is an Anthropic content block as it arrives.
type wireBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// wireMessage is an Anthropic Message as it arrives.
type wireMessage struct {
	Content    []wireBlock     `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      json.RawMessage `json:"usage"`
}

func (rec *recorder) messagesObject(body []byte) error {
	var m wireMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("the response is not a Message: %v", err)
	}
	for _, b := range m.Content {
		if err := rec.block(b); err != nil {
			return err
		}
	}
	rec.stop, rec.usage, rec.complete = m.StopReason, rec.usageOf(m.Usage), true
	return nil
}

func (rec *recorder) block(b wireBlock) error {
	switch b.Type {
	case "text":
		rec.addText(b.Text)
	case "tool_use":
		return rec.addTool(b.Name, b.Input)
	default:
		rec.note("a %s block is not served", b.Type)
	}
	return nil
}

// streamEvent is the union of the Messages stream's event payloads.
type streamEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      wireMessage     `json:"message"`
	ContentBlock wireBlock       `json:"content_block"`
	Usage        json.RawMessage `json:"usage"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
}

// messagesStream assembles a Messages stream: the usage of message_start,
// overridden field by field by message_delta's, as clients read it.
func (rec *recorder) messagesStream(body []byte) error {
	blocks := map[int]*wireBlock{}
	var order []int
	var usage map[string]json.RawMessage
	for _, data := range sseEvents(body) {
		var ev streamEvent
		if json.Unmarshal(data, &ev) != nil {
			continue // ping payloads and the like
		}
		rec.events++
		switch ev.Type {
		case "message_start":
			usage = mergeUsage(usage, ev.Message.Usage)
		case "content_block_start":
			b := ev.ContentBlock
			b.Input = nil // input arrives in deltas
			blocks[ev.Index] = &b
			order = append(order, ev.Index)
		case "content_block_delta":
			if b := blocks[ev.Index]; b != nil {
				b.Text += ev.Delta.Text
				b.Input = append(b.Input, ev.Delta.PartialJSON...)
			}
		case "message_delta":
			rec.stop = ev.Delta.StopReason
			usage = mergeUsage(usage, ev.Usage)
		case "message_stop":
			rec.complete = true
		}
	}
	for _, i := range order {
		if err := rec.block(*blocks[i]); err != nil {
			return err
		}
	}
	if usage != nil {
		raw, _ := json.Marshal(usage)
		rec.usage = rec.usageOf(raw)
	}
	return nil
}

func mergeUsage(into map[string]json.RawMessage, raw json.RawMessage) map[string]json.RawMessage {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil || u == nil {
		return into
	}
	if into == nil {
		into = map[string]json.RawMessage{}
	}
	for k, v := range u {
		into[k] = v
	}
	return into
}

// respWireItem is a Responses output item as it arrives.
type respWireItem struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// respWire is a Responses response object as it arrives.
type respWire struct {
	Output []respWireItem   `json:"output"`
	Usage  *json.RawMessage `json:"usage"`
}

func (rec *recorder) responsesObject(body []byte) error {
	var r respWire
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("the response is not a Responses object: %v", err)
	}
	rec.complete = true
	return rec.response(r)
}

func (rec *recorder) response(r respWire) error {
	for _, it := range r.Output {
		if err := rec.item(it); err != nil {
			return err
		}
	}
	if r.Usage != nil {
		rec.openAIUsage(*r.Usage, responsesUsageNames)
	}
	return nil
}

func (rec *recorder) item(it respWireItem) error {
	switch it.Type {
	case "message":
		for _, c := range it.Content {
			if c.Type == "output_text" {
				rec.addText(c.Text)
			}
		}
	case "function_call":
		return rec.addTool(it.Name, json.RawMessage(it.Arguments))
	case "custom_tool_call":
		rec.tools = append(rec.tools, Tool{Name: it.Name, Input: map[string]any{"input": it.Input}})
	default:
		rec.note("a %s item is not served", it.Type)
	}
	return nil
}

// openAIUsage reads an OpenAI usage object whose names are n (the
// Responses API's or Chat Completions') back into the script's (Anthropic)
// fields, the inverse of openAIUsage's translation: input = prompt -
// cached_tokens and cache_read = cached_tokens when both are whole numbers
// (else each verbatim), output verbatim, reasoning verbatim. The provider
// recomputes total_tokens.
func (rec *recorder) openAIUsage(raw json.RawMessage, n openAIUsageNames) {
	var w map[string]json.RawMessage
	if json.Unmarshal(raw, &w) != nil || w == nil {
		rec.note("the usage is not an object: %.60s; served without usage", raw)
		return
	}
	val := func(r json.RawMessage) any {
		if len(r) == 0 {
			return nil
		}
		var v any
		decodeVerbatim(r, &v)
		return wholeNumbers(v)
	}
	detail := func(obj, name string) any {
		var d map[string]json.RawMessage
		if json.Unmarshal(w[obj], &d) != nil {
			return nil
		}
		return val(d[name])
	}
	in, out := val(w[n.input]), val(w[n.output])
	cached := detail(n.inputDetails, "cached_tokens")
	rec.reasoning = detail(n.outputDetails, "reasoning_tokens")
	i, iok := in.(int64)
	c, cok := cached.(int64)
	if iok && cok {
		in = i - c
	}
	u := Usage{}
	for k, v := range map[string]any{"input_tokens": in, "output_tokens": out, "cache_read_input_tokens": cached} {
		if v != nil {
			u[k] = v
		}
	}
	rec.usage = u
}

// responsesStream reads a Responses stream: the response of its final
// event (response.completed), else the output items that were done before
// it broke off.
func (rec *recorder) responsesStream(body []byte) error {
	var items []respWireItem
	for _, data := range sseEvents(body) {
		var ev struct {
			Type     string       `json:"type"`
			Item     respWireItem `json:"item"`
			Response respWire     `json:"response"`
		}
		if json.Unmarshal(data, &ev) != nil {
			continue
		}
		rec.events++
		switch ev.Type {
		case "response.output_item.done":
			items = append(items, ev.Item)
		case "response.completed":
			rec.complete = true
			if len(ev.Response.Output) == 0 {
				ev.Response.Output = items
			}
			return rec.response(ev.Response)
		}
	}
	return rec.response(respWire{Output: items})
}

// chatWireCall is a Chat Completions tool call, or a stream's delta of one.
type chatWireCall struct {
	Index    int `json:"index"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatWireMessage is an assistant message, or a stream's delta of one.
type chatWireMessage struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	ToolCalls        []chatWireCall  `json:"tool_calls"`
}

// chatWire is a chat.completion object or a stream's chunk, as it arrives.
type chatWire struct {
	Choices []struct {
		Index        int             `json:"index"`
		Message      chatWireMessage `json:"message"`
		Delta        chatWireMessage `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage  `json:"usage"`
	Error *json.RawMessage `json:"error"`
}

func (rec *recorder) chatObject(body []byte) error {
	var c chatWire
	if err := json.Unmarshal(body, &c); err != nil {
		return fmt.Errorf("the response is not a chat.completion: %v", err)
	}
	rec.complete = true
	var calls []chatWireCall
	var text *string
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			rec.note("choice %d is not served (a script answers with one)", ch.Index)
			continue
		}
		text = rec.chatContent(ch.Message, text)
		calls = ch.Message.ToolCalls
		if ch.FinishReason != nil {
			rec.stop = chatStopReason(*ch.FinishReason)
		}
	}
	return rec.chatReply(text, calls, c.Usage)
}

// chatContent adds what m says to the text so far (nil: none yet), noting
// what a script cannot serve.
func (rec *recorder) chatContent(m chatWireMessage, text *string) *string {
	if r := bytes.TrimSpace(m.ReasoningContent); len(r) > 0 && string(r) != "null" && string(r) != `""` {
		rec.note("reasoning_content is not served")
	}
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return text
	}
	var s string
	if json.Unmarshal(m.Content, &s) != nil {
		rec.note("content that is not a string is not served: %.60s", m.Content)
		return text
	}
	if text != nil {
		s = *text + s
	}
	return &s
}

// chatReply sets the reply's text, tool calls (in index order) and usage.
func (rec *recorder) chatReply(text *string, calls []chatWireCall, usage json.RawMessage) error {
	if text != nil {
		rec.addText(*text)
	}
	slices.SortStableFunc(calls, func(a, b chatWireCall) int { return a.Index - b.Index })
	for _, c := range calls {
		if err := rec.addTool(c.Function.Name, json.RawMessage(c.Function.Arguments)); err != nil {
			return err
		}
	}
	if u := bytes.TrimSpace(usage); len(u) > 0 && string(u) != "null" {
		rec.openAIUsage(u, chatUsageNames)
	}
	return nil
}

// chatStream assembles a Chat Completions stream as its clients do: the
// content deltas joined, each tool call's arguments joined by its index,
// the finish_reason, and the usage of the chunk that carries one. It is
// complete when data: [DONE] came.
func (rec *recorder) chatStream(body []byte) error {
	var text *string
	byIndex := map[int]*chatWireCall{}
	var usage json.RawMessage
	for _, data := range sseEvents(body) {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			rec.complete = true
			continue
		}
		var c chatWire
		if json.Unmarshal(data, &c) != nil {
			continue
		}
		rec.events++
		if c.Error != nil {
			rec.note("an error inside the stream is not served: %.60s", *c.Error)
		}
		if u := bytes.TrimSpace(c.Usage); len(u) > 0 && string(u) != "null" {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			text = rec.chatContent(ch.Delta, text)
			for _, d := range ch.Delta.ToolCalls {
				call := byIndex[d.Index]
				if call == nil {
					call = &chatWireCall{Index: d.Index}
					byIndex[d.Index] = call
				}
				if call.Function.Name == "" {
					call.Function.Name = d.Function.Name
				}
				call.Function.Arguments += d.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				rec.stop = chatStopReason(*ch.FinishReason)
			}
		}
	}
	var calls []chatWireCall
	for _, c := range byIndex {
		calls = append(calls, *c)
	}
	return rec.chatReply(text, calls, usage)
}

// chatStopReason is a finish_reason as a script's stop_reason, the
// inverse of chatFinishReason.
func chatStopReason(finish string) string {
	switch finish {
	case "stop":
		return "end_turn"
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return finish
}
