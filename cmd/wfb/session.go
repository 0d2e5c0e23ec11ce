package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// sessionOptions are the flags of `wfb session`.
type sessionOptions struct {
	Workspace   string
	Prompt      string
	Agent       string
	AgentBin    string
	BaseURL     string
	MockScript  string
	Model       string
	Sandbox     string
	Review      bool
	Edit        bool
	ArtifactDir string
	Timeout     time.Duration
	DB          string
	Label       string
	Format      string
	Meter       string
	Witness     bool // --require-witness
	limits      limitFlags
}

func newSessionCmd(s *Streams) *cobra.Command {
	opts := &sessionOptions{}
	cmd := &cobra.Command{
		Use:   "session --workspace DIR --prompt TEXT (--mock-script FILE | --base-url URL)",
		Short: "Run one agent session and record its row",
		Long: `Run one agent session end to end and record its row in a run of its own.

With --mock-script, wfb starts its scripted provider itself and the session runs
offline. With --base-url, the API key is read from ANTHROPIC_API_KEY, passed to
the agent, and never stored. The agents of OpenAI's APIs (codex, opencode,
qwen) call the base URL + "/v1", with the key as OPENAI_API_KEY.

The session is metered (--meter=off disables it): its provider traffic goes
through a loopback proxy, its requests are recorded, and the provider's usage
is cross-checked against the agent's report (see wfb run --help). Usage the
agent reported while no model request reached the proxy is recorded with
usage_verdict unwitnessed; --require-witness refuses it (ok=0, session-error),
and cannot be combined with --meter=off.

Exit status: 0 when the session is ok, 1 when it was recorded but is not ok,
2 on bad input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.limits.check(cmd); err != nil {
				return err
			}
			return sessionRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Workspace, "workspace", "", "the directory the agent works in (required)")
	f.StringVar(&opts.Prompt, "prompt", "", "the prompt, passed on stdin (required)")
	f.StringVar(&opts.Agent, "agent", bench.AgentStandIn, "agent: "+strings.Join(bench.Agents, ", "))
	f.StringVar(&opts.AgentBin, "agent-bin", "", "the agent executable (default: wfb itself for stand-in, else the agent's name on PATH: claude, codex, gemini, opencode, qwen)")
	f.StringVar(&opts.BaseURL, "base-url", "", "the model API base URL (key from ANTHROPIC_API_KEY)")
	f.StringVar(&opts.MockScript, "mock-script", "", "serve this mock script locally and point the agent at it")
	f.StringVar(&opts.Model, "model", "", "model name passed to the agent")
	f.StringVar(&opts.Sandbox, "sandbox", sandbox.Auto, "sandbox backend: bwrap, landlock, host-unsafe, or auto (the strongest that passes preflight; see wfb doctor)")
	f.BoolVar(&opts.Review, "review", false, "a review session: the workspace must not change; the artifact is parsed and stored")
	f.BoolVar(&opts.Edit, "edit", false, "let the agent edit the workspace IN PLACE (the session's uid must be able to write it; wfb run edits copies)")
	f.StringVar(&opts.ArtifactDir, "artifact-dir", "", "where the review artifact is written (outside the workspace; default: inside the sandbox's private root)")
	f.DurationVar(&opts.Timeout, "timeout", bench.DefaultTimeout, "session timeout")
	f.StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	f.StringVar(&opts.Label, "label", "", "label for the session's run")
	f.StringVar(&opts.Format, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
	f.StringVar(&opts.Meter, "meter", "on", "meter the session's provider traffic (on) or not (off); recorded in the run's config")
	f.BoolVar(&opts.Witness, "require-witness", false, "refuse (session-error) the session when its agent reported usage no request through the meter witnessed")
	opts.limits.add(cmd, "")
	return cmd
}

// validate checks the flags before anything is created or recorded.
func (o *sessionOptions) validate() error {
	switch {
	case o.Workspace == "":
		return badInput("--workspace is required")
	case o.Prompt == "":
		return badInput("--prompt is required")
	case o.BaseURL == "" && o.MockScript == "":
		return badInput("give --mock-script FILE (offline) or --base-url URL (a real API)")
	case o.BaseURL != "" && o.MockScript != "":
		return badInput("--base-url and --mock-script are exclusive")
	case !slices.Contains(bench.Agents, o.Agent):
		return badInput("--agent %q: want %s or %s", o.Agent, strings.Join(bench.Agents[:len(bench.Agents)-1], ", "), bench.Agents[len(bench.Agents)-1])
	case o.Edit && o.Review:
		return badInput("--edit and --review are exclusive: a review must not change its workspace")
	case o.ArtifactDir != "" && !o.Review:
		return badInput("--artifact-dir only makes sense with --review")
	case o.Timeout <= 0:
		return badInput("--timeout must be positive")
	}
	if o.BaseURL != "" {
		// The URL goes into the run's config: a key in its userinfo would
		// be stored, so it is refused, and never echoed back.
		u, err := url.Parse(o.BaseURL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return badInput("--base-url %q: want an http(s) URL", store.Redact(o.BaseURL))
		case u.User != nil:
			return badInput("--base-url must not carry credentials; the key comes from ANTHROPIC_API_KEY")
		}
	}
	st, err := os.Stat(o.Workspace)
	if err != nil {
		return badInput("--workspace: %v", err)
	}
	if !st.IsDir() {
		return badInput("--workspace %s is not a directory", o.Workspace)
	}
	if _, err := parseOutputFormat(o.Format); err != nil {
		return asBadInput(err)
	}
	_, err = meterOff(o.Meter, o.Witness)
	return err
}

func sessionRun(ctx context.Context, s *Streams, opts *sessionOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	var script *provider.Script
	if opts.MockScript != "" {
		var err error
		if script, err = provider.LoadScript(opts.MockScript); err != nil {
			return err // a *provider.ScriptError: exit 2 by exitRules
		}
	}
	apiKey := "offline"
	if opts.BaseURL != "" {
		if apiKey = s.Getenv("ANTHROPIC_API_KEY"); apiKey == "" {
			return badInput("--base-url needs ANTHROPIC_API_KEY in the environment")
		}
	}
	agentBin, agentArgs, err := resolveAgentBin(opts.Agent, opts.AgentBin)
	if err != nil {
		return err
	}
	recoverLeftovers(s, "")

	db, err := store.Open(ctx, dbPath(opts.DB, s))
	if err != nil {
		return err
	}
	defer db.Close()
	row, status, err := runner.RunSession(ctx, runner.SessionOptions{
		DB: db, Label: opts.Label, Harness: version, Cell: opts.cell(agentBin, agentArgs, apiKey),
		MockScript: opts.MockScript, StartMock: serveScript(script), NoMeter: opts.Meter == "off", StartMeter: startMeter,
	})
	if err != nil {
		return err
	}
	if err := printRow(ctx, s, db, row, opts.Format); err != nil {
		return err
	}
	switch {
	case status == wfb.RunInterrupted:
		return errInterrupted
	case !row.OK:
		return errNotOK
	}
	return nil
}

// cell is the session the flags ask for, run by the agent at bin (after
// args), with the provider's key.
func (o *sessionOptions) cell(bin string, args []string, apiKey string) runner.Cell {
	return runner.Cell{
		SessionKey: runner.SessionKey{
			Task: filepath.Base(o.Workspace), Arm: o.Agent,
			Agent: o.Agent, AgentBin: bin, AgentArgs: args, Model: o.Model,
			Prompt: o.Prompt, Timeout: o.Timeout, Limits: o.limits.limits(),
		},
		Workspace: o.Workspace, Sandbox: o.Sandbox, Review: o.Review, WorkspaceWritable: o.Edit,
		ArtifactDir: o.ArtifactDir, BaseURL: o.BaseURL, APIKey: apiKey, RequireWitness: o.Witness,
	}
}

// serveScript starts a mock provider serving the script already loaded
// (and checked) for the session.
func serveScript(script *provider.Script) func(path string) (string, func(), error) {
	return func(string) (string, func(), error) { return provider.Serving(script) }
}

// resolveAgentBin finds the agent executable and the arguments before the
// adapter's own flags.
func resolveAgentBin(agent, given string) (string, []string, error) {
	if agent == bench.AgentStandIn && given == "" {
		return runner.StandInAgent()
	}
	if given == "" {
		given = agent // claude, codex, ...: looked up on PATH
	}
	bin, err := exec.LookPath(given)
	if err != nil {
		// Not bad input: the row records the spawn failure.
		return given, nil, nil
	}
	return bin, nil, nil
}
