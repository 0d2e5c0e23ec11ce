package agent

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// options are the parsed flags.
type options struct {
	outputFormat   string
	verbose        bool
	model          string
	maxTurns       int
	maxRetries     int // re-sends of a request answered 529
	permissionMode string
	tools          []string // the tools offered to the model
	allowed        []string // --allowedTools rules; empty: no restriction
	disallowed     []string // --disallowedTools rules
	addDirs        []string
	systemPrompt   string
	sessionID      string
	mcpServers     []mcpServerSpec // from --mcp-config, by name
	positional     []string
}

var permissionModes = []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}

// parseFlags parses Claude Code's flags. It returns nil options and the
// exit code when the agent must stop (help, or bad flags).
func parseFlags(args []string, stdout, stderr io.Writer) (*options, int) {
	var o options
	var raw rawFlags
	fs := defineFlags(&o, &raw)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: wfb mock agent -p [flags] [PROMPT]\n\nA stand-in agent CLI with Claude Code's interface.\n\nFlags:\n%s", fs.FlagUsages())
			return nil, exitOK
		}
		fmt.Fprintf(stderr, "wfb mock agent: %v\nRun 'wfb mock agent --help' for the flags it accepts.\n", err)
		return nil, exitUsage
	}
	if code := o.settle(fs, &raw, stderr); code != exitOK {
		return nil, code
	}
	return &o, exitOK
}

// rawFlags are the flags that settle folds into options.
type rawFlags struct {
	print, skipPerms, noPersist bool
	tools                       string
	allowedA, allowedB          []string
	disallowedA, disallowedB    []string
	appendSystem                string
	mcpConfigs                  []string
	strictMCP                   bool
}

// defineFlags declares Claude Code's flags, bound to o and raw.
func defineFlags(o *options, raw *rawFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("wfb mock agent", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolVarP(&raw.print, "print", "p", false, "print the response and exit (the prompt is the argument, else all of stdin)")
	fs.StringVar(&o.outputFormat, "output-format", "text", "text, json or stream-json (stream-json needs --verbose)")
	fs.BoolVar(&o.verbose, "verbose", false, "verbose output (required by stream-json)")
	fs.StringVar(&o.model, "model", defaultModel, "model name sent to the provider and used for pricing")
	fs.IntVar(&o.maxTurns, "max-turns", 0, "model requests at most; 0 or 1: one request, whose tools run, then report")
	fs.IntVar(&o.maxRetries, "max-retries", 0, "stand-in only: re-send a request the provider answered 529 up to N times, 200 ms apart, each announced by a system/api_retry event, as Claude Code does (it reads CLAUDE_CODE_MAX_RETRIES, default 10; wfb sets 2). 0: a 529 ends the session. Nothing else is retried")
	fs.StringVar(&o.permissionMode, "permission-mode", "default", "default, acceptEdits, bypassPermissions, plan or dontAsk")
	fs.StringVar(&raw.tools, "tools", "", `built-in tools offered to the model: "" none, "default" all, or a list of Write,Read,Bash,Skill (MCP tools are offered whatever it says)`)
	fs.StringArrayVar(&raw.allowedA, "allowedTools", nil, "only these tools may run (e.g. Write, Bash(git log:*))")
	fs.StringArrayVar(&raw.allowedB, "allowed-tools", nil, "same as --allowedTools")
	fs.StringArrayVar(&raw.disallowedA, "disallowedTools", nil, "these tools may not run")
	fs.StringArrayVar(&raw.disallowedB, "disallowed-tools", nil, "same as --disallowedTools")
	fs.StringArrayVar(&o.addDirs, "add-dir", nil, "another directory writes may go to under acceptEdits")
	fs.BoolVar(&raw.noPersist, "no-session-persistence", false, "accepted: the stand-in never writes transcripts")
	fs.BoolVar(&raw.skipPerms, "dangerously-skip-permissions", false, "same as --permission-mode bypassPermissions")
	fs.StringVar(&o.systemPrompt, "system-prompt", defaultSystemPrompt, "system prompt")
	fs.StringVar(&raw.appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fs.StringVar(&o.sessionID, "session-id", "", "session id to report (default: a random UUID)")
	fs.StringArrayVar(&raw.mcpConfigs, "mcp-config", nil, `MCP servers to connect to: a JSON file or string {"mcpServers": {"NAME": {"command": ..., "args": [...], "env": {...}} or {"type": "http", "url": ...}}}; their tools are offered as mcp__NAME__TOOL; ${VAR} in env, args, url and headers is read from the agent's environment`)
	fs.BoolVar(&raw.strictMCP, "strict-mcp-config", false, "accepted: the stand-in reads no MCP configuration but --mcp-config's")
	return fs
}

// settle checks the parsed flags and folds raw into o. It returns exitOK,
// or the exit code after saying on stderr what is wrong.
func (o *options) settle(fs *pflag.FlagSet, raw *rawFlags, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wfb mock agent: "+format+"\n", a...)
		return exitUsage
	}
	if !raw.print {
		return bad("only print mode is supported: pass -p/--print (without it Claude Code starts an interactive session)")
	}
	if !slices.Contains([]string{"text", "json", "stream-json"}, o.outputFormat) {
		return bad("--output-format %q: allowed choices are text, json, stream-json", o.outputFormat)
	}
	if o.outputFormat == "stream-json" && !o.verbose {
		// Claude Code's own message and exit code.
		fmt.Fprintln(stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return exitFailed
	}
	if !slices.Contains(permissionModes, o.permissionMode) {
		return bad("--permission-mode %q: allowed choices are %s", o.permissionMode, strings.Join(permissionModes, ", "))
	}
	if raw.skipPerms {
		o.permissionMode = "bypassPermissions"
	}
	if o.maxRetries < 0 || o.maxRetries > 100 {
		return bad("--max-retries %d: want 0 to 100", o.maxRetries)
	}
	if o.maxTurns < 0 {
		return bad("--max-turns %d: must be positive", o.maxTurns)
	}
	o.tools = slices.Clone(builtinNames)
	if fs.Changed("tools") {
		tools, unknown := offeredTools(raw.tools)
		if unknown != "" {
			return bad("--tools: unknown tool %q (the stand-in has %s)", unknown, strings.Join(builtinNames, ", "))
		}
		o.tools = tools
	}
	servers, err := parseMCPConfigs(raw.mcpConfigs)
	if err != nil {
		return bad("%v", err)
	}
	o.mcpServers = servers
	for _, v := range append(raw.allowedA, raw.allowedB...) {
		o.allowed = append(o.allowed, splitList(v)...)
	}
	for _, v := range append(raw.disallowedA, raw.disallowedB...) {
		o.disallowed = append(o.disallowed, splitList(v)...)
	}
	if raw.appendSystem != "" {
		o.systemPrompt += "\n\n" + raw.appendSystem
	}
	o.positional = fs.Args()
	return exitOK
}

// offeredTools reads --tools: the tools named, in order and once each,
// "default" standing for all of them. unknown is the first name the
// stand-in does not have.
func offeredTools(list string) (tools []string, unknown string) {
	for _, name := range splitList(list) {
		switch {
		case name == "default":
			tools = slices.Clone(builtinNames)
		case slices.Contains(builtinNames, name):
			if !slices.Contains(tools, name) {
				tools = append(tools, name)
			}
		default:
			return nil, name
		}
	}
	return tools, ""
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
