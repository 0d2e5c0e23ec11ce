package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// AnthropicAPI is the base URL Claude Code calls when ANTHROPIC_BASE_URL is
// not set.
const AnthropicAPI = "https://api.anthropic.com"

// claudeAdapter drives Claude Code (and wfb's stand-in, which shares its
// interface): prompt on stdin, json or stream-json out, the kit's MCP
// servers and settings as files in the private HOME named by flags.
type claudeAdapter struct {
	// real is the real CLI, not the stand-in: it is asked its version,
	// its default provider is Anthropic's API, and it needs a rule to call
	// an MCP server's tools headless.
	real  bool
	named string // the version the arm named, if any
}

func (a *claudeAdapter) Command(s Session, prompt string) (Command, error) {
	argv, err := claudeArgv(s, a.real)
	a.named = s.Version
	return Command{Argv: argv, Stdin: prompt}, err
}

func (a *claudeAdapter) Version() (Probe, bool) { return VersionProbe, a.real }

func (a *claudeAdapter) Output(version string) Output {
	return &claudeCLIOutput{claudeOutput: &claudeOutput{version: version}, named: a.named}
}

func (a *claudeAdapter) SkillsDir(home string) string {
	return filepath.Join(home, ".claude", "skills")
}

func (a *claudeAdapter) Upstream(env map[string]string) (string, string) {
	const key = "ANTHROPIC_BASE_URL"
	if url := env[key]; url != "" || !a.real {
		return key, url
	}
	return key, AnthropicAPI
}

func (a *claudeAdapter) ReportedField(column string) string { return column }

// claudeArgv builds Claude Code's headless command line (the stand-in shares
// its interface, real says it is not the stand-in). The prompt goes on
// stdin.
func claudeArgv(s Session, real bool) ([]string, error) {
	if s.Bin == "" {
		return nil, errors.New("no agent binary")
	}
	format := s.OutputFormat
	if format == "" {
		format = "stream-json"
	}
	if format != "stream-json" && format != "json" {
		return nil, fmt.Errorf("output format %q: want stream-json or json", format)
	}
	argv := append([]string{s.Bin}, s.Args...)
	argv = append(argv, "-p", "--output-format", format)
	if format == "stream-json" {
		argv = append(argv, "--verbose")
	}
	if s.Model != "" {
		argv = append(argv, "--model", s.Model)
	}
	if s.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(s.MaxTurns))
	}
	perm := s.Permission
	if perm == "" {
		perm = "acceptEdits"
	}
	argv = append(argv, "--permission-mode", perm)
	if len(s.AllowedTools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(s.AllowedTools, ","))
	}
	// Claude Code silently denies writes outside the working directory
	// unless the directory is granted.
	for _, d := range s.Grant {
		argv = append(argv, "--add-dir", d)
	}
	argv = append(argv, "--no-session-persistence")
	kit, err := claudeKitArgs(s, real)
	if err != nil {
		return nil, err
	}
	argv = append(argv, kit...)
	return append(argv, s.ExtraArgs...), nil
}

// claudeKitArgs writes the kit's MCP servers and settings for Claude Code
// (and the stand-in) into HOME and returns the flags that name them.
// --strict-mcp-config keeps every other MCP configuration out: the arm's
// servers are the session's only ones.
func claudeKitArgs(s Session, real bool) ([]string, error) {
	k := s.Kit
	home := s.Env["HOME"]
	var args []string
	if len(k.MCPServers) > 0 {
		servers := map[string]any{}
		for _, srv := range k.MCPServers {
			if !srv.Stdio() {
				servers[srv.Name] = map[string]any{"type": "http", "url": srv.URL}
				continue
			}
			cfg := map[string]any{"type": "stdio", "command": srv.Command, "args": nonNil(srv.Args)}
			if len(srv.Env) > 0 {
				cfg["env"] = serverEnv(srv, func(name string) string { return "${" + name + "}" })
			}
			servers[srv.Name] = cfg
		}
		path, err := writeKitJSON(home, "mcp.json", map[string]any{"mcpServers": servers})
		if err != nil {
			return nil, fmt.Errorf("write the MCP configuration: %w", err)
		}
		args = append(args, "--mcp-config", path, "--strict-mcp-config")
		// Claude Code denies an MCP tool under acceptEdits until a rule
		// allows it (headless, nobody is asked): the arm gave the agent
		// its servers to use. The stand-in reads --allowedTools as the
		// only tools that may run, so it gets the rules only beside the
		// arm's own list.
		if real || len(s.AllowedTools) > 0 {
			var rules []string
			for _, srv := range k.MCPServers {
				rules = append(rules, mcpToolPrefix+srv.Name)
			}
			args = append(args, "--allowedTools", strings.Join(rules, ","))
		}
	}
	if k.Settings != nil {
		path, err := writeKitJSON(home, "settings.json", k.Settings)
		if err != nil {
			return nil, fmt.Errorf("write the settings: %w", err)
		}
		args = append(args, "--settings", path)
	}
	return args, nil
}

