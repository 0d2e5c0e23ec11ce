package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Exit codes of the stand-in agent, Claude Code's where it has one.
const (
	agentExitOK       = 0
	agentExitFailed   = 1   // the session ran and failed (is_error, error subtypes)
	agentExitUsage    = 2   // bad flags or environment: nothing was attempted
	agentExitSIGTERM  = 143 // cancelled: no result is printed, as Claude Code
	agentDefaultModel = "stand-in"
	agentMaxTokens    = 32000
	agentSystemPrompt = "You are the wfb stand-in agent, a scripted offline agent for testing coding-agent benchmarks. Use the tools to do the task."
)

// Main runs the stand-in agent: a small agent CLI with Claude Code's
// command-line interface and result shapes, used for offline tests and dry
// runs. args exclude the program name; getenv reads its environment. It
// returns the process exit code: 0 success, 1 a failed session (the result
// says why), 2 bad flags or environment, 143 when ctx is cancelled (SIGTERM),
// in which case, as with Claude Code, no result is printed.
//
// It talks to $ANTHROPIC_BASE_URL (required) with $ANTHROPIC_API_KEY, makes
// one model request by default (more with --max-turns), runs the tools the
// replies ask for (Write, Read, Bash) in the working directory, and reports
// usage exactly as served, summed over turns, with a cost from the price
// table in price.go.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	start := time.Now()
	opts, code := agentParseFlags(args, stdout, stderr)
	if opts == nil {
		return code
	}
	baseURL := getenv("ANTHROPIC_BASE_URL")
	if baseURL == "" {
		fmt.Fprintln(stderr, "wfb mock agent: ANTHROPIC_BASE_URL is not set: the stand-in agent talks only to the provider named there (start one with `wfb mock serve --script FILE`)")
		return agentExitUsage
	}
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		fmt.Fprintf(stderr, "wfb mock agent: ANTHROPIC_BASE_URL %q is not an http(s) URL\n", baseURL)
		return agentExitUsage
	}
	prompt := strings.Join(opts.positional, " ")
	if len(opts.positional) == 0 {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "wfb mock agent: read prompt from stdin: %v\n", err)
			return agentExitFailed
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return agentExitFailed
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "wfb mock agent: working directory: %v\n", err)
		return agentExitFailed
	}
	sessionID := opts.sessionID
	if sessionID == "" {
		sessionID = agentUUID()
	}
	s := &agentSession{
		opts:      opts,
		cwd:       cwd,
		prompt:    prompt,
		baseURL:   baseURL,
		apiKey:    getenv("ANTHROPIC_API_KEY"),
		sessionID: sessionID,
		out:       stdout,
		errOut:    stderr,
		usage:     newAgentUsage(),
		client:    &http.Client{Timeout: agentAPITimeout(getenv)},
		start:     start,
	}
	return s.run(ctx)
}

