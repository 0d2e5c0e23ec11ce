package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/owned"
	"github.com/wfbench/wfb/store"
)

// opencodeProvider is the id of the provider wfb defines in opencode's
// configuration; the session's model is wfb/MODEL.
const opencodeProvider = "wfb"

// opencodePluginLock is the lock file opencode takes as proof that its
// plugin package is installed in a configuration directory. Without it,
// opencode 1.18 installs @opencode-ai/plugin into ~/.config/opencode from
// the npm registry in the background of every session (no setting stops
// it); with it, and a node_modules beside it, it asks npm for nothing.
const opencodePluginLock = `{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`

// opencodeAdapter drives opencode (npm opencode-ai) headless:
// `opencode run --format json --title wfb -m wfb/MODEL`, the prompt on
// stdin (a positional message would reach the model wrapped in quotes),
// JSON Lines out.
//
// Its configuration is wfb's, in OPENCODE_CONFIG_CONTENT, which overrides
// the workspace's opencode.json (an OPENCODE_CONFIG file would not): one
// provider, wfb, through the @ai-sdk/openai-compatible package opencode
// bundles, at the OpenAI base URL every OpenAI agent gets (openAIEndpoint)
// with the key from $OPENAI_API_KEY (never written down), the session's
// model listed (opencode refuses a model its provider does not list) and
// made the small model too, so that no side request goes elsewhere;
// includeUsage, so a stream carries its usage; no sharing, no updates; the
// directories the session is granted (a review's artifact directory) as
// external_directory rules, which headless opencode otherwise rejects — and
// ends the session without a word. The arm's settings are merged over it,
// its MCP servers under mcp. --title keeps opencode from a request of its
// own to name the session. The environment stops the models.dev fetch and
// the update check; the plugin lock in HOME (opencodePluginLock) stops the
// npm install.
//
// Retries: opencode retries a 5xx (and a 429, a dropped connection) five
// times with a backoff from 2 s doubling, or as long as the response's
// retry-after says; no setting bounds it, and its output never shows a
// retry (api_retries stays NULL). wfb's session timeout is the bound.
type opencodeAdapter struct {
	model, named string
	servers      []string // the kit's MCP server names, to read its tool names back
}

func (a *opencodeAdapter) Command(s Session, prompt string) (Command, error) {
	argv, env, err := opencodeArgv(s)
	if err != nil {
		return Command{}, err
	}
	a.model, a.named = s.Model, s.Version
	for _, srv := range s.Kit.MCPServers {
		a.servers = append(a.servers, srv.Name)
	}
	return Command{Argv: argv, Stdin: prompt, Env: env}, nil
}

// Version is `opencode --version`, which prints the bare version. It
// needs a writable HOME (it makes its directories there first): the
// runner probes with the session's.
func (a *opencodeAdapter) Version() (Probe, bool) { return VersionProbe, true }

func (a *opencodeAdapter) Output(version string) Output {
	return &opencodeOutput{model: a.model, version: version, named: a.named, servers: a.servers}
}

func (a *opencodeAdapter) SkillsDir(home string) string {
	return filepath.Join(home, ".config", "opencode", "skills")
}

func (a *opencodeAdapter) Upstream(env map[string]string) (string, string) {
	return openAIUpstream(env)
}

// ReportedField: opencode prints no usage object of wfb's names (its
// step_finish events count tokens per step), so a refusal names the
// column.
func (a *opencodeAdapter) ReportedField(column string) string { return column }

