package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Gemini CLI approval modes an arm may name as its permission. yolo (the
// default) runs every tool: without it a headless session has no
// write_file, replace or run_shell_command at all.
var geminiApprovalModes = []string{"yolo", "auto_edit", "default", "plan"}

// geminiAdapter drives Gemini CLI (npm @google/gemini-cli) headless: the
// prompt as --prompt (see geminiArgPromptMax), stream-json out, and a
// settings file of wfb's own in the session's private HOME.
//
// The API is reached at GOOGLE_GEMINI_BASE_URL: the spec's when set, else
// the cell's provider, ANTHROPIC_BASE_URL (wfb's mock serves all three APIs
// on one base URL, and the meter proxies them all). The key is
// GEMINI_API_KEY: the spec's, else the cell's key.
//
// Retries: the settings allow one attempt per request (general.maxAttempts
// 1). Gemini CLI retries a stream that ends without a finishReason without
// a trace in its output and concatenates the text of every try, so a retry
// would let a broken answer pass as a good one; with one attempt a 429, a
// 5xx or a broken stream ends the session as a provider-error at once, and
// retrying is left to wfb's own attempts.
type geminiAdapter struct {
	named   string
	servers []string // the kit's MCP server names, to read its tool names back
}

func (a *geminiAdapter) Command(s Session, prompt string) (Command, error) {
	argv, env, err := geminiArgv(s)
	if err != nil {
		return Command{}, err
	}
	a.named = s.Version
	for _, srv := range s.Kit.MCPServers {
		a.servers = append(a.servers, srv.Name)
	}
	if len(prompt) > geminiArgPromptMax || strings.ContainsRune(prompt, 0) {
		return Command{Argv: argv, Stdin: prompt, Env: env}, nil
	}
	return Command{Argv: append(argv, "--prompt="+prompt), Env: env}, nil
}

func (a *geminiAdapter) Version() (Probe, bool) { return VersionProbe, true }

func (a *geminiAdapter) SkillsDir(home string) string {
	return filepath.Join(home, ".gemini", "skills")
}

// Upstream is GOOGLE_GEMINI_BASE_URL when the arm sets it, else the cell's
// ANTHROPIC_BASE_URL, which geminiEnv passes on as GOOGLE_GEMINI_BASE_URL.
func (a *geminiAdapter) Upstream(env map[string]string) (string, string) {
	if url := env["GOOGLE_GEMINI_BASE_URL"]; url != "" {
		return "GOOGLE_GEMINI_BASE_URL", url
	}
	return "ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"]
}

func (a *geminiAdapter) ReportedField(column string) string { return column }

// geminiArgPromptMax is the longest prompt given to Gemini CLI as its
// --prompt argument; a longer one (past Linux's 128 KiB limit on one
// argument) goes on stdin. The argument is preferred: Gemini CLI 0.61.0
// waits only 500 ms for piped stdin from when it starts reading, so on a
// loaded machine its own start-up can outlast the wait and it exits 42,
// "No input provided via stdin", with the prompt still in the pipe. Its
// stdin is then empty and closed, which it reads as no extra input.
const geminiArgPromptMax = 100 << 10

func (a *geminiAdapter) Output(version string) Output {
	return &geminiOutput{version: version, named: a.named, servers: a.servers}
}

// geminiArgv builds Gemini CLI's headless command line and the variables
// it adds to the session's environment, and writes its settings file.
func geminiArgv(spec Session) (argv []string, env map[string]string, err error) {
	mode, err := geminiSupports(spec)
	if err != nil {
		return nil, nil, err
	}
	env, err = geminiEnv(spec)
	if err != nil {
		return nil, nil, err
	}
	settings, err := writeGeminiSettings(spec)
	if err != nil {
		return nil, nil, err
	}
	// System settings take precedence over the user's and the workspace's
	// (a repository's .gemini/settings.json), and keep the host's
	// /etc/gemini-cli out of the session.
	env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = settings
	env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] = settings
	argv = append([]string{spec.Bin}, spec.Args...)
	argv = append(argv, "--output-format", "stream-json", "--approval-mode", mode)
	if spec.Model != "" {
		// Without a model Gemini CLI first asks a router model which to use.
		argv = append(argv, "--model", spec.Model)
	}
	// Its file tools refuse paths outside the workspace directories.
	for _, d := range spec.Grant {
		argv = append(argv, "--include-directories", d)
	}
	return append(argv, spec.ExtraArgs...), env, nil
}

