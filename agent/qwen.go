package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Qwen Code approval modes an arm may name as its permission. yolo (the
// default) runs every tool and writes anywhere; in default mode a headless
// session is offered no write, edit or shell tool at all.
var qwenApprovalModes = []string{"yolo", "auto-edit", "auto", "default", "plan"}

// qwenAdapter drives Qwen Code (npm @qwen-code/qwen-code) headless:
// `qwen -o stream-json --approval-mode yolo -m MODEL --openai-base-url
// URL`, the prompt on stdin, Claude-Code-like stream-json out, the key in
// OPENAI_API_KEY (off the command line). Its base URL and key are those
// of every OpenAI agent (openAIEndpoint); the flag is given even so, since
// Qwen Code reads .env files from the workspace upward.
//
// Its settings are a system settings file of wfb's in the private HOME
// (QWEN_CODE_SYSTEM_SETTINGS_PATH), which overrides the user's and the
// workspace's: OpenAI auth (headless Qwen Code refuses to run with none),
// no folder-trust prompt, no update or usage-statistics traffic, no
// telemetry, no chat recording, no systemd-inhibit child, no memory
// extraction (a second model call after every answer, its tokens added to
// the session's), no SDK retries inside its own, no ripgrep (the one npm
// ships lacks its exec bit), and "$version" 4, without which Qwen Code
// rewrites the file. The arm's settings are merged over it, its MCP
// servers under mcpServers.
//
// Retries: besides its SDK's (off), Qwen Code makes up to seven attempts
// of a request that failed with a 429 or a 5xx, 1.5 s doubling; it waits
// what retry-after says for a 429 or a 503 only. No setting bounds it, and
// stream-json shows none of it (api_retries stays NULL): a 529 costs about
// 85 s, and wfb's session timeout is the bound.
type qwenAdapter struct {
	model, named string
}

func (a *qwenAdapter) Command(s Session, prompt string) (Command, error) {
	argv, env, err := qwenArgv(s)
	if err != nil {
		return Command{}, err
	}
	a.model, a.named = s.Model, s.Version
	return Command{Argv: argv, Stdin: prompt, Env: env}, nil
}

// Version is `qwen --version`, which prints the bare version and writes
// nothing.
func (a *qwenAdapter) Version() (Probe, bool) { return VersionProbe, true }

func (a *qwenAdapter) Output(version string) Output {
	return &qwenOutput{model: a.model, version: version, named: a.named}
}

func (a *qwenAdapter) SkillsDir(home string) string { return filepath.Join(home, ".qwen", "skills") }

func (a *qwenAdapter) Upstream(env map[string]string) (string, string) { return openAIUpstream(env) }

// ReportedField: the result's usage has Claude Code's names (its
// input_tokens includes the cached tokens) and no cache writes.
func (a *qwenAdapter) ReportedField(column string) string { return column }

// qwenArgv builds Qwen Code's headless command line and the variables it
// adds to the session's environment, and writes its settings file.
func qwenArgv(spec Session) (argv []string, env map[string]string, err error) {
	mode, err := qwenSupports(spec)
	if err != nil {
		return nil, nil, err
	}
	home := spec.Env["HOME"]
	if home == "" {
		return nil, nil, errors.New("qwen needs HOME in the session's environment (its settings and state go there)")
	}
	env = map[string]string{"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
	baseURL, err := openAIEndpoint("qwen", spec.Env, env)
	if err != nil {
		return nil, nil, err
	}
	path, err := writeKitJSON(home, "qwen-settings.json", qwenKitSettings(qwenSettings(), spec.Kit))
	if err != nil {
		return nil, nil, fmt.Errorf("write qwen's settings: %w", err)
	}
	env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] = path
	argv = append([]string{spec.Bin}, spec.Args...)
	argv = append(argv, "-o", "stream-json", "--approval-mode", mode, "--openai-base-url", baseURL)
	if spec.Model != "" {
		argv = append(argv, "-m", spec.Model)
	}
	if spec.MaxTurns > 0 {
		argv = append(argv, "--max-session-turns", strconv.Itoa(spec.MaxTurns))
	}
	return append(argv, spec.ExtraArgs...), env, nil
}

// qwenSupports refuses what Qwen Code cannot do headless and returns its
// approval mode.
func qwenSupports(spec Session) (string, error) {
	return approvalMode(spec, "qwen", qwenApprovalModes, "yolo, auto-edit, auto, default or plan")
}

// qwenSettings is the system settings file wfb writes for a session (see
// qwenAdapter).
func qwenSettings() map[string]any {
	return map[string]any{
		"$version": 4,
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "openai"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"general": map[string]any{
			"enableAutoUpdate":   false,
			"chatRecording":      false,
			"preventSystemSleep": false,
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"memory":    map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
		"model":     map[string]any{"generationConfig": map[string]any{"maxRetries": 0}},
		"tools":     map[string]any{"useRipgrep": false},
	}
}

// qwenKitSettings merges the kit into qwen's settings: Qwen Code reads
// mcpServers and resolves $NAME secrets as Gemini CLI does, so the form is
// geminiKitSettings'.
func qwenKitSettings(base map[string]any, k Kit) map[string]any { return geminiKitSettings(base, k) }

// qwenOutput collects what matters from Qwen Code's stream-json, which
// copies Claude Code's: the init event (session, MCP servers), assistant
// and user events (tool calls and their results), and the result events.
type qwenOutput struct {
	model, version, named string

	jsonLines
	results   keptEvents
	sessionID string
	mcpFailed boundedList
	retries   int // system/retry events: a broken stream tried again
	tools     Tools
}

func (o *qwenOutput) Tools() *Tools { return &o.tools }

func (o *qwenOutput) Line(l []byte, truncated bool) {
	var head struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
	}
	l, ok := o.decode(l, truncated, &head)
	if !ok {
		return
	}
	switch {
	case head.Type == "result":
		o.results.add(l)
	case head.Type == "system" && head.Subtype == "init":
		o.sessionID = head.SessionID
		o.tools.measured = true
		serversNotConnected(l, &o.mcpFailed)
	case head.Type == "system" && head.Subtype == "retry":
		o.retries++
	case head.Type == "assistant":
		countContentTools(&o.tools, l, qwenToolName)
	case head.Type == "user":
		failedContentTools(&o.tools, l)
	}
}

// qwenToolName is a Qwen Code tool call's name as wfb counts it: the skill
// tool as the skill it loads (skill:NAME), any other as Qwen Code names it
// — an MCP tool already mcp__SERVER__TOOL, built-ins write_file, edit,
// run_shell_command, ...
func qwenToolName(name string, input json.RawMessage) string {
	if name == "skill" {
		if s := skillName(input, "skill"); s != "" {
			return skillPrefix + s
		}
	}
	return name
}

// qwenResult is stream-json's result event, its counts kept raw.
type qwenResult struct {
	Type       string                     `json:"type"`
	Subtype    string                     `json:"subtype"`
	SessionID  string                     `json:"session_id"`
	IsError    *bool                      `json:"is_error"`
	Result     *string                    `json:"result"`
	NumTurns   json.RawMessage            `json:"num_turns"`
	DurationMS json.RawMessage            `json:"duration_ms"`
	Usage      map[string]json.RawMessage `json:"usage"`
	Denials    []json.RawMessage          `json:"permission_denials"`
	Error      *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// QwenUsageFields are the counts of the result's usage a complete
// measurement carries: input_tokens is the prompt (cached INCLUDED, as
// OpenAI counts it), output_tokens the completion (reasoning included).
var QwenUsageFields = []string{"input_tokens", "output_tokens", "cache_read_input_tokens"}

// qwenProviderText recognises a failure the provider caused: an API error
// Qwen Code passed on ("[API Error: 529 ...]"), a stream that ended
// without a finish reason.
var qwenProviderText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\[API Error|finish reason|quota`) })

func (o *qwenOutput) Interpret(row *store.Result, p Process) {
	row.SessionID = o.sessionID
	recordVersion(row, o.version, o.named)
	switch n := o.results.n; {
	case n == 0:
		row.AddFailure(wfb.KindSessionError, o.missing("result event", p))
		return
	case n > 1:
		row.ResultEvent = o.results.all()
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the agent printed %d result events; exactly one is expected", n))
		return
	}
	row.ResultEvent = string(o.results.last)
	var res qwenResult
	if err := json.Unmarshal(o.results.last, &res); err != nil {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the result event is malformed: %v", err))
		return
	}
	if res.SessionID != "" {
		row.SessionID = res.SessionID
	}
	if n, err := wfb.ParseCount(res.NumTurns); err == nil {
		row.NumTurns = &n
	}
	if d, err := wfb.ParseCount(res.DurationMS); err == nil {
		row.AgentDurationMS = &d
	}
	if res.Denials != nil {
		n := int64(len(res.Denials))
		row.PermissionDenials = &n
	}
	var problems []string
	switch {
	case res.IsError == nil:
		row.AddFailure(wfb.KindSessionError, "the result event has no is_error field")
	case *res.IsError || res.Subtype != "success":
		o.failed(row, &res, p.Exit)
	case res.Result != nil && strings.HasPrefix(strings.TrimSpace(*res.Result), "[API Error"):
		// Qwen Code prints a provider's error as the assistant's text
		// before its result: an answer that is one is not an answer.
		row.AddFailure(wfb.KindProviderError, "the agent's answer is a provider error it passed on as text: "+wfb.Clip(*res.Result, 500))
	default:
		problems = o.measure(row, res.Usage)
		if p.ExitCode == nil || *p.ExitCode != 0 {
			row.AddFailure(wfb.KindSessionError, "the agent ended with "+p.Exit)
		}
	}
	o.failNonJSON(row, p)
	if len(problems) > 0 {
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: "+strings.Join(problems, "; "))
	}
	if n := len(res.Denials); n > 0 {
		row.AddDetail(fmt.Sprintf("the agent's permission policy denied %d tool call(s): %s", n, wfb.Clip(string(joinLines(rawList(res.Denials))), 300)))
	}
	if o.retries > 0 {
		row.AddDetail(fmt.Sprintf("the agent retried %d broken stream(s) (system/retry events); its usage counts every try", o.retries))
	}
	if len(o.mcpFailed.items) > 0 {
		row.AddFailure(wfb.KindInfraError, "MCP servers that did not start, by the agent's init event: "+o.mcpFailed.join(", "))
	}
}

// failed records an error result: a provider-error when the provider
// caused it, else a session-error. Its usage is not recorded (zeros for a
// request never answered, or the tokens of tries that failed).
func (o *qwenOutput) failed(row *store.Result, res *qwenResult, exit string) {
	msg := "(no explanation given)"
	switch {
	case res.Error != nil && res.Error.Message != "":
		msg = wfb.Clip(res.Error.Message, 500)
	case res.Result != nil && *res.Result != "":
		msg = wfb.Clip(*res.Result, 500)
	}
	kind := wfb.KindSessionError
	if qwenProviderText().MatchString(msg) {
		kind = wfb.KindProviderError
	}
	row.AddFailure(kind, fmt.Sprintf("the agent reported an error (%s, %s): %s", wfb.Clip(res.Subtype, 40), exit, msg))
}

// measure validates the result's usage and records it in the results
// columns' semantics (wfb.SemanticsOpenAI: input_tokens = the prompt −
// cached, cache writes NULL). Qwen Code sums each request's prompt_tokens
// || 0, completion_tokens || 0 and total_tokens || 0 — a missing usage
// becomes zeros, a null a 0, a negative passes, a string is concatenated
// — so, beside the strict counts, a session's input of 0 is refused, and
// a total_tokens that is not input + output (a count lost on the way).
// stream-json has no reasoning count (NULL). Cost is derived from wfb's
// price table: Qwen Code reports none. It returns why it refused.
func (o *qwenOutput) measure(row *store.Result, usage map[string]json.RawMessage) []string {
	if usage == nil {
		return []string{"the result has no usage"}
	}
	vals, problems := parseCounts(usage, "usage.", QwenUsageFields)
	if len(problems) > 0 {
		return problems
	}
	in, out, cached := vals[0], vals[1], vals[2]
	if raw, ok := usage["total_tokens"]; ok {
		total, err := wfb.ParseCount(raw)
		switch {
		case err != nil:
			return []string{"usage.total_tokens " + err.Error()}
		case total != in+out:
			return []string{fmt.Sprintf("usage.total_tokens %d is not input_tokens %d + output_tokens %d: a count was lost on the way (Qwen Code counts a null or missing count as 0)", total, in, out)}
		}
	}
	switch {
	case in == 0:
		return []string{"usage.input_tokens is 0, which no model request has: the provider reported no usage (Qwen Code counts a missing usage as zeros)"}
	case cached > in:
		return []string{fmt.Sprintf("usage.cache_read_input_tokens %d exceeds input_tokens %d (cached input is part of input)", cached, in)}
	}
	uncached := in - cached
	row.UsageSemantics = wfb.SemanticsOpenAI
	row.InputTokens, row.CacheReadInputTokens, row.OutputTokens = &uncached, &cached, &out
	row.CacheCreationInputTokens = nil
	row.ReportedInputTokens, row.ReportedCachedInputTokens = &in, &cached
	row.ReasoningOutputTokens = nil
	if p, ok := PriceFor(o.model); ok {
		cost := p.Cost(uncached, out, cached, 0)
		row.CostUSD, row.CostSource = &cost, "derived"
	} else {
		row.AddDetail(fmt.Sprintf("cost not recorded: qwen reports none, and wfb's price table has no price for model %q", o.model))
	}
	return nil
}
