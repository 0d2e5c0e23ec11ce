package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/proc"
	"github.com/wfbench/wfb/store"
)

// adapter knows one agent CLI: how to start it headless and how to read what
// it prints.
type adapter interface {
	// command builds the agent's command line (without the sandbox prefix)
	// for a prompt.
	command(ctx context.Context, spec SessionSpec, prompt string) (agentCommand, error)
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
	interpret(row *store.Result, pr proc.Result)
}

// adapterFor returns a fresh adapter for an agent name. Adapters carry
// state from command to output (the probed CLI version), so one serves one
// session.
func adapterFor(agent string) (adapter, error) {
	switch agent {
	case bench.AgentClaude:
		return &claudeAdapter{probe: true}, nil
	case bench.AgentStandIn:
		return &claudeAdapter{}, nil
	case bench.AgentCodex:
		return &codexAdapter{}, nil
	case bench.AgentGemini:
		return &geminiAdapter{}, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want %s, %s, %s or %s)", agent, bench.AgentClaude, bench.AgentCodex, bench.AgentGemini, bench.AgentStandIn)
}

// versionPattern finds a version number in a CLI's --version line, e.g.
// "2.1.332 (Claude Code)" or "codex-cli 0.171.0".
var versionPattern = regexp.MustCompile(`\b[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?\b`)

// probeTimeout bounds `<cli> --version`. Claude Code and Codex answer in
// well under a second; Gemini CLI, a Node program, took 16-22 s at load 16
// on 2 cores. The answer is cached per binary, so a sweep waits once.
const probeTimeout = 60 * time.Second

var versionCache sync.Map // versionKey → string

type versionKey struct {
	path    string
	size    int64
	mtime   time.Time
	backend string
}

// versionProbe is where and as whom `<cli> --version` runs: the session's
// sandbox (nil: none), its workspace, and its HOME and TMPDIR.
type versionProbe struct {
	sandbox   Isolation
	dir       string
	home, tmp string
}

// probeVersion asks an agent CLI its version (`bin --version`), once per
// binary (path, size, mtime and backend): a sweep of many sessions probes
// once. The probe is a process of the session like the agent itself: in
// its sandbox, as its uid, in its cgroup or process group, bounded by
// probeTimeout, every descendant killed when it ends; it gets no
// credentials (PATH, HOME, TMPDIR and LANG, and Gemini CLI's switch that
// keeps it one process). It returns "" when the
// binary cannot say; the session itself then reports what is wrong with
// the binary.
func probeVersion(ctx context.Context, bin string, where versionProbe) string {
	v, _ := probeVersionWhy(ctx, bin, where)
	return v
}

// probeVersionWhy is probeVersion, with why it found no version when it
// found none: the launch refused, the binary not found, or how the probe
// ended and the last line it printed on stderr.
func probeVersionWhy(ctx context.Context, bin string, where versionProbe) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	key := versionKey{path: path, size: fi.Size(), mtime: fi.ModTime(), backend: "none"}
	if where.sandbox != nil {
		key.backend = where.sandbox.Backend()
	}
	if v, ok := versionCache.Load(key); ok {
		return v.(string), nil
	}
	launch, err := launchIn(ctx, where.sandbox)
	if err != nil {
		return "", err
	}
	defer launch.Close()
	env := map[string]string{"PATH": DefaultPath, "LANG": "C.UTF-8", "HOME": where.home, "TMPDIR": where.tmp,
		// Gemini CLI otherwise starts a second Node process to answer.
		"GEMINI_CLI_NO_RELAUNCH": "true"}
	var out []byte
	pr := proc.Run(ctx, proc.Spec{
		Argv:       append(append([]string{}, launch.Prefix...), path, "--version"),
		Dir:        where.dir,
		Env:        envList(env),
		NoStdin:    true,
		Credential: launch.Credential,
		ExtraFiles: launch.ExtraFiles,
		Started:    func(pid int) error { return launch.Started(ctx, pid) },
		Timeout:    probeTimeout,
		Grace:      time.Second,
		OnStdoutLine: func(l []byte, _ bool) {
			if len(out) < 4096 {
				out = append(append(out, l...), '\n')
			}
		},
	})
	if pr.State != wfb.StateExited || pr.ExitCode == nil || *pr.ExitCode != 0 || pr.KillFailure != "" {
		why := "it ended " + pr.State
		switch {
		case pr.SpawnErr != nil:
			why = pr.SpawnErr.Error()
		case pr.ExitCode != nil:
			why = fmt.Sprintf("it exited %d", *pr.ExitCode)
		}
		if tail := lastLine(pr.StderrTail); tail != "" {
			why += "; its stderr ends: " + wfb.Clip(tail, 300)
		}
		return "", errors.New(why)
	}
	v := versionPattern.FindString(string(out))
	versionCache.Store(key, v)
	if v == "" {
		return "", fmt.Errorf("it printed no version (%q)", wfb.Clip(strings.TrimSpace(string(out)), 120))
	}
	return v, nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// sessionProbe is where a session's version probe runs: in its sandbox and
// workspace, with its HOME and TMPDIR.
func sessionProbe(spec SessionSpec) versionProbe {
	return versionProbe{sandbox: spec.Sandbox, dir: spec.Workdir, home: spec.Env["HOME"], tmp: spec.Env["TMPDIR"]}
}

// grantDirs are the directories outside the workspace an agent may write:
// the sandbox's artifact directory and the review artifact's directory.
func grantDirs(spec SessionSpec) []string {
	var grant []string
	if spec.Sandbox != nil && spec.Sandbox.ArtifactDir() != "" {
		grant = append(grant, spec.Sandbox.ArtifactDir())
	}
	if spec.Review != nil {
		if d := filepath.Dir(spec.Review.ArtifactPath); len(grant) == 0 || grant[0] != d {
			grant = append(grant, d)
		}
	}
	return grant
}
