package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Codex sandbox modes an arm may name as its permission; "bypass" runs
// Codex with --dangerously-bypass-approvals-and-sandbox, leaving isolation
// to wfb's sandbox. It is the default inside a wfb sandbox: Codex's own
// (bwrap) sandbox cannot start there — it must create .git in the
// workspace, which a review session's workspace refuses — and a command it
// cannot sandbox fails without a trace in --json output. Without a wfb
// sandbox the default is workspace-write.
var codexSandboxModes = []string{"workspace-write", "read-only", "danger-full-access", "bypass"}

// codexProvider is the id of the model provider wfb defines for Codex.
const codexProvider = "wfb"

// codexAdapter drives Codex headless: prompt as the last argument, stdin
// /dev/null (an open pipe makes it wait for more input), JSONL out.
//
// The model provider is defined on the command line, because Codex ignores
// OPENAI_BASE_URL: its base URL and key are those of every OpenAI agent
// (openAIEndpoint), the key read by Codex from OPENAI_API_KEY. Retries and the stream idle timeout take the same
// bounds the runner sets for Claude Code (runner.AgentEnv):
// CLAUDE_CODE_MAX_RETRIES and API_TIMEOUT_MS.
type codexAdapter struct {
	model  string
	named  string
	skills []string // the kit's skill names, to recognise a read of one
}

func (a *codexAdapter) Command(s Session, prompt string) (Command, error) {
	argv, env, err := codexArgv(s, prompt)
	if err != nil {
		return Command{}, err
	}
	a.model, a.named = s.Model, s.Version
	for _, sk := range s.Kit.Skills {
		a.skills = append(a.skills, filepath.Base(sk))
	}
	return Command{Argv: argv, NoStdin: true, Env: env}, nil
}

func (a *codexAdapter) Version() (Probe, bool) { return VersionProbe, true }

func (a *codexAdapter) Output(version string) Output {
	return &codexOutput{model: a.model, version: version, named: a.named, skills: a.skills}
}

// SkillsDir is under CODEX_HOME, which wfb sets to the private HOME (an arm
// that sets its own cannot have skills: see bench's checkKit).
func (a *codexAdapter) SkillsDir(home string) string { return filepath.Join(home, "skills") }

// Upstream is OPENAI_BASE_URL when the arm sets it, else the cell's
// ANTHROPIC_BASE_URL, from which codexProviderConfig builds the provider's
// base_url (see openAIEndpoint).
func (a *codexAdapter) Upstream(env map[string]string) (string, string) { return openAIUpstream(env) }

// ReportedField: turn.completed's usage names the cache read
// cached_input_tokens.
func (a *codexAdapter) ReportedField(column string) string {
	if column == "cache_read_input_tokens" {
		return "cached_input_tokens"
	}
	return column
}

// tomlString quotes s as a TOML basic string (JSON's escapes are valid
// TOML).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// codexArgv builds Codex's headless command line and the variables it adds
// to the session's environment: the sandbox mode, the model provider wfb
// defines, and the overrides that keep it quiet and stateless.
func codexArgv(spec Session, prompt string) (argv []string, env map[string]string, err error) {
	if err := codexSupports(spec); err != nil {
		return nil, nil, err
	}
	mode, err := codexMode(spec)
	if err != nil {
		return nil, nil, err
	}
	provider, env, err := codexProviderConfig(spec)
	if err != nil {
		return nil, nil, err
	}
	argv = append([]string{spec.Bin}, spec.Args...)
	// --strict-config makes Codex refuse an override key it does not know,
	// so a renamed setting fails loudly instead of being ignored.
	argv = append(argv, "exec", "--json", "--skip-git-repo-check", "--ephemeral",
		"--ignore-user-config", "--strict-config", "--color", "never")
	if spec.Model != "" {
		argv = append(argv, "-m", spec.Model)
	}
	if mode == "bypass" {
		argv = append(argv, "--dangerously-bypass-approvals-and-sandbox")
	} else {
		argv = append(argv, "-s", mode)
	}
	for _, d := range spec.Grant {
		argv = append(argv, "--add-dir", d)
	}
	for _, kv := range []string{
		"model_provider=" + tomlString(codexProvider),
		"model_providers." + codexProvider + "=" + provider,
		`approval_policy="never"`,
		"check_for_update_on_startup=false",
		"analytics.enabled=false",
		"feedback.enabled=false",
		`history.persistence="none"`,
		`web_search="disabled"`,
	} {
		argv = append(argv, "-c", kv)
	}
	kit, err := codexKitArgs(spec.Kit)
	if err != nil {
		return nil, nil, err
	}
	argv = append(argv, kit...)
	argv = append(argv, spec.ExtraArgs...)
	return append(argv, "--", prompt), env, nil
}