// opencodeArgv builds opencode's headless command line and the variables
// it adds to the session's environment, and seeds its HOME.
func opencodeArgv(spec Session) (argv []string, env map[string]string, err error) {
	if err := opencodeSupports(spec); err != nil {
		return nil, nil, err
	}
	home := spec.Env["HOME"]
	if home == "" {
		return nil, nil, errors.New("opencode needs HOME in the session's environment (its state and plugins go there)")
	}
	env = map[string]string{
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
		"OPENCODE_DISABLE_SHARE":        "1",
	}
	baseURL, err := openAIEndpoint("opencode", spec.Env, env)
	if err != nil {
		return nil, nil, err
	}
	if err := seedOpencodeHome(home); err != nil {
		return nil, nil, fmt.Errorf("opencode's HOME: %w", err)
	}
	cfg, err := json.Marshal(opencodeConfig(spec, baseURL))
	if err != nil {
		return nil, nil, fmt.Errorf("opencode's configuration: %w", err)
	}
	env["OPENCODE_CONFIG_CONTENT"] = string(cfg)
	argv = append([]string{spec.Bin}, spec.Args...)
	argv = append(argv, "run", "--format", "json", "--title", "wfb", "-m", opencodeProvider+"/"+spec.Model)
	if spec.Permission == "auto" {
		argv = append(argv, "--auto")
	}
	return append(argv, spec.ExtraArgs...), env, nil
}

// opencodeSupports refuses what opencode run cannot do headless.
func opencodeSupports(spec Session) error {
	switch {
	case spec.Bin == "":
		return errors.New("no agent binary")
	case spec.Model == "":
		return errors.New("opencode needs a model: wfb defines its provider with the one model the arm names")
	case spec.OutputFormat != "" && spec.OutputFormat != "json":
		return fmt.Errorf("output format %q: wfb reads opencode's json events only", spec.OutputFormat)
	case spec.MaxTurns > 0:
		return errors.New("max turns: opencode run has no turn limit wfb can set, so an arm cannot set one")
	case len(spec.AllowedTools) > 0:
		return errors.New("allowed tools: opencode's permission rules decide which tools run; give them as this arm's settings (permission)")
	case spec.Permission != "" && spec.Permission != "auto":
		return fmt.Errorf("permission %q: opencode takes auto (approve what is not denied) or its own rules (none)", spec.Permission)
	}
	return nil
}

// seedOpencodeHome writes the plugin lock (opencodePluginLock) into HOME.
func seedOpencodeHome(home string) error {
	owner, err := owned.Owner(home)
	if err != nil {
		return err
	}
	if err := owned.MkdirAll(home, filepath.Join(".config", "opencode", "node_modules"), owner); err != nil {
		return err
	}
	_, err = writeHomeFile(home, filepath.Join(".config", "opencode", "package-lock.json"), []byte(opencodePluginLock))
	return err
}

// opencodeConfig is the configuration wfb gives opencode (see
// opencodeAdapter), the arm's settings merged over it and its MCP servers
// under mcp, a secret written {env:NAME}, which opencode resolves from its
// environment.
func opencodeConfig(spec Session, baseURL string) map[string]any {
	model := opencodeProvider + "/" + spec.Model
	cfg := map[string]any{
		"provider": map[string]any{opencodeProvider: map[string]any{
			"npm":  "@ai-sdk/openai-compatible",
			"name": "wfb",
			"options": map[string]any{
				"baseURL":      baseURL,
				"apiKey":       "{env:OPENAI_API_KEY}",
				"includeUsage": true,
			},
			"models": map[string]any{spec.Model: map[string]any{"name": spec.Model}},
		}},
		"model":       model,
		"small_model": model,
		"autoupdate":  false,
		"share":       "disabled",
	}
	if len(spec.Grant) > 0 {
		dirs := map[string]any{}
		for _, d := range spec.Grant {
			dirs[strings.TrimSuffix(d, "/")+"/*"] = "allow"
		}
		cfg["permission"] = map[string]any{"external_directory": dirs}
	}
	cfg = mergeSettings(cfg, spec.Kit.Settings)
	if len(spec.Kit.MCPServers) > 0 {
		servers := map[string]any{}
		for _, s := range spec.Kit.MCPServers {
			if !s.Stdio() {
				servers[s.Name] = map[string]any{"type": "remote", "url": s.URL, "enabled": true}
				continue
			}
			srv := map[string]any{"type": "local", "command": append([]string{s.Command}, s.Args...), "enabled": true}
			if len(s.Env) > 0 {
				srv["environment"] = serverEnv(s, func(name string) string { return "{env:" + name + "}" })
			}
			servers[s.Name] = srv
		}
		cfg["mcp"] = servers
	}
	return cfg
}

