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
	exitOK              = 0
	exitFailed          = 1   // the session ran and failed (is_error, error subtypes)
	exitUsage           = 2   // bad flags or environment: nothing was attempted
	exitSIGTERM         = 143 // cancelled: no result is printed, as Claude Code
	defaultModel        = "stand-in"
	maxTokens           = 32000
	defaultSystemPrompt = "You are the wfb stand-in agent, a scripted offline agent for testing coding-agent benchmarks. Use the tools to do the task."
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
	opts, code := parseFlags(args, stdout, stderr)
	if opts == nil {
		return code
	}
	baseURL := getenv("ANTHROPIC_BASE_URL")
	if baseURL == "" {
		fmt.Fprintln(stderr, "wfb mock agent: ANTHROPIC_BASE_URL is not set: the stand-in agent talks only to the provider named there (start one with `wfb mock serve --script FILE`)")
		return exitUsage
	}
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		fmt.Fprintf(stderr, "wfb mock agent: ANTHROPIC_BASE_URL %q is not an http(s) URL\n", baseURL)
		return exitUsage
	}
	prompt := strings.Join(opts.positional, " ")
	if len(opts.positional) == 0 {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "wfb mock agent: read prompt from stdin: %v\n", err)
			return exitFailed
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return exitFailed
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "wfb mock agent: working directory: %v\n", err)
		return exitFailed
	}
	sessionID := opts.sessionID
	if sessionID == "" {
		sessionID = newUUID()
	}
	s := &session{
		opts:      opts,
		cwd:       cwd,
		prompt:    prompt,
		baseURL:   baseURL,
		apiKey:    getenv("ANTHROPIC_API_KEY"),
		sessionID: sessionID,
		out:       stdout,
		errOut:    stderr,
		usage:     newUsageSum(),
		client:    &http.Client{Timeout: apiTimeout(getenv)},
		start:     start,
	}
	return s.run(ctx)
}