// geminiSupports refuses what Gemini CLI cannot do headless and returns its
// approval mode.
func geminiSupports(spec Session) (string, error) {
	return approvalMode(spec, "gemini", geminiApprovalModes, "yolo, auto_edit, default or plan")
}

// approvalMode refuses what a CLI whose approval mode decides which tools
// run (Gemini CLI, Qwen Code) cannot do headless, and returns the mode:
// the arm's permission, yolo when it names none. name is the CLI as the
// messages call it; modes its modes, listed in words by say.
func approvalMode(spec Session, name string, modes []string, say string) (string, error) {
	switch {
	case spec.Bin == "":
		return "", errors.New("no agent binary")
	case spec.OutputFormat != "" && spec.OutputFormat != "stream-json":
		return "", fmt.Errorf("output format %q: wfb reads %s's stream-json only", spec.OutputFormat, name)
	case len(spec.AllowedTools) > 0:
		return "", fmt.Errorf("allowed tools: %s's approval mode decides which tools run (permission: %s), so an arm cannot list them", name, say)
	}
	mode := spec.Permission
	if mode == "" {
		mode = "yolo"
	}
	if !slices.Contains(modes, mode) {
		return "", fmt.Errorf("permission %q: %s wants one of %s", mode, name, strings.Join(modes, ", "))
	}
	return mode, nil
}

// geminiEnv is what the session's environment needs for Gemini CLI: the
// base URL and key, and one process instead of a relaunched child.
func geminiEnv(spec Session) (map[string]string, error) {
	env := map[string]string{"GEMINI_CLI_NO_RELAUNCH": "true"}
	if spec.Env["GOOGLE_GEMINI_BASE_URL"] == "" {
		base := strings.TrimSuffix(spec.Env["ANTHROPIC_BASE_URL"], "/")
		if base == "" {
			return nil, errors.New("gemini needs a provider base URL: GOOGLE_GEMINI_BASE_URL or the cell's ANTHROPIC_BASE_URL")
		}
		env["GOOGLE_GEMINI_BASE_URL"] = base
	}
	if spec.Env["GEMINI_API_KEY"] == "" {
		env["GEMINI_API_KEY"] = spec.Env["ANTHROPIC_API_KEY"]
	}
	return env, nil
}

// geminiSettings is the settings file wfb writes for a session: API-key
// auth (a base URL otherwise switches it to "gateway" auth, which headless
// validation refuses), no folder-trust prompt, no update checks, usage
// statistics or telemetry, no ripgrep download, one attempt per request
// (see geminiAdapter), and the arm's turn limit.
func geminiSettings(maxTurns int) map[string]any {
	s := map[string]any{
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
			"maxAttempts":                  1,
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"tools":     map[string]any{"useRipgrep": false},
	}
	if maxTurns > 0 {
		s["model"] = map[string]any{"maxSessionTurns": maxTurns}
	}
	return s
}

// geminiKitSettings merges the kit into the settings wfb writes for Gemini
// CLI: the arm's settings over wfb's (a key the arm sets wins), and its MCP
// servers as mcpServers, a secret written as $NAME, which Gemini CLI
// resolves from its environment.
func geminiKitSettings(base map[string]any, k Kit) map[string]any {
	merged := mergeSettings(base, k.Settings)
	if len(k.MCPServers) == 0 {
		return merged
	}
	servers := map[string]any{}
	for _, s := range k.MCPServers {
		if !s.Stdio() {
			servers[s.Name] = map[string]any{"httpUrl": s.URL}
			continue
		}
		cfg := map[string]any{"command": s.Command, "args": nonNil(s.Args)}
		if len(s.Env) > 0 {
			cfg["env"] = serverEnv(s, func(name string) string { return "$" + name })
		}
		servers[s.Name] = cfg
	}
	merged["mcpServers"] = servers
	return merged
}