// opencodeOutput collects what matters from `opencode run --format json`:
// its steps (step_start, step_finish: one per model request, each
// finished step with that request's tokens and cost), its tool calls and
// its error events. opencode prints no terminal event and no session
// total: a session is its steps, summed.
type opencodeOutput struct {
	model, version, named string
	servers               []string

	jsonLines
	sessionID string
	started   int        // step_start events
	steps     keptEvents // step_finish events
	sum       opencodeUsage
	problems  boundedList // why the steps' usage is refused
	lastStop  string      // the last step's finish reason
	errs      keptEvents  // error events
	errText   boundedList
	provider  bool // an error event came from the provider
	denials   int64
	subagents int // calls of the task tool
	tools     Tools
}

func (o *opencodeOutput) Tools() *Tools { return &o.tools }

// opencodeEvent is one line of opencode's JSON output, as far as wfb reads
// it.
type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Tool   string `json:"tool"`
		CallID string `json:"callID"`
		State  struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Error  json.RawMessage `json:"error"`
		} `json:"state"`
		Reason string                     `json:"reason"`
		Tokens map[string]json.RawMessage `json:"tokens"`
		Cost   json.RawMessage            `json:"cost"`
	} `json:"part"`
	Error json.RawMessage `json:"error"`
}

func (o *opencodeOutput) Line(l []byte, truncated bool) {
	var ev opencodeEvent
	l, ok := o.decode(l, truncated, &ev)
	if !ok {
		return
	}
	if o.sessionID == "" {
		o.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "step_start":
		o.started++
		o.tools.measured = true
	case "step_finish":
		o.steps.add(l)
		o.lastStop = ev.Part.Reason
		o.readStep(&ev)
	case "tool_use":
		o.tools.measured = true
		o.tools.call(ev.Part.CallID, opencodeToolName(ev.Part.Tool, ev.Part.State.Input, o.servers))
		if ev.Part.Tool == "task" {
			o.subagents++
		}
		if ev.Part.State.Status == "error" {
			o.tools.failedCall(ev.Part.CallID)
			var why string
			if json.Unmarshal(ev.Part.State.Error, &why) == nil && strings.Contains(why, "rejected permission") {
				o.denials++
			}
		}
	case "error":
		o.errs.add(l)
		text, provider := opencodeError(ev.Error)
		o.errText.add(text)
		o.provider = o.provider || provider
	}
}

// opencodeToolName is an opencode tool call's name as wfb counts it: an
// MCP tool, which opencode names SERVER_TOOL (each character other than a
// letter, a digit, '_' or '-' made '_'), as mcp__SERVER__TOOL for the
// kit's server it names; the skill tool as the skill it loads
// (skill:NAME); any other as opencode names it (write, edit, bash, ...).
func opencodeToolName(name string, input json.RawMessage, servers []string) string {
	if name == "skill" {
		if s := skillName(input, "name"); s != "" {
			return skillPrefix + s
		}
	}
	best := ""
	for _, s := range servers {
		if strings.HasPrefix(name, opencodeIdent(s)+"_") && len(s) > len(best) {
			best = s
		}
	}
	if best != "" {
		return mcpToolName(best, strings.TrimPrefix(name, opencodeIdent(best)+"_"))
	}
	return name
}

var opencodeNotIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// opencodeIdent is a name as opencode writes it into a tool's name.
func opencodeIdent(s string) string { return opencodeNotIdent().ReplaceAllString(s, "_") }

