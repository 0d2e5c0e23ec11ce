package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// denial is one entry of permission_denials, as Claude Code reports it.
type denial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// session is one run of the agent.
type session struct {
	opts      *options
	cwd       string
	prompt    string
	baseURL   string
	apiKey    string
	sessionID string
	out       io.Writer
	errOut    io.Writer
	client    *http.Client
	start     time.Time
	getenv    func(string) string

	tools    []string // the tools offered, built-in then MCP
	defs     []any    // their definitions, in the same order
	skills   []skill
	mcp      []*mcpServer
	mcpTools map[string]*mcpTool // by the name offered, mcp__SERVER__TOOL

	usage    *usageSum
	turns    int
	apiTime  time.Duration
	denials  []denial
	lastText string
}

// run is the session: model requests, each reply's tools run, until the
// reply asks for none or the turns run out. It returns the exit code.
func (s *session) run(ctx context.Context) int {
	// Every way out of the session closes the MCP sessions, so that no
	// server process outlives the agent.
	defer s.closeMCP()
	s.setUpTools(ctx)
	statuses := []any{}
	for _, srv := range s.mcp {
		statuses = append(statuses, mcpServerStatus{Name: srv.name, Status: srv.status})
	}
	s.emit(initEvent{
		Type:           "system",
		Subtype:        "init",
		CWD:            s.cwd,
		SessionID:      s.sessionID,
		Tools:          s.tools,
		MCPServers:     statuses,
		Model:          s.opts.model,
		PermissionMode: s.opts.permissionMode,
		APIKeySource:   s.apiKeySource(),
	})
	defs := s.defs
	messages := []message{{Role: "user", Content: s.prompt}}
	for {
		s.turns++
		reply, code, done := s.ask(ctx, messages, defs)
		if done {
			return code
		}
		results, cancelled := s.runTools(ctx, reply)
		if cancelled {
			return exitSIGTERM
		}
		switch {
		case len(results) == 0, s.opts.maxTurns <= 1:
			// One-shot by default: the tools of the single reply have run;
			// their results are not sent back.
			text := s.lastText
			return s.finish("success", false, &text, nil, nil, "completed")
		case s.turns >= s.opts.maxTurns:
			// Like Claude Code: errors[] and no result; is_error stays false,
			// so only the subtype says the session failed.
			msg := fmt.Sprintf("Reached maximum number of turns (%d)", s.opts.maxTurns)
			fmt.Fprintln(s.errOut, msg)
			return s.finishMaxTurns(msg)
		}
		messages = append(messages,
			message{Role: "assistant", Content: reply.Content},
			message{Role: "user", Content: results})
	}
}

// ask makes one model request and reports its reply. When the session ends
// here (cancelled, or the request failed), done is true and code is the
// exit code.
func (s *session) ask(ctx context.Context, messages []message, defs []any) (reply *modelReply, code int, done bool) {
	reply, err := s.postRetrying(ctx, &request{
		Model:     s.opts.model,
		MaxTokens: maxTokens,
		System:    []textPart{{Type: "text", Text: s.opts.systemPrompt}},
		Messages:  messages,
		Tools:     defs,
		Metadata:  map[string]any{"user_id": "session_" + s.sessionID},
		Stream:    true,
	})
	if ctx.Err() != nil {
		return nil, exitSIGTERM, true
	}
	var apiErr *apiError
	switch {
	case errors.As(err, &apiErr):
		// Claude Code reports a provider failure as subtype "success"
		// with is_error set; the runner must read is_error.
		text := apiErr.Error()
		status := &apiErr.Status
		if apiErr.Status == 0 {
			status = nil
		}
		fmt.Fprintln(s.errOut, text)
		return nil, s.finish("success", true, &text, nil, status, "api_error"), true
	case err != nil:
		fmt.Fprintf(s.errOut, "wfb mock agent: %v\n", err)
		return nil, s.finish("error_during_execution", true, nil, []string{err.Error()}, nil, "error"), true
	}
	s.usage.add(reply.Usage)
	s.lastText = reply.text()
	replyUsage := newUsageSum()
	replyUsage.add(reply.Usage)
	s.emit(assistantEvent{
		Type: "assistant",
		Message: assistantMessage{
			ID:         reply.ID,
			Type:       "message",
			Role:       "assistant",
			Model:      s.opts.model,
			Content:    reply.Content,
			StopReason: reply.StopReason,
			Usage:      replyUsage,
		},
		SessionID: s.sessionID,
	})
	return reply, exitOK, false
}

