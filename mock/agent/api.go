package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/wfbench/wfb"
)

// anthropicVersion is the API version header Claude Code sends.
const anthropicVersion = "2023-06-01"

// maxEventBytes bounds one SSE line; a longer one is a malformed stream.
const maxEventBytes = 16 << 20

// maxReplyBytes bounds one reply, streamed or not: the agent holds it
// whole (its events' data, its text), and the provider decides its size.
// A model's reply is one turn's output: a few hundred KB at most.
const maxReplyBytes = 16 << 20

// errReplyTooLarge says a reply went past maxReplyBytes.
var errReplyTooLarge = fmt.Errorf("the provider's reply exceeds %d MiB; the rest was not read", maxReplyBytes>>20)

// cappedReader reads r up to left bytes, then fails with errReplyTooLarge
// if r has more.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, errReplyTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// contentBlock is one content block of a model reply.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	partial strings.Builder // input_json_delta fragments, joined at block stop
}

// MarshalJSON writes a text block with its text even when empty, and a
// tool_use block with its input.
func (b *contentBlock) MarshalJSON() ([]byte, error) {
	if b.Type == "tool_use" {
		input := b.Input
		if input == nil {
			input = json.RawMessage("{}")
		}
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{b.Type, b.Text})
}

// modelReply is one model reply as the agent understood it.
type modelReply struct {
	ID         string
	Model      string
	Content    []*contentBlock
	StopReason string
	// Usage is the reply's usage, raw: message_start's fields overridden by
	// message_delta's (the latter is cumulative in the Messages API).
	Usage map[string]json.RawMessage
}