// codexSupports refuses what Codex exec cannot do: another output format,
// a turn limit, a tool allow-list.
func codexSupports(spec Session) error {
	switch {
	case spec.Bin == "":
		return errors.New("no agent binary")
	case spec.OutputFormat != "" && spec.OutputFormat != "jsonl":
		return fmt.Errorf("output format %q: codex prints jsonl only", spec.OutputFormat)
	case spec.MaxTurns > 0:
		return errors.New("max turns: codex exec has no turn limit, so an arm cannot set one")
	case len(spec.AllowedTools) > 0:
		return errors.New("allowed tools: codex exec has no tool allow-list, so an arm cannot set one")
	}
	return nil
}

// codexMode is the session's Codex sandbox mode: the spec's permission, or
// bypass inside a wfb sandbox and workspace-write outside one.
func codexMode(spec Session) (string, error) {
	mode := spec.Permission
	switch {
	case mode != "":
	case spec.Sandboxed:
		mode = "bypass"
	default:
		mode = "workspace-write"
	}
	if !slices.Contains(codexSandboxModes, mode) {
		return "", fmt.Errorf("permission %q: codex wants one of %s", mode, strings.Join(codexSandboxModes, ", "))
	}
	return mode, nil
}

// codexProviderConfig is the TOML of the model provider wfb defines for
// Codex, and the variables the session's environment needs for it:
// CODEX_HOME, and OPENAI_API_KEY when the cell's key is passed on.
func codexProviderConfig(spec Session) (provider string, env map[string]string, err error) {
	env = map[string]string{}
	home := spec.Env["CODEX_HOME"]
	if home == "" {
		// Codex refuses a CODEX_HOME that does not exist, and the session
		// uid may not be able to create one: the sandbox's fresh private
		// HOME is both fresh and writable.
		if home = spec.Env["HOME"]; home == "" {
			return "", nil, errors.New("codex needs HOME (or CODEX_HOME) in the session's environment")
		}
		env["CODEX_HOME"] = home
	}
	baseURL, err := openAIEndpoint("codex", spec.Env, env)
	if err != nil {
		return "", nil, err
	}
	retries, err := envCount(spec.Env, "CLAUDE_CODE_MAX_RETRIES", 2)
	if err != nil {
		return "", nil, err
	}
	idleMS, err := envCount(spec.Env, "API_TIMEOUT_MS", 120000)
	if err != nil {
		return "", nil, err
	}
	provider = fmt.Sprintf("{name=%s, base_url=%s, env_key=%s, wire_api=%s, request_max_retries=%d, stream_max_retries=%d, stream_idle_timeout_ms=%d}",
		tomlString("wfb"), tomlString(baseURL), tomlString("OPENAI_API_KEY"), tomlString("responses"), retries, retries, idleMS)
	return provider, env, nil
}

// envCount reads a non-negative integer setting from the session's
// environment, or def when it is absent.
func envCount(env map[string]string, name string, def int64) (int64, error) {
	s, ok := env[name]
	if !ok || s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer", name, s)
	}
	return n, nil
}

// codexOutput collects what matters from `codex exec --json`: the terminal
// events (turn.completed, turn.failed), the thread id, retries and
// warnings.
type codexOutput struct {
	model, version, named string

	jsonLines
	terminals   keptEvents // turn.completed / turn.failed events (one is valid)
	threadID    string
	retries     int
	errorEvents boundedList // top-level error events that are not retries
	warnings    boundedList // error items: Codex's warnings, not failures
	skills      []string
	tools       Tools
}

func (o *codexOutput) Tools() *Tools { return &o.tools }