// apiTimeout bounds one model request: API_TIMEOUT_MS as Claude Code
// reads it, else Claude Code's default of ten minutes.
func apiTimeout(getenv func(string) string) time.Duration {
	if ms, err := strconv.Atoi(getenv("API_TIMEOUT_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 10 * time.Minute
}

// options are the parsed flags.
type options struct {
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

var permissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}

// parseFlags parses Claude Code's flags. It returns nil options and the
// exit code when the agent must stop (help, or bad flags).
func parseFlags(args []string, stdout, stderr io.Writer) (*options, int) {
	fs := pflag.NewFlagSet("wfb mock agent", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	var (
		o                           options
		print, skipPerms, noPersist bool
		tools                       string
		allowedA, allowedB          []string
		disallowedA, disallowedB    []string
		appendSystem                string
	)
	fs.BoolVarP(&print, "print", "p", false, "print the response and exit (the prompt is the argument, else all of stdin)")
	fs.StringVar(&o.outputFormat, "output-format", "text", "text, json or stream-json (stream-json needs --verbose)")
	fs.BoolVar(&o.verbose, "verbose", false, "verbose output (required by stream-json)")
	fs.StringVar(&o.model, "model", defaultModel, "model name sent to the provider and used for pricing")
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
	fs.StringVar(&o.systemPrompt, "system-prompt", defaultSystemPrompt, "system prompt")
	fs.StringVar(&appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fs.StringVar(&o.sessionID, "session-id", "", "session id to report (default: a random UUID)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: wfb mock agent -p [flags] [PROMPT]\n\nA stand-in agent CLI with Claude Code's interface.\n\nFlags:\n%s", fs.FlagUsages())
			return nil, exitOK
		}
		fmt.Fprintf(stderr, "wfb mock agent: %v\nRun 'wfb mock agent --help' for the flags it accepts.\n", err)
		return nil, exitUsage
	}
	bad := func(format string, a ...any) (*options, int) {
		fmt.Fprintf(stderr, "wfb mock agent: "+format+"\n", a...)
		return nil, exitUsage
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
		return nil, exitFailed
	}
	if !slices.Contains(permissionModes, o.permissionMode) {
		return bad("--permission-mode %q: allowed choices are %s", o.permissionMode, strings.Join(permissionModes, ", "))
	}
	if skipPerms {
		o.permissionMode = "bypassPermissions"
	}
	if o.maxTurns < 0 {
		return bad("--max-turns %d: must be positive", o.maxTurns)
	}
	o.tools = slices.Clone(toolNames)
	if fs.Changed("tools") {
		o.tools = nil
		for _, name := range splitList(tools) {
			switch {
			case name == "default":
				o.tools = slices.Clone(toolNames)
			case slices.Contains(toolNames, name):
				if !slices.Contains(o.tools, name) {
					o.tools = append(o.tools, name)
				}
			default:
				return bad("--tools: unknown tool %q (the stand-in has %s)", name, strings.Join(toolNames, ", "))
			}
		}
	}
	for _, v := range append(allowedA, allowedB...) {
		o.allowed = append(o.allowed, splitList(v)...)
	}
	for _, v := range append(disallowedA, disallowedB...) {
		o.disallowed = append(o.disallowed, splitList(v)...)
	}
	if appendSystem != "" {
		o.systemPrompt += "\n\n" + appendSystem
	}
	o.positional = fs.Args()
	return &o, exitOK
}

// splitList splits a tool list on commas and spaces that are not
// inside parentheses: "Bash(git log:*),Write Read" is three rules.
func splitList(s string) []string {
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

// ruleMatches says whether a permission rule ("Write", "Bash",
// "Bash(git log:*)", "Bash(make test)") covers a tool call.
func ruleMatches(rule, tool string, input json.RawMessage) bool {
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

// newUUID returns a random version-4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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

	usage    *usageSum
	turns    int
	apiTime  time.Duration
	denials  []denial
	lastText string
}

func (s *session) run(ctx context.Context) int {
	s.emit(initEvent{
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
		defs = append(defs, toolDefs[name])
	}
	messages := []message{{Role: "user", Content: s.prompt}}
	for {
		s.turns++
		began := time.Now()
		reply, err := post(ctx, s.client, s.baseURL, s.apiKey, s.sessionID, &request{
			Model:     s.opts.model,
			MaxTokens: maxTokens,
			System:    []textPart{{Type: "text", Text: s.opts.systemPrompt}},
			Messages:  messages,
			Tools:     defs,
			Metadata:  map[string]any{"user_id": "session_" + s.sessionID},
			Stream:    true,
		})
		s.apiTime += time.Since(began)
		if ctx.Err() != nil {
			return exitSIGTERM
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
			return s.finish("success", true, &text, nil, status, "api_error")
		case err != nil:
			fmt.Fprintf(s.errOut, "wfb mock agent: %v\n", err)
			return s.finish("error_during_execution", true, nil, []string{err.Error()}, nil, "error")
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
		var results []any
		for _, b := range reply.Content {
			if b.Type != "tool_use" {
				continue
			}
			r := s.runTool(ctx, b)
			if ctx.Err() != nil {
				return exitSIGTERM
			}
			block := toolResultBlock{Type: "tool_result", ToolUseID: b.ID, Content: r.Content, IsError: r.IsError}
			results = append(results, block)
			s.emit(userEvent{
				Type:      "user",
				Message:   userMessage{Role: "user", Content: []toolResultBlock{block}},
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
			message{Role: "assistant", Content: reply.Content},
			message{Role: "user", Content: results})
	}
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
	if !slices.Contains(s.opts.tools, b.Name) {
		return toolError("Error: No such tool available: %s", b.Name)
	}
	if reason := s.denied(b); reason != "" {
		s.denials = append(s.denials, denial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: b.Input})
		return toolError("%s", reason)
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
		cost := PriceFor(s.opts.model).costUSD(in, out, cr, cw)
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
