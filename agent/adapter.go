package agent

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/wfbench/wfb/store"
)

// Names of the agents, as a bench's arm names them (runner/bench spells the
// same names for its checks).
const (
	Claude   = "claude"   // Claude Code (npm @anthropic-ai/claude-code)
	StandIn  = "stand-in" // wfb's own scripted agent, with Claude Code's interface
	Codex    = "codex"    // OpenAI's Codex CLI (npm @openai/codex), as `codex exec --json`
	Gemini   = "gemini"   // Gemini CLI (npm @google/gemini-cli)
	Opencode = "opencode" // opencode (npm opencode-ai), as `opencode run --format json`
	Qwen     = "qwen"     // Qwen Code (npm @qwen-code/qwen-code), stream-json
)

// adapters are the agents wfb drives, each a fresh adapter per session.
// Adding an agent is one file holding its adapter and one line here.
var adapters = map[string]func() Adapter{
	Claude:   func() Adapter { return &claudeAdapter{real: true} },
	StandIn:  func() Adapter { return &claudeAdapter{} },
	Codex:    func() Adapter { return &codexAdapter{} },
	Gemini:   func() Adapter { return &geminiAdapter{} },
	Opencode: func() Adapter { return &opencodeAdapter{} },
	Qwen:     func() Adapter { return &qwenAdapter{} },
}

// Names lists the agents wfb drives, sorted.
func Names() []string { return slices.Sorted(maps.Keys(adapters)) }

// For returns a fresh adapter for the agent of that name. An adapter
// carries state from Command to Output (the session's model, the version
// its arm names, its kit's names), so one serves one session.
func For(name string) (Adapter, error) {
	if ad, ok := adapters[name]; ok {
		return ad(), nil
	}
	names := Names()
	return nil, fmt.Errorf("unknown agent %q (want %s or %s)", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Adapter knows one agent CLI: how to start it headless, with its private
// configuration, how to ask its version and how to read what it prints.
type Adapter interface {
	// Command builds the agent's command line (without the sandbox's
	// prefix) for a prompt, writing the configuration it points the agent
	// at into the session's HOME.
	Command(s Session, prompt string) (Command, error)
	// Version is how to ask the CLI its version before a session; false
	// when the adapter does not ask (the stand-in is wfb's own).
	Version() (Probe, bool)
	// Output returns a fresh reader of the agent's stdout; version is what
	// the probe found ("" when it found none, or there was none).
	Output(version string) Output
	// SkillsDir is where, in home, the agent looks for skills.
	SkillsDir(home string) string
	// Upstream names the variable of env the agent reads its provider's
	// base URL from, and the URL it would call; "" when it would call none
	// (it then refuses to run).
	Upstream(env map[string]string) (key, url string)
	// ReportedField is the name its result event's usage object gives a
	// usage column of the results file (e.g. cache_read_input_tokens).
	ReportedField(column string) string
}

// Session is what an adapter needs of one session.
type Session struct {
	Bin  string   // the agent's executable
	Args []string // arguments before the adapter's flags ("mock", "agent" for the stand-in run through wfb)
	// Version is the version the arm names; "" when it names none.
	Version      string
	Model        string
	MaxTurns     int // 0: the agent's default
	AllowedTools []string
	ExtraArgs    []string
	OutputFormat string // "" is the adapter's default
	Permission   string // "" is the adapter's default
	// Env is the session's environment as the runner built it; the
	// adapter adds to it (Command.Env), never changes it.
	Env map[string]string
	// Sandboxed says the session runs in a wfb sandbox.
	Sandboxed bool
	// Grant are the directories outside the workspace the agent may write
	// (the sandbox's artifact directory, a review artifact's).
	Grant []string
	Kit   Kit
}

// Kit is what an arm gives its agent beyond the defaults that an adapter
// writes in the agent's own form: MCP servers and settings. The skills and
// files of the arm are placed by the runner (see Adapter.SkillsDir).
type Kit struct {
	MCPServers []MCPServer
	// Skills are the skills' directories; the agent knows each by its base
	// name.
	Skills []string
	// Settings is the agent's own settings object (nil: none), merged into
	// what wfb gives the agent.
	Settings map[string]any
}

// MCPServer is one MCP server the agent is given: a program it starts and
// talks to over stdio, or an HTTP server at URL.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	// Env are the server's variables. A secret's value reaches the server
	// through the agent's environment, under its own name, and the
	// configuration refers to it: its value is never written to a file.
	Env []ServerVar
	URL string
}

// Stdio reports whether the agent starts the server itself.
func (s MCPServer) Stdio() bool { return s.URL == "" }

// ServerVar is one variable of an MCP server: a literal value, or a secret
// passed by name.
type ServerVar struct {
	Name, Value string
	Literal     bool
}

// Command is how to start one agent process.
type Command struct {
	Argv    []string
	Stdin   string
	NoStdin bool              // stdin is /dev/null rather than a pipe
	Env     map[string]string // added to the session's environment
}

// Output reads an agent's stdout line by line and then turns it, strictly,
// into the row's outcome and measurements.
type Output interface {
	// Line consumes one stdout line; it must not retain l. truncated says
	// the line was cut at Process.MaxLine.
	Line(l []byte, truncated bool)
	// Interpret records in row the outcome of a process that exited on its
	// own: row is ok when it is called, and stays so only when what the
	// agent printed is a complete, valid account of a success.
	Interpret(row *store.Result, p Process)
	// Tools are the agent's tool calls as its output showed them, which
	// count whatever became of the process.
	Tools() *Tools
}

// Process is how the agent's process ended, as Interpret reads it.
type Process struct {
	ExitCode *int64 // nil unless it exited on its own terms
	Exit     string // how it ended, for details: "exit code 1", "signal killed"
	// MaxLine is the longest stdout line Line was handed whole.
	MaxLine int
}

// Probe is how wfb asks an agent CLI its version: `BIN Args...`, with Env
// added to the probe's environment, the first version number it prints on
// stdout the answer.
type Probe struct {
	Args []string
	Env  map[string]string
}

// VersionProbe is `BIN --version`, which every CLI here answers, with
// Gemini CLI's switch that keeps it one process (otherwise it starts a
// second Node process to answer). It is the probe of a binary whose agent
// is not known (`wfb doctor --agent-bin`).
var VersionProbe = Probe{Args: []string{"--version"}, Env: map[string]string{"GEMINI_CLI_NO_RELAUNCH": "true"}}

// versionPattern finds a version number in a CLI's --version line, e.g.
// "2.1.332 (Claude Code)" or "codex-cli 0.171.0".
var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?\b`) })

// Parse finds the version in what the probe printed; "" when there is
// none.
func (Probe) Parse(out []byte) string { return versionPattern().FindString(string(out)) }
