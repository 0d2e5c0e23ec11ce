package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/internal/owned"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
)

// An arm's kit reaches its agent in the agent's native form: files and
// skills copied into the session's private HOME (skills where the agent
// looks for them, agent.Adapter.SkillsDir) and the workspace, here; MCP
// servers and settings as the agent takes them, by its adapter (see
// package agent). A server's secret never goes into a file: its value
// joins the agent's environment under the server variable's own name
// (kitEnv), and the configuration refers to it.

// kitEnv is what the agent's environment needs for the kit's servers: each
// secret (a from_env variable, resolved when the run started) under the
// server variable's own name.
func kitEnv(k bench.Kit) map[string]string {
	env := map[string]string{}
	for _, s := range k.MCPServers {
		for _, v := range s.Env {
			if !v.Literal {
				env[v.Name] = v.Value
			}
		}
	}
	return env
}

// installKit copies the kit's home files and skills into the session's
// HOME, owned like HOME (the session uid's), the skills where the agent of
// ad looks for them.
func installKit(spec SessionSpec, ad agent.Adapter) error {
	k := spec.Kit
	if len(k.Skills) == 0 && !slices.ContainsFunc(k.Files, func(p bench.Placement) bool { return p.Into == bench.PlaceHome }) {
		return nil
	}
	home := spec.Env["HOME"]
	if home == "" {
		return errors.New("the arm places files or skills in HOME, and the session has none")
	}
	owner, err := owned.Owner(home)
	if err != nil {
		return err
	}
	for _, p := range k.Files {
		if p.Into != bench.PlaceHome {
			continue
		}
		if err := placeInto(home, p.Path, p.From, owner); err != nil {
			return fmt.Errorf("place %s: %w", p, err)
		}
	}
	rel, err := filepath.Rel(home, ad.SkillsDir(home))
	if err != nil {
		return err
	}
	for _, s := range k.Skills {
		if err := placeInto(home, filepath.Join(rel, filepath.Base(s)), s, owner); err != nil {
			return fmt.Errorf("install skill %s: %w", filepath.Base(s), err)
		}
	}
	return nil
}

// PlaceInWorkspace copies the kit's workspace files into a cell's copy of
// the task's tree, before the copy is shared with the session.
func PlaceInWorkspace(k bench.Kit, workspace string) error {
	for _, p := range k.Files {
		if p.Into != bench.PlaceWorkspace {
			continue
		}
		if err := placeInto(workspace, p.Path, p.From, nil); err != nil {
			return fmt.Errorf("place %s: %w", p, err)
		}
	}
	return nil
}

// placeInto copies src (a file or a tree) to root/rel, making the
// directories on the way, and gives what it made to owner (nil: wfb keeps
// it). A path already there is an error: a kit adds, it never replaces
// what the task's tree or wfb put there.
func placeInto(root, rel, src string, owner *syscall.Credential) error {
	dst := filepath.Join(root, rel)
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s is there already", rel)
	}
	if err := owned.MkdirAll(root, filepath.Dir(rel), owner); err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		err = sandbox.CopyTree(src, dst)
	} else {
		err = sandbox.CopyFile(src, dst, fi.Mode().Perm())
	}
	if err != nil {
		return err
	}
	return owned.Chown(dst, owner)
}

// kitSecrets are the values the kit passes its servers from wfb's
// environment: scrubbed from everything recorded, whatever their names.
func kitSecrets(k bench.Kit) []string {
	var out []string
	for _, v := range kitEnv(k) {
		out = append(out, v)
	}
	return out
}

// resolveKit makes an arm's kit ready for its cells: each server secret's
// value read from wfb's environment, each server program named by a bare
// name found on the sessions' PATH. A missing variable or program is a
// problem of the run's input, reported before anything runs. `command:
// wfb` stays as it is until the run stages wfb (stageStandIn).
func (s *Sweep) resolveKit(a bench.Arm) (bench.Kit, []string) {
	k := a.Kit
	k.MCPServers = slices.Clone(k.MCPServers)
	var problems []string
	for i, srv := range k.MCPServers {
		srv.Env = slices.Clone(srv.Env)
		for j, v := range srv.Env {
			if v.Literal {
				continue
			}
			val := s.opts.Getenv(v.FromEnv)
			if val == "" {
				problems = append(problems, fmt.Sprintf("arm %s: MCP server %s: env %s comes from $%s, which is not set", a.ID, srv.Name, v.Name, v.FromEnv))
			}
			srv.Env[j].Value = val
		}
		switch {
		case !srv.Stdio():
		case srv.Command == bench.WFBCommand:
			if s.opts.StandInBin == "" {
				problems = append(problems, fmt.Sprintf("arm %s: MCP server %s: command wfb needs wfb's own executable, which this run was not given", a.ID, srv.Name))
			}
		case !filepath.IsAbs(srv.Command):
			p, err := lookPathIn(srv.Command, DefaultPath)
			if err != nil {
				problems = append(problems, fmt.Sprintf("arm %s: MCP server %s: program %q is not on the sessions' PATH (%s); give its absolute path", a.ID, srv.Name, srv.Command, DefaultPath))
			}
			srv.Command = p
		}
		k.MCPServers[i] = srv
	}
	return k, problems
}

// usesWFB reports whether a kit runs wfb's own stand-in MCP server.
func usesWFB(k bench.Kit) bool {
	return slices.ContainsFunc(k.MCPServers, func(s bench.MCPServer) bool { return s.Command == bench.WFBCommand })
}

// lookPathIn finds name in the directories of path, as a session would.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fs.ErrNotExist
}

// kitSandboxPrograms are the programs of the kit's stdio servers, which
// the sandbox must let the session run (read-only, like the agent).
func kitSandboxPrograms(k bench.Kit) []sandbox.Program {
	var out []sandbox.Program
	for _, s := range k.MCPServers {
		if s.Stdio() && !slices.ContainsFunc(out, func(p sandbox.Program) bool { return p.Path == s.Command }) {
			out = append(out, sandbox.Program{Path: s.Command, What: "the MCP server program of " + s.Name})
		}
	}
	return out
}
