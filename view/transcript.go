package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
)

// transcriptView is an attempt's transcript as the page shows it.
type transcriptView struct {
	Raw, Kept int64
	Truncated bool
	Prompt    string
	Problem   string // why it could not be read
	Turns     []turn
}

// turn is one entry of the conversation. Kind is one of prompt, system,
// assistant, thinking, tool-call, tool-result, result, event, raw.
type turn struct {
	Kind  string
	Title string
	Text  string
	JSON  string // a tool call's input, an event's fields, indented
	Usage string // the usage this turn reported
	Error bool
}

// parseTranscript reads an agent's JSON Lines output: Claude Code's
// stream-json (system, assistant, user, result), Codex's --json events
// (thread/turn/item), Gemini CLI's stream-json (init, message, tool_use,
// tool_result, result) and anything else, which is shown as it is.
//
// The page shows at most maxLineShown of one line (a longer line is shown
// as its head, unparsed, saying how much more there was) and stops after
// maxPageShown of text, saying how much of the transcript it left out: a
// 15 MB line made a 35 MB page, at 318 MB of the viewer's memory.
func parseTranscript(b []byte) []turn {
	var turns []turn
	tools := map[string]string{} // tool call id -> tool name
	streaming := false           // the last turn is Gemini assistant text still arriving in deltas
	shown := 0
	for rest := b; len(rest) > 0; {
		if shown > maxPageShown {
			turns = append(turns, turn{Kind: "raw", Title: "not shown",
				Text: fmt.Sprintf("… %d more bytes of the transcript (%d lines) not shown: the page shows about its first %d MiB", len(rest), bytes.Count(rest, []byte("\n"))+1, maxPageShown>>20)})
			break
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(line) > maxLineShown {
			t := turn{Kind: "raw", Title: fmt.Sprintf("a line of %d bytes", len(line)),
				Text: wfb.Clip(string(line[:maxLineShown+1]), maxLineShown) +
					fmt.Sprintf("\n… %d bytes more of this line not shown: the page shows the first %d KiB of a line", len(line)-maxLineShown, maxLineShown>>10)}
			turns, streaming, shown = append(turns, t), false, shown+len(t.Text)
			continue
		}
		var ev map[string]json.RawMessage
		if line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			turns, streaming, shown = append(turns, turn{Kind: "raw", Title: "not JSON", Text: string(line)}), false, shown+len(line)
			continue
		}
		delta := geminiDelta(ev)
		if delta && streaming {
			more := text(ev["content"])
			turns[len(turns)-1].Text += more
			shown += len(more)
			continue
		}
		next := eventTurns(ev, line, tools)
		for _, t := range next {
			shown += len(t.Text) + len(t.JSON)
		}
		turns, streaming = append(turns, next...), delta
	}
	return turns
}

// maxLineShown bounds what the attempt page shows of one transcript line,
// maxPageShown the transcript's text on the page (see parseTranscript).
const (
	maxLineShown = 64 << 10
	maxPageShown = 4 << 20
)