// opencodeProviderText recognises an error opencode names no status for
// that came from the provider or the way to it.
var opencodeProviderText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)ECONNREFUSED|ECONNRESET|Unable to connect|fetch failed|socket|terminated|timed? ?out|overloaded|rate.?limit`)
})

// opencodeError is an error event's error as text, and whether the
// provider caused it: an APIError (the provider answered with an error
// status, after opencode's retries), or a failure to reach it.
func opencodeError(raw json.RawMessage) (string, bool) {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message    string          `json:"message"`
			StatusCode json.RawMessage `json:"statusCode"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil || (e.Name == "" && e.Data.Message == "") {
		return wfb.Clip(string(raw), 300), false
	}
	text := e.Name + ": " + wfb.Clip(e.Data.Message, 300)
	status := strings.TrimSpace(string(e.Data.StatusCode))
	if status != "" && status != "null" {
		text += " (status " + wfb.Clip(status, 10) + ")"
	}
	return text, e.Name == "APIError" || (status != "" && status != "null") || opencodeProviderText().MatchString(e.Data.Message)
}

// opencodeUsage is the steps' tokens, summed in wfb's terms: input the
// uncached prompt (cache writes included), cached the cache reads, output
// with reasoning, prompt the whole prompt; cost opencode's.
type opencodeUsage struct {
	input, cached, output, reasoning, prompt int64
	cost                                     float64
	costWhy                                  string // why a step's cost is not a measurement
}

// opencodeTokenFields are the counts of a step's tokens object (cache
// holds read and write).
var opencodeTokenFields = []string{"total", "input", "output", "reasoning"}

// readStep adds a finished step's tokens and cost to the sum, or notes why
// they cannot be. opencode's own arithmetic (1.18): input = prompt −
// cache.read − cache.write, output = completion − reasoning, each clamped
// at 0, cache.write 0 for an OpenAI-compatible provider (which reports
// none), total the prompt plus the completion as the provider sent them —
// and no total at all when the provider sent no usage, where every other
// count is a filled-in 0. So a step without total is refused, and one whose
// total is not the sum of its parts had a count clamped (a negative, a
// null, cached tokens beyond the prompt): refused too.
func (o *opencodeOutput) readStep(ev *opencodeEvent) {
	at := fmt.Sprintf("step %d: ", o.steps.n)
	tok := ev.Part.Tokens
	if tok == nil {
		o.problems.add(at + "no tokens")
		return
	}
	if _, ok := tok["total"]; !ok {
		o.problems.add(at + "tokens.total is missing: the provider sent no usage for that request (opencode prints zeros for every other count)")
		return
	}
	vals, problems := parseCounts(tok, at+"tokens.", opencodeTokenFields)
	var cache map[string]json.RawMessage
	if err := json.Unmarshal(tok["cache"], &cache); err != nil || cache == nil {
		problems = append(problems, at+"tokens.cache is not an object of read and write")
	}
	cvals, cproblems := parseCounts(cache, at+"tokens.cache.", []string{"read", "write"})
	problems = append(problems, cproblems...)
	if len(problems) > 0 {
		for _, p := range problems {
			o.problems.add(p)
		}
		return
	}
	total, in, out, reasoning, read, write := vals[0], vals[1], vals[2], vals[3], cvals[0], cvals[1]
	if parts := in + out + reasoning + read + write; parts != total {
		o.problems.add(fmt.Sprintf("%stokens.total %d is not input %d + output %d + reasoning %d + cache.read %d + cache.write %d (%d): opencode clamped a count the provider sent (a negative, a null, cached tokens beyond the prompt)", at, total, in, out, reasoning, read, write, parts))
		return
	}
	s := &o.sum
	s.input += in + write
	s.cached += read
	s.output += out + reasoning
	s.reasoning += reasoning
	s.prompt += in + read + write
	if s.prompt > wfb.MaxCount || s.output > wfb.MaxCount {
		o.problems.add(fmt.Sprintf("%sthe steps' tokens add up past wfb's bound on a count (%s)", at, wfb.MaxCountText))
		return
	}
	if c, ok, why := parseCostField("cost", ev.Part.Cost); ok {
		s.cost += c
	} else if s.costWhy == "" {
		s.costWhy = at + why
		if why == "" {
			s.costWhy = at + "no cost"
		}
	}
}