// claudeOutput collects what matters from Claude Code's stdout (json or
// stream-json): the result events, and enough about the rest to explain a
// refusal.
type claudeOutput struct {
	jsonLines
	results    keptEvents // the result events (at most one is valid)
	apiRetries int
	// streamed is set by stream-json's system/init event: only a stream
	// shows api_retry events, so only then is their count a measurement.
	streamed bool
	// version is the CLI's version, probed before the session; when set it
	// is the row's agent_version (see recordVersion).
	version string
	// parsed is the one result event, once Interpret decoded it.
	parsed *claudeResult
	tools  Tools
	// mcpFailed are the MCP servers the init event says did not start.
	mcpFailed boundedList
}

func (o *claudeOutput) Tools() *Tools { return &o.tools }

// line consumes one stdout line. It must not retain l.
func (o *claudeOutput) Line(l []byte, truncated bool) {
	var head struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	l, ok := o.decode(l, truncated, &head)
	if !ok {
		return
	}
	switch {
	case head.Type == "result":
		o.results.add(l)
	case head.Type == "system" && head.Subtype == "api_retry":
		o.apiRetries++
	case head.Type == "system" && head.Subtype == "init":
		o.streamed = true
		o.tools.measured = true
		o.readServers(l)
	case head.Type == "assistant":
		o.countTools(l)
	case head.Type == "user":
		o.failedTools(l)
	}
}

// readServers notes the MCP servers the init event lists as not connected.
func (o *claudeOutput) readServers(l []byte) { serversNotConnected(l, &o.mcpFailed) }

// failedTools notes the calls a user event's tool results report as
// errors (a refusal, an unknown tool or skill, a failure).
func (o *claudeOutput) failedTools(l []byte) { failedContentTools(&o.tools, l) }

// countTools counts the tool calls of an assistant event: its tool_use
// blocks (built-in and MCP tools, mcp__SERVER__TOOL in Claude Code's own
// spelling) and server_tool_use blocks; a call of the Skill tool counts as
// the skill it invokes (skill:NAME).
func (o *claudeOutput) countTools(l []byte) {
	countContentTools(&o.tools, l, func(name string, input json.RawMessage) string {
		if name == "Skill" {
			if s := skillName(input, "skill", "command", "name"); s != "" {
				return skillPrefix + s
			}
		}
		return name
	})
}

// Claude Code's stream-json events, which Qwen Code's stream-json copies:
// an init event listing the MCP servers and their status, assistant events
// whose content holds the tool calls, user events whose content holds
// their results.

