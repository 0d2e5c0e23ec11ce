package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/store"
)

// adapter knows one agent CLI: how to start it headless and how to read what
// it prints.
type adapter interface {
	// command builds the agent's command line (without the sandbox prefix)
	// for a prompt.
	command(spec SessionSpec, prompt string) (agentCommand, error)
	// output returns a fresh consumer of the agent's stdout.
	output() agentOutput
}

// agentCommand is how to start one agent process.
type agentCommand struct {
	argv    []string
	stdin   string
	noStdin bool              // stdin is /dev/null rather than a pipe
	env     map[string]string // added to the session's environment
}

// agentOutput consumes an agent's stdout line by line and then turns it,
// strictly, into the row's outcome and measurements.
type agentOutput interface {
	// line consumes one stdout line; it must not retain l.
	line(l []byte, truncated bool)
	// interpret records the outcome of a process that exited on its own.
	interpret(row *store.Result, pr processResult)
}

// adapterFor returns the adapter for an agent name.
func adapterFor(agent string) (adapter, error) {
	switch agent {
	case AgentClaude, AgentStandIn:
		return claudeAdapter{}, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want %s or %s)", agent, AgentClaude, AgentStandIn)
}

// claudeAdapter drives Claude Code (and wfb's stand-in, which shares its
// interface): prompt on stdin, json or stream-json out.
type claudeAdapter struct{}

func (claudeAdapter) command(spec SessionSpec, prompt string) (agentCommand, error) {
	argv, err := claudeArgv(spec)
	return agentCommand{argv: argv, stdin: prompt}, err
}

func (claudeAdapter) output() agentOutput { return &claudeOutput{} }

// claudeArgv builds Claude Code's headless command line (the stand-in shares
// its interface). The prompt goes on stdin.
func claudeArgv(spec SessionSpec) ([]string, error) {
	if spec.AgentBin == "" {
		return nil, errors.New("no agent binary")
	}
	format := spec.OutputFormat
	if format == "" {
		format = "stream-json"
	}
	if format != "stream-json" && format != "json" {
		return nil, fmt.Errorf("output format %q: want stream-json or json", format)
	}
	argv := append([]string{spec.AgentBin}, spec.AgentArgs...)
	argv = append(argv, "-p", "--output-format", format)
	if format == "stream-json" {
		argv = append(argv, "--verbose")
	}
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if spec.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(spec.MaxTurns))
	}
	perm := spec.Permission
	if perm == "" {
		perm = "acceptEdits"
	}
	argv = append(argv, "--permission-mode", perm)
	if len(spec.AllowedTools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(spec.AllowedTools, ","))
	}
	// Claude Code silently denies writes outside the working directory
	// unless the directory is granted.
	var grant []string
	if spec.Sandbox != nil && spec.Sandbox.ArtifactDir() != "" {
		grant = append(grant, spec.Sandbox.ArtifactDir())
	}
	if spec.Review != nil {
		if d := filepath.Dir(spec.Review.ArtifactPath); len(grant) == 0 || grant[0] != d {
			grant = append(grant, d)
		}
	}
	for _, d := range grant {
		argv = append(argv, "--add-dir", d)
	}
	argv = append(argv, "--no-session-persistence")
	return append(argv, spec.ExtraArgs...), nil
}
