package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wfbench/wfb"
)

// initEvent is stream-json's first line.
type initEvent struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	CWD            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	MCPServers     []any    `json:"mcp_servers"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	APIKeySource   string   `json:"apiKeySource"`
}

// retryEvent says a request is re-sent after a 529, as Claude Code's
// system/api_retry event does.
type retryEvent struct {
	Type         string `json:"type"`
	Subtype      string `json:"subtype"`
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMS int64  `json:"retry_delay_ms"`
	ErrorStatus  int    `json:"error_status"`
	Error        string `json:"error"`
	SessionID    string `json:"session_id"`
}

// assistantEvent is one model reply in stream-json.
type assistantEvent struct {
	Type            string           `json:"type"`
	Message         assistantMessage `json:"message"`
	ParentToolUseID *string          `json:"parent_tool_use_id"`
	SessionID       string           `json:"session_id"`
}

type assistantMessage struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    []*contentBlock `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      *usageSum       `json:"usage"`
}

// userEvent is one tool result in stream-json.
type userEvent struct {
	Type            string      `json:"type"`
	Message         userMessage `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
}

type userMessage struct {
	Role    string            `json:"role"`
	Content []toolResultBlock `json:"content"`
}

// modelUsage is one entry of modelUsage.
type modelUsage struct {
	InputTokens              json.RawMessage `json:"inputTokens"`
	OutputTokens             json.RawMessage `json:"outputTokens"`
	CacheReadInputTokens     json.RawMessage `json:"cacheReadInputTokens"`
	CacheCreationInputTokens json.RawMessage `json:"cacheCreationInputTokens"`
	CostUSD                  float64         `json:"costUSD"`
}

// result is the final result object, in Claude Code's field order.
type result struct {
	Type              string                `json:"type"`
	Subtype           string                `json:"subtype"`
	IsError           bool                  `json:"is_error"`
	APIErrorStatus    *int                  `json:"api_error_status"`
	DurationMS        int64                 `json:"duration_ms"`
	DurationAPIMS     int64                 `json:"duration_api_ms"`
	NumTurns          int                   `json:"num_turns"`
	Result            *string               `json:"result,omitempty"`
	Errors            []string              `json:"errors,omitempty"`
	SessionID         string                `json:"session_id"`
	TotalCostUSD      *float64              `json:"total_cost_usd,omitempty"`
	Usage             *usageSum             `json:"usage"`
	ModelUsage        map[string]modelUsage `json:"modelUsage,omitempty"`
	PermissionDenials []denial              `json:"permission_denials"`
	TerminalReason    string                `json:"terminal_reason"`
	UUID              string                `json:"uuid"`
}

func (s *session) finishMaxTurns(msg string) int {
	return s.finish("error_max_turns", false, nil, []string{msg}, nil, "max_turns")
}

// finish prints the result and returns the exit code.
func (s *session) finish(subtype string, isError bool, text *string, errs []string, status *int, reason string) int {
	res := result{
		Type:              "result",
		Subtype:           subtype,
		IsError:           isError,
		APIErrorStatus:    status,
		DurationMS:        time.Since(s.start).Milliseconds(),
		DurationAPIMS:     s.apiTime.Milliseconds(),
		NumTurns:          s.turns,
		Result:            text,
		Errors:            errs,
		SessionID:         s.sessionID,
		Usage:             s.usage,
		PermissionDenials: s.denials,
		TerminalReason:    reason,
		UUID:              newUUID(),
	}
	if res.PermissionDenials == nil {
		res.PermissionDenials = []denial{}
	}
	// The agent cannot price what it was not told: no cost unless all four
	// fields are measured integers. A measured zero is priced, at 0.
	if in, out, cr, cw, ok := s.usage.counts(); ok {
		cost := wfb.DollarsOfPico(PriceFor(s.opts.model).Pico(in, out, cr, cw))
		res.TotalCostUSD = &cost
		res.ModelUsage = map[string]modelUsage{s.opts.model: {
			InputTokens:              json.RawMessage(in.String()),
			OutputTokens:             json.RawMessage(out.String()),
			CacheReadInputTokens:     json.RawMessage(cr.String()),
			CacheCreationInputTokens: json.RawMessage(cw.String()),
			CostUSD:                  cost,
		}}
	}
	code := exitOK
	if isError || subtype != "success" {
		code = exitFailed
	}
	switch s.opts.outputFormat {
	case "text":
		msg := strings.Join(errs, "\n")
		if text != nil {
			msg = *text
		}
		fmt.Fprintln(s.out, msg)
	default:
		if err := writeJSON(s.out, res); err != nil {
			fmt.Fprintf(s.errOut, "wfb mock agent: write result: %v\n", err)
			return exitFailed
		}
	}
	return code
}
