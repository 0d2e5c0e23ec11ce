package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// serveMessages answers a Messages API request with reply: an error, a
// Message, or its stream, adding to note what the log should say. A
// scripted cut aborts the handler.
func serveMessages(w http.ResponseWriter, reply Reply, id string, body map[string]any, stream bool, note *string) {
	if reply.Status != 0 && (reply.Status < 200 || reply.Status > 299) {
		obj := reply.Error
		if len(obj) == 0 {
			obj = defaultError(reply.Status)
		}
		writeError(w, reply.Status, obj)
		return
	}
	status := http.StatusOK
	if reply.Status != 0 {
		status = reply.Status
	}
	model, _ := body["model"].(string)
	if model == "" {
		model = "claude-mock"
	}
	msg := buildMessage(reply, id, model)
	// Encoding first also proves a stream's events will encode: a Go-built
	// script can hold values JSON cannot carry.
	out, err := json.Marshal(msg)
	if err != nil {
		*note += " unencodable reply"
		writeError(w, http.StatusInternalServerError, errorObject("api_error", "mock provider: "+err.Error()))
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
		return
	}
	sent, err := sseWriteMessage(w, status, msg, reply.CutAfterEvents)
	if errors.Is(err, errSSECut) {
		*note += fmt.Sprintf(" cut after %d events", sent)
		if reply.CutCleanly {
			return
		}
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		*note += " " + err.Error()
	}
}

// defaultError is the error object for a scripted failure status that
// has none, named the way the Anthropic API names them.
func defaultError(status int) json.RawMessage {
	kind, msg := "api_error", "Internal server error"
	switch {
	case status == 400:
		kind, msg = "invalid_request_error", "Invalid request"
	case status == 401:
		kind, msg = "authentication_error", "Invalid API key"
	case status == 402:
		kind, msg = "billing_error", "Billing error"
	case status == 403:
		kind, msg = "permission_error", "Permission denied"
	case status == 404:
		kind, msg = "not_found_error", "Not found"
	case status == 413:
		kind, msg = "request_too_large", "Request too large"
	case status == 429:
		kind, msg = "rate_limit_error", "Rate limited"
	case status == 529:
		kind, msg = "overloaded_error", "Overloaded"
	case status >= 400 && status < 500:
		kind, msg = "invalid_request_error", http.StatusText(status)
	case status >= 500:
		kind, msg = "api_error", http.StatusText(status)
	default:
		msg = fmt.Sprintf("scripted status %d", status)
	}
	return errorObject(kind, msg)
}

func errorObject(kind, message string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"type": kind, "message": message})
	return out
}

func writeError(w http.ResponseWriter, status int, obj json.RawMessage) {
	var b bytes.Buffer
	b.WriteString(`{"type":"error","error":`)
	b.Write(obj)
	b.WriteString("}")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// anthropicMessage is an Anthropic Message; the struct fixes the field order.
type anthropicMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []contentBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

// contentBlock is a content block: text or tool_use.
type contentBlock struct {
	Type  string  `json:"type"`
	Text  *string `json:"text,omitempty"`
	ID    string  `json:"id,omitempty"`
	Name  string  `json:"name,omitempty"`
	Input any     `json:"input,omitempty"`
}

func buildMessage(reply Reply, id, model string) anthropicMessage {
	msg := anthropicMessage{
		ID:    "msg_mock_" + id,
		Type:  "message",
		Role:  "assistant",
		Model: model,
		Usage: wireUsage(reply.Usage, nil),
	}
	// A turn always has a block: a reply with neither text nor tools is an
	// empty text block, as the API sends for an empty answer.
	if reply.Text != "" || len(reply.Tools) == 0 {
		text := reply.Text
		msg.Content = append(msg.Content, contentBlock{Type: "text", Text: &text})
	}
	for i, t := range reply.Tools {
		input := t.Input
		if input == nil {
			input = map[string]any{}
		}
		msg.Content = append(msg.Content, contentBlock{
			Type:  "tool_use",
			ID:    fmt.Sprintf("toolu_mock_%s_%d", id, i+1),
			Name:  t.Name,
			Input: input,
		})
	}
	stop := reply.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(reply.Tools) > 0 {
			stop = "tool_use"
		}
	}
	msg.StopReason = &stop
	return msg
}

// wireUsage copies the usage fields that are present (non-nil), keeping
// only the names in keep when keep is non-nil. Never nil: the wire always
// has a usage object, possibly empty.
func wireUsage(u Usage, keep []string) Usage {
	out := Usage{}
	for k, v := range u {
		if v == nil || (keep != nil && !slices.Contains(keep, k)) {
			continue
		}
		out[k] = v
	}
	return out
}
