package provider

import (
	"encoding/json"
	"fmt"
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
		rec.respUsage(*r.Usage)
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

// respUsage reads a Responses usage object back into the script's
// (Anthropic) fields, the inverse of respUsage's translation: input =
// input_tokens - cached_tokens and cache_read = cached_tokens when both
// are whole numbers (else each verbatim), output verbatim, reasoning
// verbatim. The provider recomputes total_tokens.
func (rec *recorder) respUsage(raw json.RawMessage) {
	var w struct {
		Input  *json.RawMessage `json:"input_tokens"`
		Output *json.RawMessage `json:"output_tokens"`
		InDet  *struct {
			Cached *json.RawMessage `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutDet *struct {
			Reasoning *json.RawMessage `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	}
	if json.Unmarshal(raw, &w) != nil {
		rec.note("the usage is not an object: %.60s; served without usage", raw)
		return
	}
	u := Usage{}
	val := func(r *json.RawMessage) any {
		if r == nil {
			return nil
		}
		var v any
		decodeVerbatim(*r, &v)
		return wholeNumbers(v)
	}
	in, out := val(w.Input), val(w.Output)
	var cached any
	if w.InDet != nil {
		cached = val(w.InDet.Cached)
	}
	if w.OutDet != nil {
		rec.reasoning = val(w.OutDet.Reasoning)
	}
	i, iok := in.(int64)
	c, cok := cached.(int64)
	if iok && cok {
		in = i - c
	}
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