// serversNotConnected adds to failed each MCP server an init event (l)
// lists with a status other than connected.
func serversNotConnected(l []byte, failed *boundedList) {
	var ev struct {
		Servers []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"mcp_servers"`
	}
	if json.Unmarshal(l, &ev) != nil {
		return
	}
	for _, s := range ev.Servers {
		if s.Status != "connected" {
			failed.add(fmt.Sprintf("%s (%s)", wfb.Clip(s.Name, 64), wfb.Clip(s.Status, 32)))
		}
	}
}

// failedContentTools notes the calls whose tool_result blocks, in a user
// event (l), are errors.
func failedContentTools(tools *Tools, l []byte) {
	var ev struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	var blocks []struct {
		Type    string `json:"type"`
		ID      string `json:"tool_use_id"`
		IsError bool   `json:"is_error"`
	}
	if json.Unmarshal(l, &ev) != nil || json.Unmarshal(ev.Message.Content, &blocks) != nil {
		return // a string content, a prompt: no tool results
	}
	for _, b := range blocks {
		if b.Type == "tool_result" && b.IsError {
			tools.failedCall(b.ID)
		}
	}
}

// countContentTools counts the tool_use and server_tool_use blocks of an
// assistant event (l), each under the name named gives it.
func countContentTools(tools *Tools, l []byte, named func(name string, input json.RawMessage) string) {
	var ev struct {
		Message struct {
			Content []struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(l, &ev) != nil {
		return
	}
	for _, b := range ev.Message.Content {
		if b.Type != "tool_use" && b.Type != "server_tool_use" {
			continue
		}
		tools.call(b.ID, named(b.Name, b.Input))
	}
}

// claudeResult is the result event, with usage and cost kept raw so that
// validation sees exactly what the agent printed.
type claudeResult struct {
	Type          string                     `json:"type"`
	Subtype       string                     `json:"subtype"`
	IsError       *bool                      `json:"is_error"`
	NumTurns      json.RawMessage            `json:"num_turns"`
	Result        *string                    `json:"result"`
	SessionID     string                     `json:"session_id"`
	TotalCostUSD  json.RawMessage            `json:"total_cost_usd"`
	Usage         map[string]json.RawMessage `json:"usage"`
	APIErrorState json.RawMessage            `json:"api_error_status"`
	Errors        []json.RawMessage          `json:"errors"`
	// Error is an agent's explanation of a failure as one value (a string,
	// or an object), as Claude-shaped agents other than Claude Code print.
	Error   json.RawMessage   `json:"error"`
	Denials []json.RawMessage `json:"permission_denials"`
	// ModelUsage is keyed by the model name the agent requested.
	ModelUsage map[string]map[string]json.RawMessage `json:"modelUsage"`
	// DurationMS is the agent's own account of the session's length.
	DurationMS json.RawMessage `json:"duration_ms"`
}

// modelUsageFields maps Claude Code's camelCase per-model usage keys to the
// four usage columns, in UsageFields order.
var modelUsageFields = []string{"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"}

// parseModelUsage validates modelUsage strictly: every model's four counts
// must be present non-negative integers, or no per-model row is recorded
// (the reasons are returned). costUSD is kept when it is a finite
// non-negative number, else it is NULL.
func parseModelUsage(mu map[string]map[string]json.RawMessage) ([]store.ModelUsage, []string) {
	if len(mu) > maxModels {
		return nil, []string{tooManyModels("modelUsage", len(mu))}
	}
	models := make([]string, 0, len(mu))
	for m := range mu {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []store.ModelUsage
	var problems []string
	for _, m := range models {
		if strings.TrimSpace(m) == "" {
			problems = append(problems, fmt.Sprintf("modelUsage[%q]: usage under no model name", wfb.Clip(m, 100)))
			continue
		}
		fields := mu[m]
		vals, bad := parseCounts(fields, fmt.Sprintf("modelUsage[%q].", wfb.Clip(m, 100)), modelUsageFields)
		problems = append(problems, bad...)
		row := store.ModelUsage{
			Model:       m,
			InputTokens: &vals[0], OutputTokens: &vals[1],
			CacheReadInputTokens: &vals[2], CacheCreationInputTokens: &vals[3],
		}
		if cost, ok, _ := parseCost(fields["costUSD"]); ok {
			row.CostUSD = &cost
		}
		out = append(out, row)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// UsageFields are the four usage fields a complete measurement carries. All
// must be present and non-negative integers, or the measurement is refused.
var UsageFields = []string{
	"input_tokens",
	"output_tokens",
	"cache_read_input_tokens",
	"cache_creation_input_tokens",
}

// parseUsage validates the four usage fields. It returns them in
// UsageFields order, or the reasons the measurement is refused.
func parseUsage(usage map[string]json.RawMessage) ([4]int64, []string) {
	var vals [4]int64
	if usage == nil {
		return vals, []string{"usage is missing from the result"}
	}
	counts, problems := parseCounts(usage, "usage.", UsageFields)
	copy(vals[:], counts)
	return vals, problems
}

// parseCost accepts a finite non-negative number. Anything else is "not
// measured": ok is false and why says what was there.
func parseCost(raw json.RawMessage) (cost float64, ok bool, why string) {
	return parseCostField("total_cost_usd", raw)
}

// parseCostField is parseCost of the field named field.
func parseCostField(field string, raw json.RawMessage) (cost float64, ok bool, why string) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, false, ""
	}
	if s[0] == '"' || s == "true" || s == "false" || s[0] == '{' || s[0] == '[' {
		return 0, false, fmt.Sprintf("%s %s is not a number", field, wfb.Clip(s, 40))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Sprintf("%s %s is not a finite number", field, wfb.Clip(s, 40))
	}
	if v < 0 {
		return 0, false, fmt.Sprintf("%s %s is negative", field, wfb.Clip(s, 40))
	}
	return v, true, ""
}

// apiErrorText recognises the result text of a failure the provider caused:
// an error status ("API Error: 529 ..."), or no answer at all within
// API_TIMEOUT_MS ("Request timed out ...", which carries no status).
var apiErrorText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*(API Error|Request timed out)`) })