func (o *opencodeOutput) Interpret(row *store.Result, p Process) {
	row.SessionID = o.sessionID
	recordVersion(row, o.version, o.named)
	if o.tools.measured {
		n := o.denials
		row.PermissionDenials = &n
	}
	if o.errs.n > 0 {
		row.ResultEvent = o.errs.all()
		kind := wfb.KindSessionError
		if o.provider {
			kind = wfb.KindProviderError
		}
		row.AddFailure(kind, fmt.Sprintf("the agent reported an error (%s): %s", p.Exit, o.errText.join(" | ")))
		o.failNonJSON(row, p)
		return
	}
	if o.steps.n == 0 {
		row.AddFailure(wfb.KindSessionError, o.missing("step_finish event", p))
		return
	}
	row.ResultEvent = o.steps.all()
	switch {
	case o.started != o.steps.n:
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("the agent started %d steps and finished %d", o.started, o.steps.n))
	case o.lastStop == "tool-calls" || o.lastStop == "unknown" || o.lastStop == "error":
		why := fmt.Sprintf("the agent ended without an answer: its last step's finish reason is %q", o.lastStop)
		if o.denials > 0 {
			// Headless, opencode rejects what would need asking and ends
			// the session there, with exit code 0.
			why += fmt.Sprintf(" after its permission rules rejected %d tool call(s)", o.denials)
		}
		row.AddFailure(wfb.KindSessionError, why)
	}
	if p.ExitCode == nil || *p.ExitCode != 0 {
		row.AddFailure(wfb.KindSessionError, "the agent ended with "+p.Exit)
	}
	o.failNonJSON(row, p)
	if o.denials > 0 {
		row.AddDetail(fmt.Sprintf("the agent's permission rules rejected %d tool call(s)", o.denials))
	}
	o.measure(row)
}

// measure records the steps' summed usage in the results columns'
// semantics (wfb.SemanticsOpenAI, as the provider counted: input_tokens =
// the prompt − cached, output with reasoning, cache writes NULL), or
// refuses it. Cost is opencode's when it priced the steps (an arm can
// give prices in its settings); opencode prints 0 for a model it has no
// price for, which is not a measurement: then the cost is derived from
// wfb's price table, or NULL.
func (o *opencodeOutput) measure(row *store.Result) {
	s := o.sum
	switch {
	case len(o.problems.items) > 0:
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: "+o.problems.join("; "))
		return
	case s.prompt == 0:
		row.AddFailure(wfb.KindSessionError, "usage refused, tokens and cost not recorded: the steps' input is 0, which no model request has: the provider reported no usage")
		return
	case o.subagents > 0:
		// Not a failure: the session did its work, but opencode's output
		// is not the count of it.
		row.AddDetail(fmt.Sprintf("usage not recorded: the agent ran %d subagent task(s), whose requests opencode leaves out of its output, so its count is not the session's (the metered wire's is)", o.subagents))
		return
	}
	row.UsageSemantics = wfb.SemanticsOpenAI
	row.InputTokens, row.CacheReadInputTokens, row.OutputTokens = &s.input, &s.cached, &s.output
	row.CacheCreationInputTokens = nil
	row.ReportedInputTokens, row.ReportedCachedInputTokens = &s.prompt, &s.cached
	row.ReasoningOutputTokens = &s.reasoning
	switch {
	case s.costWhy != "":
		row.AddDetail("cost not recorded: " + s.costWhy)
	case s.cost > 0:
		row.CostUSD, row.CostSource = &s.cost, "reported"
	default:
		if p, ok := PriceFor(o.model); ok {
			cost := p.Cost(s.input, s.output, s.cached, 0)
			row.CostUSD, row.CostSource = &cost, "derived"
		} else {
			row.AddDetail(fmt.Sprintf("cost not recorded: opencode prices a model it has no price for at 0, and wfb's price table has none for %q", o.model))
		}
	}
}
