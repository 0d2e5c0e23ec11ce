package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// errSSECut says a stream was stopped on purpose by cut_after_events.
var errSSECut = errors.New("stream cut as scripted")

// sseWriter writes server-sent events, flushing each so that a client sees
// it at once, and stops after limit events when limit > 0.
type sseWriter struct {
	w     http.ResponseWriter
	sent  int
	limit int
}

// event writes data, JSON-encoded, as an event named name; "" writes a
// data: line alone, as Chat Completions streams do.
func (s *sseWriter) event(name string, data any) error {
	if s.limit > 0 && s.sent >= s.limit {
		return errSSECut
	}
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	return s.write(name, payload)
}

// write writes one event whose data is payload as it is, counted against
// the limit like any other.
func (s *sseWriter) write(name string, payload []byte) error {
	if s.limit > 0 && s.sent >= s.limit {
		return errSSECut
	}
	buf := make([]byte, 0, len(payload)+len(name)+16)
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, payload...)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	s.sent++
	return nil
}

// sseStartUsage are the usage fields message_start carries; output tokens
// are only known at the end, in message_delta.
var sseStartUsage = []string{"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}

// sseWriteMessage streams msg as the Messages API does: message_start, then
// start/delta/stop per content block, message_delta with the stop reason and
// the full usage, message_stop. With cutAfter > 0 it stops after that many
// events — never reaching message_stop — and returns errSSECut.
func sseWriteMessage(w http.ResponseWriter, status int, msg anthropicMessage, cutAfter int) (int, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	s := &sseWriter{w: w, limit: cutAfter}
	if cutAfter > 0 {
		// Count this stream's events: the cut must land before message_stop.
		total := 3 // message_start, message_delta, message_stop
		for _, b := range msg.Content {
			total += 2 + len(sseChunks(sseBlockPayload(b)))
		}
		s.limit = min(s.limit, total-1)
	}
	if err := sseWriteEvents(s, msg); err != nil {
		return s.sent, err
	}
	return s.sent, nil
}

// The event payloads are structs so that "type" comes first, as the API
// sends it.
type (
	sseMessageStart struct {
		Type    string           `json:"type"`
		Message anthropicMessage `json:"message"`
	}
	sseBlockStart struct {
		Type         string       `json:"type"`
		Index        int          `json:"index"`
		ContentBlock contentBlock `json:"content_block"`
	}
	sseDelta struct {
		Type        string  `json:"type"`
		Text        *string `json:"text,omitempty"`
		PartialJSON *string `json:"partial_json,omitempty"`
	}
	sseBlockDelta struct {
		Type  string   `json:"type"`
		Index int      `json:"index"`
		Delta sseDelta `json:"delta"`
	}
	sseBlockStop struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	sseStop struct {
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	sseMessageDelta struct {
		Type  string  `json:"type"`
		Delta sseStop `json:"delta"`
		Usage Usage   `json:"usage"`
	}
	sseMessageStop struct {
		Type string `json:"type"`
	}
)

func sseWriteEvents(s *sseWriter, msg anthropicMessage) error {
	start := msg
	start.Content = []contentBlock{}
	start.StopReason = nil
	start.Usage = wireUsage(msg.Usage, sseStartUsage)
	if err := s.event("message_start", sseMessageStart{Type: "message_start", Message: start}); err != nil {
		return err
	}
	for i, b := range msg.Content {
		open := b
		switch b.Type {
		case "text":
			empty := ""
			open.Text = &empty
		case "tool_use":
			// Input arrives only through input_json_delta; clients ignore
			// an input placed in content_block_start.
			open.Input = map[string]any{}
		}
		if err := s.event("content_block_start", sseBlockStart{Type: "content_block_start", Index: i, ContentBlock: open}); err != nil {
			return err
		}
		for _, chunk := range sseChunks(sseBlockPayload(b)) {
			d := sseDelta{Type: "text_delta", Text: &chunk}
			if b.Type == "tool_use" {
				d = sseDelta{Type: "input_json_delta", PartialJSON: &chunk}
			}
			if err := s.event("content_block_delta", sseBlockDelta{Type: "content_block_delta", Index: i, Delta: d}); err != nil {
				return err
			}
		}
		if err := s.event("content_block_stop", sseBlockStop{Type: "content_block_stop", Index: i}); err != nil {
			return err
		}
	}
	if err := s.event("message_delta", sseMessageDelta{
		Type:  "message_delta",
		Delta: sseStop{StopReason: msg.StopReason},
		Usage: msg.Usage,
	}); err != nil {
		return err
	}
	return s.event("message_stop", sseMessageStop{Type: "message_stop"})
}

// sseBlockPayload is what a block's deltas spell out: its text, or its
// input as JSON.
func sseBlockPayload(b contentBlock) string {
	if b.Type == "text" {
		if b.Text == nil {
			return ""
		}
		return *b.Text
	}
	out, err := json.Marshal(b.Input)
	if err != nil {
		return "{}"
	}
	return string(out)
}

// sseChunks splits s in two at a rune boundary, so that clients are made
// to join deltas rather than trust the first one.
func sseChunks(s string) []string {
	if utf8.RuneCountInString(s) < 2 {
		return []string{s}
	}
	mid := len(s) / 2
	for !utf8.RuneStart(s[mid]) {
		mid--
	}
	if mid == 0 {
		mid = len(s) / 2
		for mid < len(s) && !utf8.RuneStart(s[mid]) {
			mid++
		}
	}
	return []string{s[:mid], s[mid:]}
}