// agentAPITimeout bounds one model request: API_TIMEOUT_MS as Claude Code
// reads it, else Claude Code's default of ten minutes.
func agentAPITimeout(getenv func(string) string) time.Duration {
	if ms, err := strconv.Atoi(getenv("API_TIMEOUT_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 10 * time.Minute
}

// agentOptions are the parsed flags.
type agentOptions struct {
	outputFormat   string
	verbose        bool
	model          string
	maxTurns       int
	permissionMode string
	tools          []string // the tools offered to the model
	allowed        []string // --allowedTools rules; empty: no restriction
	disallowed     []string // --disallowedTools rules
	addDirs        []string
	systemPrompt   string
	sessionID      string
	positional     []string
}

var agentPermissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}

// agentParseFlags parses Claude Code's flags. It returns nil options and the
// exit code when the agent must stop (help, or bad flags).
func agentParseFlags(args []string, stdout, stderr io.Writer) (*agentOptions, int) {
	fs := pflag.NewFlagSet("wfb mock agent", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	var (
		o                           agentOptions
		print, skipPerms, noPersist bool
		tools                       string
		allowedA, allowedB          []string
		disallowedA, disallowedB    []string
		appendSystem                string
	)
	fs.BoolVarP(&print, "print", "p", false, "print the response and exit (the prompt is the argument, else all of stdin)")
	fs.StringVar(&o.outputFormat, "output-format", "text", "text, json or stream-json (stream-json needs --verbose)")
	fs.BoolVar(&o.verbose, "verbose", false, "verbose output (required by stream-json)")
	fs.StringVar(&o.model, "model", agentDefaultModel, "model name sent to the provider and used for pricing")
	fs.IntVar(&o.maxTurns, "max-turns", 0, "model requests at most; 0 or 1: one request, whose tools run, then report")
	fs.StringVar(&o.permissionMode, "permission-mode", "default", "default, acceptEdits, bypassPermissions, plan or dontAsk")
	fs.StringVar(&tools, "tools", "", `tools offered to the model: "" none, "default" all, or a list of Write,Read,Bash`)
	fs.StringArrayVar(&allowedA, "allowedTools", nil, "only these tools may run (e.g. Write, Bash(git log:*))")
	fs.StringArrayVar(&allowedB, "allowed-tools", nil, "same as --allowedTools")
	fs.StringArrayVar(&disallowedA, "disallowedTools", nil, "these tools may not run")
	fs.StringArrayVar(&disallowedB, "disallowed-tools", nil, "same as --disallowedTools")
	fs.StringArrayVar(&o.addDirs, "add-dir", nil, "another directory writes may go to under acceptEdits")
	fs.BoolVar(&noPersist, "no-session-persistence", false, "accepted: the stand-in never writes transcripts")
	fs.BoolVar(&skipPerms, "dangerously-skip-permissions", false, "same as --permission-mode bypassPermissions")
	fs.StringVar(&o.systemPrompt, "system-prompt", agentSystemPrompt, "system prompt")
	fs.StringVar(&appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fs.StringVar(&o.sessionID, "session-id", "", "session id to report (default: a random UUID)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: wfb mock agent -p [flags] [PROMPT]\n\nA stand-in agent CLI with Claude Code's interface.\n\nFlags:\n%s", fs.FlagUsages())
			return nil, agentExitOK
		}
		fmt.Fprintf(stderr, "wfb mock agent: %v\nRun 'wfb mock agent --help' for the flags it accepts.\n", err)
		return nil, agentExitUsage
	}
	bad := func(format string, a ...any) (*agentOptions, int) {
		fmt.Fprintf(stderr, "wfb mock agent: "+format+"\n", a...)
		return nil, agentExitUsage
	}
	if !print {
		return bad("only print mode is supported: pass -p/--print (without it Claude Code starts an interactive session)")
	}
	if !slices.Contains([]string{"text", "json", "stream-json"}, o.outputFormat) {
		return bad("--output-format %q: allowed choices are text, json, stream-json", o.outputFormat)
	}
	if o.outputFormat == "stream-json" && !o.verbose {
		// Claude Code's own message and exit code.
		fmt.Fprintln(stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return nil, agentExitFailed
	}
	if !slices.Contains(agentPermissionModes, o.permissionMode) {
		return bad("--permission-mode %q: allowed choices are %s", o.permissionMode, strings.Join(agentPermissionModes, ", "))
	}
	if skipPerms {
		o.permissionMode = "bypassPermissions"
	}
	if o.maxTurns < 0 {
		return bad("--max-turns %d: must be positive", o.maxTurns)
	}
	o.tools = slices.Clone(agentToolNames)
	if fs.Changed("tools") {
		o.tools = nil
		for _, name := range agentSplitList(tools) {
			switch {
			case name == "default":
				o.tools = slices.Clone(agentToolNames)
			case slices.Contains(agentToolNames, name):
				if !slices.Contains(o.tools, name) {
					o.tools = append(o.tools, name)
				}
			default:
				return bad("--tools: unknown tool %q (the stand-in has %s)", name, strings.Join(agentToolNames, ", "))
			}
		}
	}
	for _, v := range append(allowedA, allowedB...) {
		o.allowed = append(o.allowed, agentSplitList(v)...)
	}
	for _, v := range append(disallowedA, disallowedB...) {
		o.disallowed = append(o.disallowed, agentSplitList(v)...)
	}
	if appendSystem != "" {
		o.systemPrompt += "\n\n" + appendSystem
	}
	o.positional = fs.Args()
	return &o, agentExitOK
}

// agentSplitList splits a tool list on commas and spaces that are not
// inside parentheses: "Bash(git log:*),Write Read" is three rules.
func agentSplitList(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ',' || r == ' ') && depth == 0:
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// agentRuleMatches says whether a permission rule ("Write", "Bash",
// "Bash(git log:*)", "Bash(make test)") covers a tool call.
func agentRuleMatches(rule, tool string, input json.RawMessage) bool {
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
	}
	_ = json.Unmarshal(input, &in)
	if tool == "Bash" {
		target = in.Command
	} else {
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

// agentUUID returns a random version-4 UUID.
func agentUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// agentDenial is one entry of permission_denials, as Claude Code reports it.
type agentDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// agentSession is one run of the agent.
type agentSession struct {
	opts      *agentOptions
	cwd       string
	prompt    string
	baseURL   string
	apiKey    string
	sessionID string
	out       io.Writer
	errOut    io.Writer
	client    *http.Client
	start     time.Time

	usage    *agentUsage
	turns    int
	apiTime  time.Duration
	denials  []agentDenial
	lastText string
}

func (s *agentSession) run(ctx context.Context) int {
	s.emit(agentInitEvent{
		Type:           "system",
		Subtype:        "init",
		CWD:            s.cwd,
		SessionID:      s.sessionID,
		Tools:          s.opts.tools,
		MCPServers:     []any{},
		Model:          s.opts.model,
		PermissionMode: s.opts.permissionMode,
		APIKeySource:   s.apiKeySource(),
	})
	var defs []any
	for _, name := range s.opts.tools {
		defs = append(defs, agentToolDefs[name])
	}
	messages := []agentMessage{{Role: "user", Content: s.prompt}}
	for {
		s.turns++
		began := time.Now()
		reply, err := agentPost(ctx, s.client, s.baseURL, s.apiKey, s.sessionID, &agentRequest{
			Model:     s.opts.model,
			MaxTokens: agentMaxTokens,
			System:    []agentText{{Type: "text", Text: s.opts.systemPrompt}},
			Messages:  messages,
			Tools:     defs,
			Metadata:  map[string]any{"user_id": "session_" + s.sessionID},
			Stream:    true,
		})
		s.apiTime += time.Since(began)
		if ctx.Err() != nil {
			return agentExitSIGTERM
		}
		var apiErr *agentAPIError
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
			return s.finish("success", true, &text, nil, status, "api_error")
		case err != nil:
			fmt.Fprintf(s.errOut, "wfb mock agent: %v\n", err)
			return s.finish("error_during_execution", true, nil, []string{err.Error()}, nil, "error")
		}
		s.usage.add(reply.Usage)
		s.lastText = reply.text()
		replyUsage := newAgentUsage()
		replyUsage.add(reply.Usage)
		s.emit(agentAssistantEvent{
			Type: "assistant",
			Message: agentAssistantMessage{
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
		var results []any
		for _, b := range reply.Content {
			if b.Type != "tool_use" {
				continue
			}
			r := s.runTool(ctx, b)
			if ctx.Err() != nil {
				return agentExitSIGTERM
			}
			block := agentToolResultBlock{Type: "tool_result", ToolUseID: b.ID, Content: r.Content, IsError: r.IsError}
			results = append(results, block)
			s.emit(agentUserEvent{
				Type:      "user",
				Message:   agentUserMessage{Role: "user", Content: []agentToolResultBlock{block}},
				SessionID: s.sessionID,
			})
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
			agentMessage{Role: "assistant", Content: reply.Content},
			agentMessage{Role: "user", Content: results})
	}
}

func (s *agentSession) apiKeySource() string {
	if s.apiKey != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// runTool checks the tool call against the offered tools and the permission
// rules, then runs it. A refusal is a tool error, and a denial by rule is
// also listed in permission_denials.
func (s *agentSession) runTool(ctx context.Context, b *agentBlock) agentToolResult {
	if !slices.Contains(s.opts.tools, b.Name) {
		return agentToolError("Error: No such tool available: %s", b.Name)
	}
	if reason := s.denied(b); reason != "" {
		s.denials = append(s.denials, agentDenial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: b.Input})
		return agentToolError("%s", reason)
	}
	return agentRunTool(ctx, s.cwd, b.Name, b.Input)
}

// denied returns why the permission flags refuse this call, or "".
func (s *agentSession) denied(b *agentBlock) string {
	refused := fmt.Sprintf("Permission to use %s has been denied.", b.Name)
	for _, rule := range s.opts.disallowed {
		if agentRuleMatches(rule, b.Name, b.Input) {
			return refused
		}
	}
	if len(s.opts.allowed) > 0 && !slices.ContainsFunc(s.opts.allowed, func(rule string) bool {
		return agentRuleMatches(rule, b.Name, b.Input)
	}) {
		return refused
	}
	switch s.opts.permissionMode {
	case "plan":
		if b.Name != "Read" {
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
			if in.FilePath != "" && !s.writableUnderAcceptEdits(agentResolve(s.cwd, in.FilePath)) {
				return refused + " (outside the working directory and --add-dir)"
			}
		}
	}
	return ""
}

func (s *agentSession) writableUnderAcceptEdits(path string) bool {
	for _, dir := range append([]string{s.cwd}, s.opts.addDirs...) {
		rel, err := filepath.Rel(agentResolve(s.cwd, dir), path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// emit writes one stream-json line (only in stream-json mode).
func (s *agentSession) emit(v any) {
	if s.opts.outputFormat != "stream-json" {
		return
	}
	if err := agentWriteJSON(s.out, v); err != nil {
		fmt.Fprintf(s.errOut, "wfb mock agent: write output: %v\n", err)
	}
}

// agentWriteJSON writes v as one line of JSON, without HTML escaping so
// that the output reads like Claude Code's.
func agentWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// agentInitEvent is stream-json's first line.
type agentInitEvent struct {
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

// agentAssistantEvent is one model reply in stream-json.
type agentAssistantEvent struct {
	Type            string                `json:"type"`
	Message         agentAssistantMessage `json:"message"`
	ParentToolUseID *string               `json:"parent_tool_use_id"`
	SessionID       string                `json:"session_id"`
}

type agentAssistantMessage struct {
	ID         string        `json:"id"`
	Type       string        `json:"type"`
	Role       string        `json:"role"`
	Model      string        `json:"model"`
	Content    []*agentBlock `json:"content"`
	StopReason string        `json:"stop_reason"`
	Usage      *agentUsage   `json:"usage"`
}

// agentUserEvent is one tool result in stream-json.
type agentUserEvent struct {
	Type            string           `json:"type"`
	Message         agentUserMessage `json:"message"`
	ParentToolUseID *string          `json:"parent_tool_use_id"`
	SessionID       string           `json:"session_id"`
}

type agentUserMessage struct {
	Role    string                 `json:"role"`
	Content []agentToolResultBlock `json:"content"`
}

// agentModelUsage is one entry of modelUsage.
type agentModelUsage struct {
	InputTokens              json.RawMessage `json:"inputTokens"`
	OutputTokens             json.RawMessage `json:"outputTokens"`
	CacheReadInputTokens     json.RawMessage `json:"cacheReadInputTokens"`
	CacheCreationInputTokens json.RawMessage `json:"cacheCreationInputTokens"`
	CostUSD                  float64         `json:"costUSD"`
}

// agentResult is the final result object, in Claude Code's field order.
type agentResult struct {
	Type              string                     `json:"type"`
	Subtype           string                     `json:"subtype"`
	IsError           bool                       `json:"is_error"`
	APIErrorStatus    *int                       `json:"api_error_status"`
	DurationMS        int64                      `json:"duration_ms"`
	DurationAPIMS     int64                      `json:"duration_api_ms"`
	NumTurns          int                        `json:"num_turns"`
	Result            *string                    `json:"result,omitempty"`
	Errors            []string                   `json:"errors,omitempty"`
	SessionID         string                     `json:"session_id"`
	TotalCostUSD      *float64                   `json:"total_cost_usd,omitempty"`
	Usage             *agentUsage                `json:"usage"`
	ModelUsage        map[string]agentModelUsage `json:"modelUsage,omitempty"`
	PermissionDenials []agentDenial              `json:"permission_denials"`
	TerminalReason    string                     `json:"terminal_reason"`
	UUID              string                     `json:"uuid"`
}

func (s *agentSession) finishMaxTurns(msg string) int {
	return s.finish("error_max_turns", false, nil, []string{msg}, nil, "max_turns")
}

// finish prints the result and returns the exit code.
func (s *agentSession) finish(subtype string, isError bool, text *string, errs []string, status *int, reason string) int {
	res := agentResult{
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
		UUID:              agentUUID(),
	}
	if res.PermissionDenials == nil {
		res.PermissionDenials = []agentDenial{}
	}
	// The agent cannot price what it was not told: no cost unless all four
	// fields are measured integers. A measured zero is priced, at 0.
	if in, out, cr, cw, ok := s.usage.counts(); ok {
		cost := PriceFor(s.opts.model).costUSD(in, out, cr, cw)
		res.TotalCostUSD = &cost
		res.ModelUsage = map[string]agentModelUsage{s.opts.model: {
			InputTokens:              json.RawMessage(in.String()),
			OutputTokens:             json.RawMessage(out.String()),
			CacheReadInputTokens:     json.RawMessage(cr.String()),
			CacheCreationInputTokens: json.RawMessage(cw.String()),
			CostUSD:                  cost,
		}}
	}
	code := agentExitOK
	if isError || subtype != "success" {
		code = agentExitFailed
	}
	switch s.opts.outputFormat {
	case "text":
		msg := strings.Join(errs, "\n")
		if text != nil {
			msg = *text
		}
		fmt.Fprintln(s.out, msg)
	default:
		if err := agentWriteJSON(s.out, res); err != nil {
			fmt.Fprintf(s.errOut, "wfb mock agent: write result: %v\n", err)
			return agentExitFailed
		}
	}
	return code
}