// postRetrying sends one model request, and re-sends the same body when
// the provider answers 529 (overloaded), at most s.opts.maxRetries times, after
// retryDelay each time, saying so with a system/api_retry event as Claude
// Code does. Nothing else is retried: another status, a broken stream or
// an unreachable provider ends the session.
func (s *session) postRetrying(ctx context.Context, body *request) (*modelReply, error) {
	for attempt := 1; ; attempt++ {
		began := time.Now()
		reply, err := post(ctx, s.client, s.baseURL, s.apiKey, s.sessionID, body)
		s.apiTime += time.Since(began)
		var apiErr *apiError
		if !errors.As(err, &apiErr) || apiErr.Status != statusOverloaded || attempt > s.opts.maxRetries {
			return reply, err
		}
		s.emit(retryEvent{Type: "system", Subtype: "api_retry", Attempt: attempt, MaxRetries: s.opts.maxRetries,
			RetryDelayMS: retryDelay.Milliseconds(), ErrorStatus: apiErr.Status, Error: apiErr.Error(), SessionID: s.sessionID})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryDelay):
		}
	}
}

// runTools runs the tools the reply asks for, in order, and returns their
// results; cancelled when ctx was cancelled during one, which ends the
// session.
func (s *session) runTools(ctx context.Context, reply *modelReply) (results []any, cancelled bool) {
	for _, b := range reply.Content {
		if b.Type != "tool_use" {
			continue
		}
		r := s.runTool(ctx, b)
		if ctx.Err() != nil {
			return nil, true
		}
		block := toolResultBlock{Type: "tool_result", ToolUseID: b.ID, Content: r.Content, IsError: r.IsError}
		results = append(results, block)
		s.emit(userEvent{
			Type:      "user",
			Message:   userMessage{Role: "user", Content: []toolResultBlock{block}},
			SessionID: s.sessionID,
		})
	}
	return results, false
}

// setUpTools settles the tools offered: the built-in ones --tools names
// (Skill only when there are skills), then the tools of each MCP server
// that connects.
func (s *session) setUpTools(ctx context.Context) {
	s.skills = findSkills(s.getenv("HOME"), s.cwd)
	for _, name := range s.opts.tools {
		switch {
		case name != "Skill":
			s.tools = append(s.tools, name)
			s.defs = append(s.defs, toolDefs[name])
		case len(s.skills) > 0:
			s.tools = append(s.tools, name)
			s.defs = append(s.defs, skillToolDef(s.skills))
		}
	}
	if len(s.opts.mcpServers) == 0 {
		return
	}
	s.mcp = connectMCP(ctx, s.opts.mcpServers, s.cwd, s.getenv, s.errOut)
	s.mcpTools = map[string]*mcpTool{}
	for _, srv := range s.mcp {
		for _, t := range srv.tools {
			name := t.def["name"].(string)
			if _, dup := s.mcpTools[name]; dup {
				continue // two names that normalise alike: the first is kept
			}
			s.mcpTools[name] = t
			s.tools = append(s.tools, name)
			s.defs = append(s.defs, t.def)
		}
	}
}

// closeMCP closes every MCP session at once.
func (s *session) closeMCP() {
	var wg sync.WaitGroup
	for _, srv := range s.mcp {
		wg.Go(srv.close)
	}
	wg.Wait()
}