// eventTurns reads one event.
func eventTurns(ev map[string]json.RawMessage, line []byte, tools map[string]string) []turn {
	typ := text(ev["type"])
	switch typ {
	case "assistant", "user":
		return messageTurns(typ, ev["message"], tools)
	case "result":
		if _, gemini := ev["stats"]; gemini || ev["subtype"] == nil && ev["status"] != nil {
			return []turn{geminiResult(ev)}
		}
		return []turn{resultTurn(ev)}
	case "init", "message", "tool_use", "tool_result":
		return []turn{geminiEvent(typ, ev, line, tools)}
	case "system":
		return []turn{{Kind: "system", Title: "system " + text(ev["subtype"]), JSON: indent(line)}}
	case "item.completed":
		return codexItem(ev["item"])
	case "item.started", "item.updated":
		return nil // item.completed repeats it whole
	case "turn.completed":
		return []turn{{Kind: "event", Title: "turn completed", Usage: usage(ev["usage"])}}
	case "turn.failed", "error":
		return []turn{{Kind: "event", Title: typ, JSON: indent(line), Error: true}}
	}
	return []turn{{Kind: "event", Title: typ, JSON: indent(line)}}
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// messageTurns reads a Claude Code message: text, thinking, tool calls
// (remembered by id) and tool results (named by the call they answer). The
// message's usage goes on its first turn.
func messageTurns(role string, raw json.RawMessage, tools map[string]string) []turn {
	var msg struct {
		Content json.RawMessage `json:"content"`
		Usage   json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(raw, &msg) != nil {
		return []turn{{Kind: "event", Title: role, JSON: indent(raw)}}
	}
	var blocks []contentBlock
	if s := text(msg.Content); s != "" {
		blocks = []contentBlock{{Type: "text", Text: s}}
	} else if json.Unmarshal(msg.Content, &blocks) != nil {
		return []turn{{Kind: "event", Title: role, JSON: indent(raw)}}
	}
	var turns []turn
	for _, b := range blocks {
		turns = append(turns, blockTurn(role, b, tools))
	}
	if len(turns) > 0 {
		turns[0].Usage = usage(msg.Usage)
	}
	return turns
}

func blockTurn(role string, b contentBlock, tools map[string]string) turn {
	switch b.Type {
	case "text":
		kind := "assistant"
		if role == "user" {
			kind = "prompt"
		}
		return turn{Kind: kind, Title: role, Text: b.Text}
	case "thinking":
		return turn{Kind: "thinking", Title: "thinking", Text: b.Thinking}
	case "tool_use":
		tools[b.ID] = b.Name
		return turn{Kind: "tool-call", Title: "tool call: " + b.Name, JSON: indent(b.Input)}
	case "tool_result":
		return turn{Kind: "tool-result", Title: "tool result: " + tools[b.ToolUseID], Text: resultText(b.Content), Error: b.IsError}
	}
	return turn{Kind: "event", Title: role + " " + b.Type}
}

// resultText is a tool result's content: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	if s := text(raw); s != "" {
		return s
	}
	var parts []contentBlock
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func resultTurn(ev map[string]json.RawMessage) turn {
	t := turn{Kind: "result", Title: "result " + text(ev["subtype"]), Text: text(ev["result"]), Usage: usage(ev["usage"])}
	t.Error = string(ev["is_error"]) == "true"
	var extra []string
	for _, k := range []string{"num_turns", "total_cost_usd", "duration_ms"} {
		if v, ok := ev[k]; ok {
			extra = append(extra, k+" "+string(v))
		}
	}
	if len(extra) > 0 {
		t.Usage = strings.TrimPrefix(t.Usage+" · "+strings.Join(extra, " · "), " · ")
	}
	return t
}

// codexItem reads a completed Codex item.
func codexItem(raw json.RawMessage) []turn {
	var it struct {
		Type             string          `json:"type"`
		Text             string          `json:"text"`
		Command          string          `json:"command"`
		AggregatedOutput string          `json:"aggregated_output"`
		ExitCode         json.RawMessage `json:"exit_code"`
		Status           string          `json:"status"`
		Message          string          `json:"message"`
	}
	if json.Unmarshal(raw, &it) != nil {
		return []turn{{Kind: "event", Title: "item", JSON: indent(raw)}}
	}
	switch it.Type {
	case "agent_message":
		return []turn{{Kind: "assistant", Title: "assistant", Text: it.Text}}
	case "reasoning":
		return []turn{{Kind: "thinking", Title: "reasoning", Text: it.Text}}
	case "command_execution":
		return []turn{
			{Kind: "tool-call", Title: "tool call: shell", Text: it.Command},
			{Kind: "tool-result", Title: fmt.Sprintf("tool result: shell (%s, exit %s)", it.Status, string(it.ExitCode)),
				Text: it.AggregatedOutput, Error: it.Status == "failed"},
		}
	case "error":
		return []turn{{Kind: "event", Title: "error", Text: it.Message, Error: true}}
	}
	return []turn{{Kind: "tool-call", Title: it.Type, JSON: indent(raw)}}
}

// geminiDelta says the event is a piece of Gemini assistant text that
// continues the one before it.
func geminiDelta(ev map[string]json.RawMessage) bool {
	return text(ev["type"]) == "message" && text(ev["role"]) == "assistant" && string(ev["delta"]) == "true"
}

// geminiEvent reads one of Gemini CLI's stream-json events: the session's
// start, a user or assistant message, a tool call (remembered by id) and
// its result (named by the call it answers).
func geminiEvent(typ string, ev map[string]json.RawMessage, line []byte, tools map[string]string) turn {
	switch typ {
	case "init":
		return turn{Kind: "system", Title: "init " + text(ev["model"]), JSON: indent(line)}
	case "message":
		if role := text(ev["role"]); role == "assistant" {
			return turn{Kind: "assistant", Title: "assistant", Text: text(ev["content"])}
		} else if role == "user" {
			return turn{Kind: "prompt", Title: "user", Text: text(ev["content"])}
		}
	case "tool_use":
		name := text(ev["tool_name"])
		tools[text(ev["tool_id"])] = name
		return turn{Kind: "tool-call", Title: "tool call: " + name, JSON: indent(ev["parameters"])}
	case "tool_result":
		status := text(ev["status"])
		t := turn{Kind: "tool-result", Title: fmt.Sprintf("tool result: %s (%s)", tools[text(ev["tool_id"])], status),
			Text: text(ev["output"]), Error: status != "success"}
		if e := geminiError(ev["error"]); e != "" {
			t.Text = strings.TrimPrefix(t.Text+"\n"+e, "\n")
		}
		return t
	}
	return turn{Kind: "event", Title: typ, JSON: indent(line)}
}

// geminiResult reads Gemini CLI's last event: its status, an error, and
// the session's usage from stats.
func geminiResult(ev map[string]json.RawMessage) turn {
	status := text(ev["status"])
	t := turn{Kind: "result", Title: "result " + status, Text: geminiError(ev["error"]), Error: status != "success"}
	var st map[string]json.RawMessage
	if json.Unmarshal(ev["stats"], &st) == nil {
		var parts []string
		for _, k := range []string{"input_tokens", "cached", "output_tokens", "total_tokens", "tool_calls", "duration_ms"} {
			if v, ok := st[k]; ok {
				parts = append(parts, strings.TrimSuffix(k, "_tokens")+" "+string(v))
			}
		}
		t.Usage = strings.Join(parts, " · ")
	}
	return t
}

// geminiError is an error object's type and message, "" when there is none.
func geminiError(raw json.RawMessage) string {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Type+e.Message == "" {
		return ""
	}
	return strings.TrimSpace(e.Type + ": " + e.Message)
}

// usage summarises a usage object as "name value" pairs.
func usage(raw json.RawMessage) string {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil || len(u) == 0 {
		return ""
	}
	var parts []string
	for _, k := range []string{"input_tokens", "cached_input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"} {
		if v, ok := u[k]; ok {
			parts = append(parts, strings.TrimSuffix(k, "_tokens")+" "+string(v))
		}
	}
	return strings.Join(parts, " · ")
}

// text is a JSON string's value, "" for anything else.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func indent(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