// writeGeminiSettings writes HOME/.gemini/settings.json, owned like HOME
// (the session uid's). It never overwrites one: a fresh private HOME has
// none, and a HOME that has one is somebody's real home.
func writeGeminiSettings(spec Session) (string, error) {
	home := spec.Env["HOME"]
	if home == "" {
		return "", errors.New("gemini needs HOME in the session's environment (its settings go there)")
	}
	fi, err := os.Stat(home)
	if err != nil {
		return "", fmt.Errorf("gemini's HOME: %w", err)
	}
	dir := filepath.Join(home, ".gemini")
	path := filepath.Join(dir, "settings.json")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("gemini's settings: %w", err)
	}
	data, err := json.MarshalIndent(geminiKitSettings(geminiSettings(spec.MaxTurns), spec.Kit), "", "  ")
	if err != nil {
		return "", fmt.Errorf("gemini's settings: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%s exists: wfb writes gemini's settings into a fresh private HOME and overwrites none", path)
	}
	if err != nil {
		return "", fmt.Errorf("gemini's settings: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("gemini's settings: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		for _, p := range []string{dir, path} {
			if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
				return "", fmt.Errorf("gemini's settings: %w", err)
			}
		}
	}
	return path, nil
}

// geminiOutput collects what matters from Gemini CLI's stream-json: the
// result events, the session id, and its error events.
type geminiOutput struct {
	version, named string

	jsonLines
	results   keptEvents // result events (one is valid)
	sessionID string
	errors    boundedList // error events' messages
	servers   []string
	tools     Tools
}

func (o *geminiOutput) Tools() *Tools { return &o.tools }

func (o *geminiOutput) Line(l []byte, truncated bool) {
	var ev struct {
		Type       string          `json:"type"`
		SessionID  string          `json:"session_id"`
		Message    string          `json:"message"`
		ToolName   string          `json:"tool_name"`
		ToolID     string          `json:"tool_id"`
		Parameters json.RawMessage `json:"parameters"`
		Status     string          `json:"status"`
	}
	l, ok := o.decode(l, truncated, &ev)
	if !ok {
		return
	}
	switch ev.Type {
	case "init":
		o.sessionID = ev.SessionID
		o.tools.measured = true
	case "tool_use":
		o.tools.call(ev.ToolID, geminiToolName(ev.ToolName, ev.Parameters, o.servers))
	case "tool_result":
		if ev.Status != "success" {
			o.tools.failedCall(ev.ToolID)
		}
	case "result":
		o.results.add(l)
	case "error":
		o.errors.add(wfb.Clip(ev.Message, 300))
	}
}

// geminiToolName is a Gemini CLI tool call's name as wfb counts it: an
// MCP tool, which Gemini CLI names mcp_SERVER_TOOL, as
// mcp__SERVER__TOOL for the kit's server it names; activate_skill as the
// skill it activates (skill:NAME); any other as Gemini CLI names it.
func geminiToolName(name string, params json.RawMessage, servers []string) string {
	if name == "activate_skill" {
		if s := skillName(params, "name"); s != "" {
			return skillPrefix + s
		}
	}
	// The longest server name first: "a_b" before "a".
	best := ""
	for _, s := range servers {
		if strings.HasPrefix(name, "mcp_"+s+"_") && len(s) > len(best) {
			best = s
		}
	}
	if best != "" {
		return mcpToolName(best, strings.TrimPrefix(name, "mcp_"+best+"_"))
	}
	return name
}

// geminiResult is stream-json's result event, counts kept raw.
type geminiResult struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	// Stats holds the session's counts (geminiCounts) and "models", the
	// same counts per model.
	Stats map[string]json.RawMessage `json:"stats"`
}

// geminiCounts are a stream-json stats block's token counts: input_tokens
// is Gemini's prompt count (cached INCLUDED), cached the cached part, input
// prompt − cached, output_tokens the candidates, total_tokens the API's
// totalTokenCount summed (prompt + candidates + thoughts + tool-use
// prompt).
type geminiCounts map[string]json.RawMessage

// GeminiUsageFields are the counts of a stats block a complete measurement
// carries.
var GeminiUsageFields = []string{"input_tokens", "cached", "input", "output_tokens", "total_tokens"}