func (s *session) apiKeySource() string {
	if s.apiKey != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// runTool checks the tool call against the offered tools and the permission
// rules, then runs it. A refusal is a tool error, and a denial by rule is
// also listed in permission_denials.
func (s *session) runTool(ctx context.Context, b *contentBlock) toolResult {
	if !slices.Contains(s.tools, b.Name) {
		return toolError("Error: No such tool available: %s", b.Name)
	}
	if reason := s.denied(b); reason != "" {
		s.denials = append(s.denials, denial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: b.Input})
		return toolError("%s", reason)
	}
	if t := s.mcpTools[b.Name]; t != nil {
		return t.call(ctx, b.Input, envDuration(s.getenv, "MCP_TOOL_TIMEOUT", mcpCallTimeout))
	}
	if b.Name == "Skill" {
		return skillTool(s.skills, b.Input)
	}
	return execTool(ctx, s.cwd, b.Name, b.Input)
}

// denied returns why the permission flags refuse this call, or "".
func (s *session) denied(b *contentBlock) string {
	refused := fmt.Sprintf("Permission to use %s has been denied.", b.Name)
	for _, rule := range s.opts.disallowed {
		if ruleMatches(rule, b.Name, b.Input) {
			return refused
		}
	}
	if len(s.opts.allowed) > 0 && !slices.ContainsFunc(s.opts.allowed, func(rule string) bool {
		return ruleMatches(rule, b.Name, b.Input)
	}) {
		return refused
	}
	switch s.opts.permissionMode {
	case "plan":
		if b.Name != "Read" && b.Name != "Skill" {
			return refused + " (plan mode runs no tool that changes anything)"
		}
	case "acceptEdits":
		// Claude Code under acceptEdits denies writes outside the working
		// directory and the --add-dir directories; a runner that forgets
		// --add-dir for an artifact directory must see that here too.
		if b.Name == "Write" {
			var in struct {
				FilePath string `json:"file_path"`
			}
			_ = json.Unmarshal(b.Input, &in)
			if in.FilePath != "" && !s.writableUnderAcceptEdits(resolve(s.cwd, in.FilePath)) {
				return refused + " (outside the working directory and --add-dir)"
			}
		}
	}
	return ""
}

func (s *session) writableUnderAcceptEdits(path string) bool {
	for _, dir := range append([]string{s.cwd}, s.opts.addDirs...) {
		rel, err := filepath.Rel(resolve(s.cwd, dir), path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// ruleMatches says whether a permission rule ("Write", "Bash",
// "Bash(git log:*)", "Bash(make test)", "Skill(pdf)") covers a tool call.
// An MCP tool mcp__S__T is covered, as in Claude Code, by "mcp__S" and
// "mcp__S__*" (every tool of server S) and by "mcp__S__T".
func ruleMatches(rule, tool string, input json.RawMessage) bool {
	if strings.HasPrefix(rule, "mcp__") {
		server := strings.TrimSuffix(rule, "__*")
		if !strings.Contains(strings.TrimPrefix(server, "mcp__"), "__") {
			return strings.HasPrefix(tool, server+"__")
		}
		return rule == tool
	}
	name, spec, hasSpec := strings.Cut(rule, "(")
	if name != tool {
		return false
	}
	if !hasSpec {
		return true
	}
	spec = strings.TrimSuffix(spec, ")")
	var target string
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Skill    string `json:"skill"`
	}
	_ = json.Unmarshal(input, &in)
	switch tool {
	case "Bash":
		target = in.Command
	case "Skill":
		target = in.Skill
	default:
		target = in.FilePath
	}
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		return strings.HasPrefix(target, prefix)
	}
	if prefix, ok := strings.CutSuffix(spec, "*"); ok {
		return strings.HasPrefix(target, prefix)
	}
	return target == spec
}

// emit writes one stream-json line (only in stream-json mode).
func (s *session) emit(v any) {
	if s.opts.outputFormat != "stream-json" {
		return
	}
	if err := writeJSON(s.out, v); err != nil {
		fmt.Fprintf(s.errOut, "wfb mock agent: write output: %v\n", err)
	}
}

// writeJSON writes v as one line of JSON, without HTML escaping so
// that the output reads like Claude Code's.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