// providerErrorText recognises a provider's failure named in a result's
// error field: overloaded, rate-limited, a 429 or 5xx status.
var providerErrorText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)overloaded|rate.?limit|\b(429|5[0-9]{2})\b|API Error`)
})

// providerFailure says whether a failed result came from the model provider
// (an upstream 4xx/5xx the agent surfaced) rather than the agent itself.
func (r *claudeResult) providerFailure() bool {
	if s := strings.TrimSpace(string(r.APIErrorState)); s != "" && s != "null" {
		return true
	}
	if e := r.errorField(); e != "" && providerErrorText().MatchString(e) {
		return true
	}
	return r.Result != nil && apiErrorText().MatchString(*r.Result)
}

// errorField is the result's error value as text: a string as it is, any
// other value as its JSON; "" when there is none.
func (r *claudeResult) errorField() string {
	s := strings.TrimSpace(string(r.Error))
	if s == "" || s == "null" {
		return ""
	}
	var text string
	if json.Unmarshal(r.Error, &text) == nil {
		return text
	}
	return s
}

// inventedZeros says whether usage of all zeros came with a provider's
// failure: no request was answered, so the zeros are the agent's filler,
// not a measurement (Claude Code prints them for a 529).
func (r *claudeResult) inventedZeros(vals [4]int64) bool {
	return r.IsError != nil && *r.IsError && r.providerFailure() && vals == [4]int64{}
}

// claudeCLIOutput is the real Claude Code's output: the strict parse of
// claudeOutput, plus what only the real CLI reports — per-model usage,
// permission denials, api_retry counts — and its version.
type claudeCLIOutput struct {
	*claudeOutput
	named string // the version the arm named, if any
}

func (o *claudeCLIOutput) Interpret(row *store.Result, p Process) {
	o.claudeOutput.Interpret(row, p)
	o.claudeOutput.measureMore(row, o.named)
	if len(o.mcpFailed.items) > 0 {
		// The session ran without the tools its arm gave it: it did not
		// measure the arm's workflow, and the environment is to blame.
		row.AddFailure(wfb.KindInfraError, "MCP servers that did not start, by the agent's init event: "+o.mcpFailed.join(", "))
	}
}

// measureMore records what the strict parse leaves out. It never turns a
// failed row into an ok one.
func (o *claudeOutput) measureMore(row *store.Result, named string) {
	recordVersion(row, o.version, named)
	if o.streamed {
		n := int64(o.apiRetries)
		row.APIRetries = &n
	}
	if row.InputTokens != nil {
		row.UsageSemantics = wfb.SemanticsAnthropic
		n := *row.InputTokens
		row.ReportedInputTokens = &n
	}
	res := o.parsed
	if res == nil {
		return
	}
	if res.Denials != nil {
		n := int64(len(res.Denials))
		row.PermissionDenials = &n
	}

	if res.ModelUsage != nil {
		mu, problems := parseModelUsage(res.ModelUsage)
		if len(problems) > 0 {
			row.AddDetail("per-model usage refused, not recorded: " + strings.Join(problems, "; "))
		}
		row.ModelUsage = mu
	}
}

// Interpret parses Claude Code's result event strictly into the row.
func (out *claudeOutput) Interpret(row *store.Result, p Process) {
	exit := p.Exit
	switch n := out.results.n; {
	case n == 0:
		row.AddFailure(wfb.KindSessionError, out.missing("result event", p))
		return
	case n > 1:
		row.ResultEvent = out.results.all()
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the agent printed %d result events; exactly one is expected", n))
		return
	}
	row.ResultEvent = string(out.results.last)
	res := &claudeResult{}
	if err := json.Unmarshal(out.results.last, res); err != nil {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the result event is malformed: %v", err))
		return
	}
	out.parsed = res
	row.SessionID = res.SessionID
	if len(res.NumTurns) > 0 {
		if n, err := wfb.ParseCount(res.NumTurns); err == nil {
			row.NumTurns = &n
		}
	}
	// The agent's own clock, beside wfb's; nonsense is not measured.
	if d, err := wfb.ParseCount(res.DurationMS); err == nil {
		row.AgentDurationMS = &d
	}

	// Measurements: all four usage fields valid, or none recorded.
	vals, problems := parseUsage(res.Usage)
	invented := len(problems) == 0 && res.inventedZeros(vals)
	if len(problems) == 0 && !invented {
		row.InputTokens, row.OutputTokens = &vals[0], &vals[1]
		row.CacheReadInputTokens, row.CacheCreationInputTokens = &vals[2], &vals[3]
	}
	cost, costOK, costWhy := parseCost(res.TotalCostUSD)
	if len(problems) == 0 && costOK && !invented {
		row.CostUSD, row.CostSource = &cost, "reported"
	}

	switch {
	case res.IsError == nil:
		row.AddFailure(wfb.KindSessionError, "the result event has no is_error field")
	case *res.IsError:
		kind := wfb.KindSessionError
		if res.providerFailure() {
			kind = wfb.KindProviderError
		}
		row.AddFailure(kind, "the agent reported an error: "+res.errorText())
	case res.Subtype != "success":
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the result subtype is %q: %s", res.Subtype, res.errorText()))
	}
	if row.OK && (p.ExitCode == nil || *p.ExitCode != 0) {
		// A failed result explains its own exit code.
		row.AddFailure(wfb.KindSessionError, "the agent ended with "+exit)
	}
	out.failNonJSON(row, p)
	if len(problems) > 0 && (row.OK || len(res.Usage) > 0) {
		// A failed turn that reported no usage at all is explained by its
		// failure; usage it did report and got wrong is worth saying.
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: "+strings.Join(problems, "; "))
	}
	if n := len(res.Denials); n > 0 {
		// Claude Code still says "success" when its permission policy
		// refused a tool call; the row says so instead of passing silently.
		row.AddDetail(fmt.Sprintf("the agent's permission policy denied %d tool call(s): %s", n, wfb.Clip(string(joinLines(rawList(res.Denials))), 300)))
	}
	if invented {
		row.AddDetail("usage of all zeros with a provider's failure is not recorded: no request was answered, so it is not a measurement")
	}
	if costWhy != "" {
		// Not a failure: cost is simply not measured.
		row.AddDetail("cost not recorded: " + costWhy)
	}
}

// errorText is the agent's own explanation of a failure.
func (r *claudeResult) errorText() string {
	var parts []string
	if r.Result != nil && *r.Result != "" {
		parts = append(parts, wfb.Clip(*r.Result, 500))
	}
	// The list is the agent's: as many entries as a line holds.
	var errs boundedList
	for _, e := range r.Errors {
		errs.add(wfb.Clip(string(e), 200))
	}
	if len(errs.items) > 0 {
		parts = append(parts, errs.join("; "))
	}
	if e := r.errorField(); e != "" {
		parts = append(parts, wfb.Clip(e, 500))
	}
	if s := strings.TrimSpace(string(r.APIErrorState)); s != "" && s != "null" {
		parts = append(parts, "api_error_status "+s)
	}
	if len(parts) == 0 {
		return "(no explanation given)"
	}
	return strings.Join(parts, "; ")
}