// geminiProviderText recognises a failure the provider caused: an API error
// Gemini CLI passed on, or a stream that ended without a finish reason.
var geminiProviderText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\[API Error|finish reason|INVALID_STREAM`) })

func (o *geminiOutput) Interpret(row *store.Result, p Process) {
	exit := p.Exit
	row.SessionID = o.sessionID
	recordVersion(row, o.version, o.named)
	switch n := o.results.n; {
	case n == 0:
		var more []string
		if len(o.errors.items) > 0 {
			more = append(more, "errors: "+o.errors.join(" | "))
		}
		row.AddFailure(wfb.KindSessionError, o.missing("result event", p, more...))
		return
	case n > 1:
		row.ResultEvent = o.results.all()
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the agent printed %d result events; exactly one is expected", n))
		return
	}
	row.ResultEvent = string(o.results.last)
	var res geminiResult
	if err := json.Unmarshal(o.results.last, &res); err != nil {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the result event is malformed: %v", err))
		return
	}
	var problems []string
	switch res.Status {
	case "success":
		problems = o.measure(row, &res)
		if p.ExitCode == nil || *p.ExitCode != 0 {
			row.AddFailure(wfb.KindSessionError, "the agent ended with "+exit)
		}
	case "error":
		// Its exit code is the HTTP status mod 256 (429 → 173), or 1, or
		// even 0 for a broken stream: the result says what happened.
		o.failed(row, &res, exit)
	default:
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the result status is %q, want success or error", res.Status))
	}
	o.failNonJSON(row, p)
	if len(problems) > 0 {
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: "+strings.Join(problems, "; "))
	}
}

// failed records an error result: a provider-error when the provider
// caused it, else a session-error.
func (o *geminiOutput) failed(row *store.Result, res *geminiResult, exit string) {
	var parts []string
	if res.Error != nil {
		parts = append(parts, wfb.Clip(strings.TrimSpace(res.Error.Type+": "+res.Error.Message), 500))
	}
	if len(o.errors.items) > 0 {
		parts = append(parts, o.errors.join(" | "))
	}
	if len(parts) == 0 {
		parts = append(parts, "(no explanation given)")
	}
	msg := strings.Join(parts, " | ")
	kind := wfb.KindSessionError
	if geminiProviderText().MatchString(msg) {
		kind = wfb.KindProviderError
	}
	row.AddFailure(kind, fmt.Sprintf("the agent reported an error (%s): %s", exit, msg))
}

// geminiUsage is one stats block read: Gemini's figures.
type geminiUsage struct{ prompt, cached, candidates, thoughts int64 }

// readGeminiCounts validates a stats block: every count present and a
// whole number, cached within the prompt, input = prompt − cached, and
// total_tokens at least prompt + candidates (the rest is thoughts).
func readGeminiCounts(c geminiCounts, prefix string) (geminiUsage, []string) {
	vals, problems := parseCounts(c, prefix, GeminiUsageFields)
	if len(problems) > 0 {
		return geminiUsage{}, problems
	}
	prompt, cached, input, candidates, total := vals[0], vals[1], vals[2], vals[3], vals[4]
	switch {
	case cached > prompt:
		return geminiUsage{}, []string{fmt.Sprintf("%scached %d exceeds input_tokens %d (the prompt count includes cached tokens)", prefix, cached, prompt)}
	case input != prompt-cached:
		return geminiUsage{}, []string{fmt.Sprintf("%sinput %d is not input_tokens %d − cached %d", prefix, input, prompt, cached)}
	case total < prompt+candidates:
		return geminiUsage{}, []string{fmt.Sprintf("%stotal_tokens %d is less than input_tokens %d + output_tokens %d (the provider's totalTokenCount is missing or wrong)", prefix, total, prompt, candidates)}
	}
	return geminiUsage{prompt: prompt, cached: cached, candidates: candidates, thoughts: total - prompt - candidates}, nil
}

// measure validates the result's stats and records them in the results
// columns' semantics (wfb.SemanticsOpenAI: Gemini's prompt count includes its
// cached tokens, as OpenAI's input does): input_tokens = prompt − cached,
// cache_read = cached, cache_creation NULL (Gemini reports no cache
// writes), output = candidates + thoughts, reasoning = thoughts. Thoughts
// are what total_tokens holds beyond prompt and candidates: stream-json
// prints no thoughts count of its own. Cost is derived per model from
// wfb's price table. It returns why it refused.
func (o *geminiOutput) measure(row *store.Result, res *geminiResult) []string {
	if res.Stats == nil {
		return []string{"the result has no stats"}
	}
	u, problems := readGeminiCounts(geminiCounts(res.Stats), "stats.")
	if len(problems) > 0 {
		return problems
	}
	var perModel map[string]geminiCounts
	if err := json.Unmarshal(res.Stats["models"], &perModel); err != nil {
		return []string{fmt.Sprintf("stats.models is not an object of models: %v", err)}
	}
	if u.prompt == 0 {
		// Gemini CLI counts a missing usageMetadata as zeros, and a model
		// request always has a prompt: this is "not reported".
		return []string{"stats.input_tokens is 0, which no model request has: the provider reported no usage (Gemini CLI counts a missing usageMetadata as zeros)"}
	}
	models, cost, problems := geminiModels(perModel, u)
	if len(problems) > 0 {
		return problems
	}
	input, output := u.prompt-u.cached, u.candidates+u.thoughts
	if output > wfb.MaxCount {
		return []string{fmt.Sprintf("stats: candidates and thoughts add up past wfb's bound on a count (%s)", wfb.MaxCountText)}
	}
	row.UsageSemantics = wfb.SemanticsOpenAI
	row.InputTokens, row.CacheReadInputTokens, row.OutputTokens = &input, &u.cached, &output
	row.CacheCreationInputTokens = nil
	row.ReportedInputTokens, row.ReportedCachedInputTokens = &u.prompt, &u.cached
	row.ReasoningOutputTokens = &u.thoughts
	row.ModelUsage = models
	if cost.ok {
		row.CostUSD, row.CostSource = &cost.usd, "derived"
	} else {
		row.AddDetail("cost not recorded: " + cost.why)
	}
	return nil
}

// derivedCost is a session's cost from the price table, or why not.
type derivedCost struct {
	usd float64
	ok  bool
	why string
}

// geminiModels reads the per-model stats (keyed by the model the API
// named, its modelVersion) into model_usage rows, each priced when wfb
// knows the model, and checks that they add up to the totals. The
// session's cost is their sum; NULL when any model has no price.
func geminiModels(models map[string]geminiCounts, total geminiUsage) ([]store.ModelUsage, derivedCost, []string) {
	if len(models) > maxModels {
		return nil, derivedCost{}, []string{tooManyModels("stats.models", len(models))}
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	var rows []store.ModelUsage
	var sum geminiUsage
	cost := derivedCost{ok: len(names) > 0, why: "stats.models is empty"}
	var unpriced []string
	for _, m := range names {
		if strings.TrimSpace(m) == "" {
			return nil, derivedCost{}, []string{fmt.Sprintf("stats.models[%q]: usage under no model name", wfb.Clip(m, 100))}
		}
		u, problems := readGeminiCounts(models[m], fmt.Sprintf("stats.models[%q].", wfb.Clip(m, 100)))
		if len(problems) > 0 {
			return nil, derivedCost{}, problems
		}
		sum.prompt, sum.cached, sum.candidates, sum.thoughts = sum.prompt+u.prompt, sum.cached+u.cached, sum.candidates+u.candidates, sum.thoughts+u.thoughts
		input, output := u.prompt-u.cached, u.candidates+u.thoughts
		if output > wfb.MaxCount {
			return nil, derivedCost{}, []string{fmt.Sprintf("stats.models[%q]: candidates and thoughts add up past wfb's bound on a count (%s)", wfb.Clip(m, 100), wfb.MaxCountText)}
		}
		row := store.ModelUsage{Model: m, InputTokens: &input, OutputTokens: &output, CacheReadInputTokens: &u.cached}
		if p, ok := PriceFor(m); ok {
			c := p.Cost(input, output, u.cached, 0)
			row.CostUSD = &c
			cost.usd += c
		} else {
			unpriced = append(unpriced, wfb.Clip(m, 100))
		}
		rows = append(rows, row)
	}
	if sum != total {
		return nil, derivedCost{}, []string{fmt.Sprintf("stats.models add up to %+v, not the totals %+v", sum, total)}
	}
	if len(unpriced) > 0 {
		cost = derivedCost{why: fmt.Sprintf("no price for model %s in wfb's price table", strings.Join(unpriced, ", "))}
	}
	return rows, cost, nil
}