// text joins the reply's text blocks.
func (r *modelReply) text() string {
	var parts []string
	for _, b := range r.Content {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// apiError is a failure the provider stated: an HTTP error status, or
// an error event inside the stream (Status 0).
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string {
	if e.Status == 0 {
		return "API Error: " + e.Body
	}
	return fmt.Sprintf("API Error: %d %s", e.Status, e.Body)
}

// request is the body the agent posts, shaped like Claude Code's.
type request struct {
	Model     string         `json:"model"`
	MaxTokens int            `json:"max_tokens"`
	System    []textPart     `json:"system,omitempty"`
	Messages  []message      `json:"messages"`
	Tools     []any          `json:"tools,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Stream    bool           `json:"stream"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// message is one entry of messages; Content is a string for the
// prompt (as the seed's tests read it) and a block list otherwise.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// toolResultBlock is a tool_result content block.
type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// post sends one model request and reads the reply. It returns an
// *apiError when the provider said no, and another error when the
// exchange itself failed (transport, a stream cut short, malformed data).
func post(ctx context.Context, client *http.Client, baseURL, apiKey, sessionID string, body *request) (*modelReply, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	url := strings.TrimRight(baseURL, "/") + "/v1/messages"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request to ANTHROPIC_BASE_URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("anthropic-version", anthropicVersion)
	req.Header.Set("User-Agent", "wfb-stand-in-agent")
	req.Header.Set("X-Claude-Code-Session-Id", sessionID)
	if apiKey != "" {
		req.Header.Set("x-api-key", apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("request to provider failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &apiError{Status: resp.StatusCode, Body: compact(raw)}
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	reply := &cappedReader{r: resp.Body, left: maxReplyBytes}
	if mediaType == "application/json" {
		return decodeMessage(reply)
	}
	return readStream(reply)
}

// compact returns raw as compact JSON when it is JSON, else as trimmed
// text, bounded either way.
func compact(raw []byte) string {
	var b bytes.Buffer
	s := strings.TrimSpace(string(raw))
	if json.Compact(&b, raw) == nil {
		s = b.String()
	}
	return wfb.Clip(s, 2000)
}

// wireMessage is a Message object as the API serves it.
type wireMessage struct {
	ID         string                     `json:"id"`
	Model      string                     `json:"model"`
	Content    []json.RawMessage          `json:"content"`
	StopReason string                     `json:"stop_reason"`
	Usage      map[string]json.RawMessage `json:"usage"`
}

// decodeMessage reads a non-streamed Message.
func decodeMessage(r io.Reader) (*modelReply, error) {
	var m wireMessage
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("malformed reply from provider: %w", err)
	}
	reply := &modelReply{ID: m.ID, Model: m.Model, StopReason: m.StopReason, Usage: map[string]json.RawMessage{}}
	mergeUsage(reply.Usage, m.Usage)
	for i, raw := range m.Content {
		var b struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("malformed reply from provider: content[%d]: %w", i, err)
		}
		reply.Content = append(reply.Content, &contentBlock{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input})
	}
	return reply, nil
}

func mergeUsage(dst, src map[string]json.RawMessage) {
	for k, v := range src {
		dst[k] = v
	}
}

// streamEvent is the union of the SSE data payloads the agent reads.
type streamEvent struct {
	Type    string       `json:"type"`
	Message *wireMessage `json:"message"`
	Index   *int         `json:"index"`
	Block   *struct {
		Type string `json:"type"`
		Text string `json:"text"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage map[string]json.RawMessage `json:"usage"`
}

// errStreamCut says the stream ended before message_stop.
var errStreamCut = errors.New("the provider's stream ended before message_stop: the reply is incomplete")

// readStream reads a Messages SSE stream into a reply. Tool input is
// taken only from input_json_delta fragments, as Claude Code does (input
// placed in content_block_start is ignored), so a provider that streams it
// wrongly is caught here rather than by the real agent later.
func readStream(r io.Reader) (*modelReply, error) {
	sr := &streamReader{reply: &modelReply{Usage: map[string]json.RawMessage{}}, blocks: map[int]*contentBlock{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEventBytes)
	var event string
	var data strings.Builder
	dispatch := func() error {
		defer func() { event = ""; data.Reset() }()
		return sr.dispatch(event, data.String())
	}
	for !sr.stopped && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if err := dispatch(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(line, ":"):
			// A comment (keep-alive).
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	// A read that failed left a cut line behind: the stream's end, not a
	// malformed event.
	if err := sc.Err(); err != nil {
		return sr.finish(err)
	}
	if !sr.stopped {
		if err := dispatch(); err != nil {
			return nil, err
		}
	}
	return sr.finish(nil)
}

// streamReader assembles a reply from a stream's events.
type streamReader struct {
	reply   *modelReply
	blocks  map[int]*contentBlock // by index
	events  int                   // events received
	stopped bool                  // message_stop was received
}

// dispatch handles one event: its name and its data lines joined; data ""
// is no event.
func (sr *streamReader) dispatch(event, data string) error {
	if data == "" {
		return nil
	}
	sr.events++
	var ev streamEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return fmt.Errorf("malformed stream event %d (%s) from provider: %w", sr.events, event, err)
	}
	kind := ev.Type
	if kind == "" {
		kind = event
	}
	switch kind {
	case "message_start":
		if ev.Message != nil {
			sr.reply.ID, sr.reply.Model = ev.Message.ID, ev.Message.Model
			mergeUsage(sr.reply.Usage, ev.Message.Usage)
		}
	case "content_block_start":
		return sr.blockStart(&ev)
	case "content_block_delta":
		return sr.blockDelta(&ev)
	case "content_block_stop":
		return sr.blockStop(&ev)
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			sr.reply.StopReason = ev.Delta.StopReason
		}
		mergeUsage(sr.reply.Usage, ev.Usage)
	case "message_stop":
		sr.stopped = true
	case "error":
		return &apiError{Body: compact([]byte(data))}
	}
	return nil
}

func (sr *streamReader) blockStart(ev *streamEvent) error {
	if ev.Index == nil || ev.Block == nil {
		return fmt.Errorf("malformed stream event %d: content_block_start without index or content_block", sr.events)
	}
	b := &contentBlock{Type: ev.Block.Type, Text: ev.Block.Text, ID: ev.Block.ID, Name: ev.Block.Name}
	sr.blocks[*ev.Index] = b
	sr.reply.Content = append(sr.reply.Content, b)
	return nil
}

func (sr *streamReader) blockDelta(ev *streamEvent) error {
	if ev.Index == nil || ev.Delta == nil || sr.blocks[*ev.Index] == nil {
		return fmt.Errorf("malformed stream event %d: content_block_delta for a block that was not started", sr.events)
	}
	b := sr.blocks[*ev.Index]
	switch ev.Delta.Type {
	case "text_delta":
		b.Text += ev.Delta.Text
	case "input_json_delta":
		b.partial.WriteString(ev.Delta.PartialJSON)
	}
	return nil
}

// blockStop ends a block; a tool_use block's input is its fragments joined,
// which must be JSON.
func (sr *streamReader) blockStop(ev *streamEvent) error {
	if ev.Index == nil || sr.blocks[*ev.Index] == nil {
		return fmt.Errorf("malformed stream event %d: content_block_stop for a block that was not started", sr.events)
	}
	b := sr.blocks[*ev.Index]
	if b.Type != "tool_use" {
		return nil
	}
	input := strings.TrimSpace(b.partial.String())
	if input == "" {
		input = "{}"
	}
	if !json.Valid([]byte(input)) {
		return fmt.Errorf("malformed tool input for %s (block %d) from provider: %q", b.Name, *ev.Index, input)
	}
	b.Input = json.RawMessage(input)
	return nil
}

// finish returns the reply once the stream has ended, scanErr being why it
// ended early, if it did: a reply that never reached message_stop, or with
// a tool_use block never stopped, is incomplete.
func (sr *streamReader) finish(scanErr error) (*modelReply, error) {
	if scanErr != nil {
		// A dropped connection: say what it means for the reply, and why.
		return nil, fmt.Errorf("%w (%d events received): %w", errStreamCut, sr.events, scanErr)
	}
	if !sr.stopped {
		return nil, fmt.Errorf("%w (%d events received)", errStreamCut, sr.events)
	}
	for _, b := range sr.reply.Content {
		if b.Type == "tool_use" && b.Input == nil {
			return nil, fmt.Errorf("malformed stream from provider: tool_use block %s was never stopped", b.Name)
		}
	}
	return sr.reply, nil
}