// codexRetry matches the error event Codex prints before it retries a
// request or reconnects a stream.
var codexRetry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Reconnecting\.\.\.`) })

func (o *codexOutput) Line(l []byte, truncated bool) {
	var ev struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Message  string `json:"message"`
		Item     struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Message string `json:"message"`
			Server  string `json:"server"`
			Tool    string `json:"tool"`
			Command string `json:"command"`
			Status  string `json:"status"`
		} `json:"item"`
	}
	l, ok := o.decode(l, truncated, &ev)
	if !ok {
		return
	}
	switch ev.Type {
	case "thread.started":
		o.threadID = ev.ThreadID
		o.tools.measured = true
	case "turn.completed", "turn.failed":
		o.terminals.add(l)
	case "error":
		if codexRetry().MatchString(ev.Message) {
			o.retries++
		} else {
			o.errorEvents.add(wfb.Clip(ev.Message, 300))
		}
	case "item.started", "item.completed":
		if ev.Type == "item.completed" && ev.Item.Type == "error" {
			o.warnings.add(wfb.Clip(ev.Item.Message, 200))
		}
		if name := codexToolName(ev.Item.Type, ev.Item.Server, ev.Item.Tool, ev.Item.Command, o.skills); name != "" {
			o.tools.call(ev.Item.ID, name)
			if ev.Type == "item.completed" && ev.Item.Status == "failed" {
				o.tools.failedCall(ev.Item.ID)
			}
		}
	}
}

// codexToolName is the name wfb counts a Codex item under, or "" for an
// item that is not a tool call (a message, reasoning, a todo list, an
// error). Codex reports a call by its item type (command_execution,
// file_change, web_search, mcp_tool_call): an MCP call as
// mcp__SERVER__TOOL with the server's own tool name; a command that reads
// one of the kit's skills (.../skills/NAME/SKILL.md — Codex has no skill
// tool, its model reads the file) as skill:NAME.
func codexToolName(typ, server, tool, command string, skills []string) string {
	switch typ {
	case "mcp_tool_call":
		return mcpToolName(server, tool)
	case "command_execution":
		for _, s := range skills {
			if strings.Contains(command, "skills/"+s+"/SKILL.md") {
				return skillPrefix + s
			}
		}
		return typ
	case "file_change", "web_search":
		return typ
	}
	return ""
}

// codexTerminal is a turn.completed or turn.failed event; usage is kept raw
// so that validation sees what Codex printed.
type codexTerminal struct {
	Type  string                     `json:"type"`
	Usage map[string]json.RawMessage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// CodexUsageFields are the usage fields of Codex's turn.completed that a
// complete measurement carries. cached_input_tokens is a SUBSET of
// input_tokens, reasoning_output_tokens a subset of output_tokens.
var CodexUsageFields = []string{"input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens"}

// codexProviderText recognises a turn failure that came from the provider:
// an HTTP status Codex gave up on, an error body it passed through, or a
// stream the provider dropped.
var codexProviderText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)unexpected status [0-9]{3}|^\s*\{\s*"error"|stream disconnected|exceeded retry limit`)
})

func (o *codexOutput) Interpret(row *store.Result, p Process) {
	exit := p.Exit
	row.SessionID = o.threadID
	recordVersion(row, o.version, o.named)
	// --json shows every retry, so the count is a measurement even when 0.
	retries := int64(o.retries)
	row.APIRetries = &retries

	switch n := o.terminals.n; {
	case n == 0:
		var errs []string
		if len(o.errorEvents.items) > 0 {
			errs = append(errs, "errors: "+o.errorEvents.join(" | "))
		}
		row.AddFailure(wfb.KindSessionError, o.missing("turn.completed or turn.failed event", p, errs...))
		return
	case n > 1:
		row.ResultEvent = o.terminals.all()
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the agent printed %d terminal events; exactly one is expected", n))
		return
	}
	row.ResultEvent = string(o.terminals.last)
	var term codexTerminal
	if err := json.Unmarshal(o.terminals.last, &term); err != nil {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the terminal event is malformed: %v", err))
		return
	}
	var problems []string
	if term.Type == "turn.failed" {
		msg := "(no explanation given)"
		if term.Error != nil && term.Error.Message != "" {
			msg = wfb.Clip(term.Error.Message, 500)
		}
		kind := wfb.KindSessionError
		if codexProviderText().MatchString(msg) {
			kind = wfb.KindProviderError
		}
		row.AddFailure(kind, "the agent reported a failed turn: "+msg)
	} else {
		problems = o.measure(row, term.Usage)
	}
	if p.ExitCode == nil || *p.ExitCode != 0 {
		row.AddFailure(wfb.KindSessionError, "the agent ended with "+exit)
	}
	o.failNonJSON(row, p)
	if len(problems) > 0 {
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: "+strings.Join(problems, "; "))
	}
	if len(o.warnings.items) > 0 {
		row.AddDetail("the agent warned: " + o.warnings.join(" | "))
	}
}

