package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/proc"
	"github.com/wfbench/wfb/store"
)

// agentSession is what the session's agent adapter is given: the spec's
// agent, how it runs, the directories it is granted and the kit's servers,
// skills and settings.
func agentSession(spec SessionSpec) agent.Session {
	return agent.Session{
		Bin: spec.AgentBin, Args: spec.AgentArgs, Version: spec.AgentVersion, Model: spec.Model,
		MaxTurns: spec.MaxTurns, AllowedTools: spec.AllowedTools, ExtraArgs: spec.ExtraArgs,
		OutputFormat: spec.OutputFormat, Permission: spec.Permission, Env: spec.Env,
		Sandboxed: spec.Sandbox != nil, Grant: grantDirs(spec), Kit: agentKit(spec.Kit),
	}
}

// agentKit is what an adapter writes of an arm's kit in its agent's form:
// the MCP servers (each secret's value resolved by resolveKit), the
// skills and the settings.
func agentKit(k bench.Kit) agent.Kit {
	out := agent.Kit{Skills: k.Skills, Settings: k.Settings}
	for _, s := range k.MCPServers {
		srv := agent.MCPServer{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL}
		for _, v := range s.Env {
			srv.Env = append(srv.Env, agent.ServerVar{Name: v.Name, Value: v.Value, Literal: v.Literal})
		}
		out.MCPServers = append(out.MCPServers, srv)
	}
	return out
}

// probeTimeout bounds `<cli> --version`. Claude Code and Codex answer in
// well under a second; Gemini CLI, a Node program, took 16-22 s at load 16
// on 2 cores. The answer is cached per binary, so a sweep waits once.
const probeTimeout = 60 * time.Second

var versionCache sync.Map // store.AgentBinary → string

// VersionBook remembers, across processes, what an agent binary said its
// version was, by the binary's identity (see store.AgentBinary): a
// session of a binary already asked skips the probe, a second start of
// the agent. *store.DB satisfies it.
type VersionBook interface {
	AgentVersion(ctx context.Context, b store.AgentBinary) (string, bool, error)
	RememberAgentVersion(ctx context.Context, b store.AgentBinary, version string) error
}

var _ VersionBook = (*store.DB)(nil)

// binaryIdentity is the identity of the file at path (symbolic links
// followed: an npm .bin link names the script it runs) as probed in
// backend with args.
func binaryIdentity(path, backend string, args []string) (store.AgentBinary, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.AgentBinary{}, err
	}
	b := store.AgentBinary{Path: path, Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), Backend: backend,
		Probe: strings.Join(args, "\x00")}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		b.Device, b.Inode = uint64(st.Dev), st.Ino
		b.CtimeNS = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return b, nil
}

// versionProbe is where and as whom `<cli> --version` runs: the session's
// sandbox (nil: none), its workspace, and its HOME and TMPDIR.
type versionProbe struct {
	sandbox   Isolation
	dir       string
	home, tmp string
	// book, when set, remembers versions across processes: a version it
	// holds for the binary's identity is the answer without a probe, and a
	// probe's answer is kept in it.
	book VersionBook
}

// probeVersion asks an agent CLI its version as its adapter's probe p says
// (`bin --version`), once per binary (path, size, mtime and backend) and
// probe: a sweep of many sessions probes once. The probe is a process of
// the session like the agent itself: in its sandbox, as its uid, in its
// cgroup or process group, bounded by probeTimeout, every descendant
// killed when it ends; it gets no credentials (PATH, HOME, TMPDIR and
// LANG, and what p adds). It returns "" when the binary cannot say; the
// session itself then reports what is wrong with the binary.
func probeVersion(ctx context.Context, bin string, where versionProbe, p agent.Probe) string {
	v, _ := probeVersionWhy(ctx, bin, where, p)
	return v
}

// probeVersionWhy is probeVersion, with why it found no version when it
// found none: the launch refused, the binary not found, or how the probe
// ended and the last line it printed on stderr.
func probeVersionWhy(ctx context.Context, bin string, where versionProbe, p agent.Probe) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", err
	}
	backend := "none"
	if where.sandbox != nil {
		backend = where.sandbox.Backend()
	}
	key, err := binaryIdentity(path, backend, p.Args)
	if err != nil {
		return "", err
	}
	if v, ok := versionCache.Load(key); ok {
		return v.(string), nil
	}
	if where.book != nil {
		// A book that cannot be read costs a probe, nothing else.
		if v, ok, err := where.book.AgentVersion(ctx, key); err == nil && ok {
			versionCache.Store(key, v)
			return v, nil
		}
	}
	launch, err := launchIn(ctx, where.sandbox)
	if err != nil {
		return "", err
	}
	defer launch.Close()
	env := map[string]string{"PATH": DefaultPath, "LANG": "C.UTF-8", "HOME": where.home, "TMPDIR": where.tmp}
	maps.Copy(env, p.Env)
	var out []byte
	pr := proc.Run(ctx, proc.Spec{
		Argv:       append(append(append([]string{}, launch.Prefix...), path), p.Args...),
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
	v := p.Parse(out)
	versionCache.Store(key, v)
	if v != "" && where.book != nil {
		// Not remembered is only a probe more next time.
		_ = where.book.RememberAgentVersion(ctx, key, v)
	}
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
	return versionProbe{sandbox: spec.Sandbox, dir: spec.Workdir, home: spec.Env["HOME"], tmp: spec.Env["TMPDIR"], book: spec.Versions}
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