// measure validates turn.completed's usage and records it normalised to
// the results columns' Anthropic semantics (see store.Result.UsageSemantics),
// with the reported figures kept alongside. It returns why it refused.
func (o *codexOutput) measure(row *store.Result, usage map[string]json.RawMessage) []string {
	if usage == nil {
		return []string{"turn.completed has no usage"}
	}
	vals, problems := parseCounts(usage, "usage.", CodexUsageFields)
	if len(problems) > 0 {
		return problems
	}
	input, cached, output, reasoning := vals[0], vals[1], vals[2], vals[3]
	switch {
	case input == 0:
		// Codex prints zeros when the provider sent no usage at all, and a
		// model request always has input: this is "not reported", never a
		// measured zero.
		return []string{"usage.input_tokens is 0, which no model request has: the provider reported no usage (Codex prints zeros for a missing usage block)"}
	case cached > input:
		return []string{fmt.Sprintf("usage.cached_input_tokens %d exceeds input_tokens %d (cached input is part of input)", cached, input)}
	case reasoning > output:
		return []string{fmt.Sprintf("usage.reasoning_output_tokens %d exceeds output_tokens %d (reasoning is part of output)", reasoning, output)}
	}
	uncached := input - cached
	row.UsageSemantics = wfb.SemanticsOpenAI
	row.InputTokens, row.CacheReadInputTokens, row.OutputTokens = &uncached, &cached, &output
	row.CacheCreationInputTokens = nil // OpenAI does not report cache writes
	row.ReportedInputTokens, row.ReportedCachedInputTokens = &input, &cached
	row.ReasoningOutputTokens = &reasoning
	if p, ok := PriceFor(o.model); ok {
		cost := p.Cost(uncached, output, cached, 0)
		row.CostUSD, row.CostSource = &cost, "derived"
	} else {
		row.AddDetail(fmt.Sprintf("cost not recorded: no price for model %q in wfb's price table", o.model))
	}
	return nil
}

// codexKitArgs are Codex's -c overrides for the kit: each MCP server under
// mcp_servers.NAME (a secret passed by name in env_vars, which Codex
// forwards from its own environment), and each setting under its dotted
// key. --strict-config, which wfb always passes, makes Codex refuse a key
// it does not know.
func codexKitArgs(k Kit) ([]string, error) {
	var args []string
	for _, s := range k.MCPServers {
		key := "mcp_servers." + s.Name + "."
		if !s.Stdio() {
			args = append(args, "-c", key+"url="+tomlString(s.URL))
			continue
		}
		// required: a server that does not start fails the session, where
		// Codex otherwise goes on without it and says nothing.
		args = append(args, "-c", key+"command="+tomlString(s.Command), "-c", key+"required=true")
		if len(s.Args) > 0 {
			v, _ := tomlValue(toAny(s.Args))
			args = append(args, "-c", key+"args="+v)
		}
		literal := map[string]any{}
		var names []any
		for _, v := range s.Env {
			if v.Literal {
				literal[v.Name] = v.Value
			} else {
				names = append(names, v.Name)
			}
		}
		if len(literal) > 0 {
			v, _ := tomlValue(literal)
			args = append(args, "-c", key+"env="+v)
		}
		if len(names) > 0 {
			v, _ := tomlValue(names)
			args = append(args, "-c", key+"env_vars="+v)
		}
	}
	settings, err := codexSettings("", k.Settings)
	if err != nil {
		return nil, err
	}
	return append(args, settings...), nil
}

// codexSettings flattens settings into -c key=VALUE pairs: a table's keys
// join its name with a dot, as Codex's -c reads them.
func codexSettings(prefix string, m map[string]any) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !tomlBareKey().MatchString(k) {
			return nil, fmt.Errorf("settings key %q: codex's -c overrides take letters, digits, '_' and '-' only", prefix+k)
		}
		if sub, ok := m[k].(map[string]any); ok {
			more, err := codexSettings(prefix+k+".", sub)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			continue
		}
		v, err := tomlValue(m[k])
		if err != nil {
			return nil, fmt.Errorf("settings key %s: %w", prefix+k, err)
		}
		out = append(out, "-c", prefix+k+"="+v)
	}
	return out, nil
}

var tomlBareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// tomlValue writes a plain value (as strictyaml.Value makes them) as TOML.
func tomlValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return tomlString(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int, int64, uint64:
		return fmt.Sprint(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", fmt.Errorf("%v is not a TOML number", x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case json.Number:
		return x.String(), nil
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, err := tomlValue(e)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, err := tomlValue(x[k])
			if err != nil {
				return "", err
			}
			parts = append(parts, tomlString(k)+" = "+s)
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case nil:
		return "", errors.New("TOML has no null: leave the key out")
	}
	return "", fmt.Errorf("a %T cannot be written as TOML", v)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
