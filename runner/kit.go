package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
)

// An arm's kit reaches its agent in the agent's native form: files and
// skills copied into the session's private HOME (skills where the agent
// looks for them), MCP servers and settings as the agent takes them —
// Claude Code (and the stand-in, which shares its interface) a
// --mcp-config file with --strict-mcp-config and a --settings file, Codex
// -c overrides of mcp_servers.NAME and of its settings, Gemini CLI the
// mcpServers and settings of the settings file wfb writes for it. A
// server's secret never goes into a file: its value joins the agent's
// environment under the server variable's own name, and the configuration
// refers to it (${NAME} for Claude Code, env_vars for Codex, $NAME for
// Gemini CLI).

// kitDir is where, in the private HOME, wfb writes the configuration
// files it points an agent at.
const kitDir = ".wfb-kit"

// skillsDir is where an agent looks for skills in its HOME.
func skillsDir(agent, home string) string {
	switch agent {
	case bench.AgentCodex:
		// wfb's CODEX_HOME is the private HOME (an arm that sets its own
		// cannot have skills: see bench's checkKit).
		return filepath.Join(home, "skills")
	case bench.AgentGemini:
		return filepath.Join(home, ".gemini", "skills")
	}
	return filepath.Join(home, ".claude", "skills")
}

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
// HOME, owned like HOME (the session uid's).
func installKit(spec SessionSpec) error {
	k := spec.Kit
	if len(k.Skills) == 0 && !slices.ContainsFunc(k.Files, func(p bench.Placement) bool { return p.Into == bench.PlaceHome }) {
		return nil
	}
	home := spec.Env["HOME"]
	if home == "" {
		return errors.New("the arm places files or skills in HOME, and the session has none")
	}
	owner, err := ownerOf(home)
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
	rel, err := filepath.Rel(home, skillsDir(spec.Agent, home))
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
	if err := mkdirsOwned(root, filepath.Dir(rel), owner); err != nil {
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
	return chownTree(dst, owner)
}

// writeKitFile writes data to HOME/.wfb-kit/name, mode 0600, owned like
// HOME, and returns its path.
func writeKitFile(home, name string, data []byte) (string, error) {
	owner, err := ownerOf(home)
	if err != nil {
		return "", err
	}
	if err := mkdirsOwned(home, kitDir, owner); err != nil {
		return "", err
	}
	path := filepath.Join(home, kitDir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return path, chownTree(path, owner)
}

// ownerOf is dir's owner as a credential when it is not wfb's own user
// (a root wfb's session uid), else nil.
func ownerOf(dir string) (*syscall.Credential, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return nil, nil
	}
	return &syscall.Credential{Uid: st.Uid, Gid: st.Gid}, nil
}

// mkdirsOwned makes root/rel's missing directories, 0700, given to owner.
func mkdirsOwned(root, rel string, owner *syscall.Credential) error {
	if rel == "." || rel == "" {
		return nil
	}
	cur := root
	for _, c := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return fmt.Errorf("%s is not a directory", cur)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(cur, 0o700); err != nil {
			return err
		}
		if err := chownTree(cur, owner); err != nil {
			return err
		}
	}
	return nil
}

// chownTree gives path, and everything below it, to owner (nil: nothing
// to do). Symlinks are changed themselves, never followed.
func chownTree(path string, owner *syscall.Credential) error {
	if owner == nil {
		return nil
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(owner.Uid), int(owner.Gid))
	})
}

// claudeKitArgs writes the kit's MCP servers and settings for Claude Code
// (and the stand-in) into HOME and returns the flags that name them.
// --strict-mcp-config keeps every other MCP configuration out: the arm's
// servers are the session's only ones.
func claudeKitArgs(spec SessionSpec) ([]string, error) {
	k := spec.Kit
	home := spec.Env["HOME"]
	var args []string
	if len(k.MCPServers) > 0 {
		servers := map[string]any{}
		for _, s := range k.MCPServers {
			if !s.Stdio() {
				servers[s.Name] = map[string]any{"type": "http", "url": s.URL}
				continue
			}
			cfg := map[string]any{"type": "stdio", "command": s.Command, "args": nonNil(s.Args)}
			if len(s.Env) > 0 {
				cfg["env"] = serverEnv(s, func(name string) string { return "${" + name + "}" })
			}
			servers[s.Name] = cfg
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
		if spec.Agent == bench.AgentClaude || len(spec.AllowedTools) > 0 {
			var rules []string
			for _, s := range k.MCPServers {
				rules = append(rules, mcpToolPrefix+s.Name)
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

// serverEnv is a server's environment as its configuration writes it: a
// literal value as it is, a secret as ref(NAME), which the agent resolves
// from its own environment.
func serverEnv(s bench.MCPServer, ref func(string) string) map[string]any {
	env := map[string]any{}
	for _, v := range s.Env {
		if v.Literal {
			env[v.Name] = v.Value
		} else {
			env[v.Name] = ref(v.Name)
		}
	}
	return env
}

func writeKitJSON(home, name string, v any) (string, error) {
	if home == "" {
		return "", errors.New("the session has no HOME to write it in")
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	return writeKitFile(home, name, data)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// codexKitArgs are Codex's -c overrides for the kit: each MCP server under
// mcp_servers.NAME (a secret passed by name in env_vars, which Codex
// forwards from its own environment), and each setting under its dotted
// key. --strict-config, which wfb always passes, makes Codex refuse a key
// it does not know.
func codexKitArgs(k bench.Kit) ([]string, error) {
	var args []string
	for _, s := range k.MCPServers {
		key := "mcp_servers." + s.Name + "."
		if !s.Stdio() {
			args = append(args, "-c", key+"url="+tomlString(s.URL))
			continue
		}
		// required: a server that does not start fails the session, where
		// Codex otherwise goes on without it and says nothing.
		args = append(args, "-c", key+"command="+tomlString(s.Command), "-c", key+"required=true")
		if len(s.Args) > 0 {
			v, _ := tomlValue(toAny(s.Args))
			args = append(args, "-c", key+"args="+v)
		}
		literal := map[string]any{}
		var names []any
		for _, v := range s.Env {
			if v.Literal {
				literal[v.Name] = v.Value
			} else {
				names = append(names, v.Name)
			}
		}
		if len(literal) > 0 {
			v, _ := tomlValue(literal)
			args = append(args, "-c", key+"env="+v)
		}
		if len(names) > 0 {
			v, _ := tomlValue(names)
			args = append(args, "-c", key+"env_vars="+v)
		}
	}
	settings, err := codexSettings("", k.Settings)
	if err != nil {
		return nil, err
	}
	return append(args, settings...), nil
}

// codexSettings flattens settings into -c key=VALUE pairs: a table's keys
// join its name with a dot, as Codex's -c reads them.
func codexSettings(prefix string, m map[string]any) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !tomlBareKey.MatchString(k) {
			return nil, fmt.Errorf("settings key %q: codex's -c overrides take letters, digits, '_' and '-' only", prefix+k)
		}
		if sub, ok := m[k].(map[string]any); ok {
			more, err := codexSettings(prefix+k+".", sub)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			continue
		}
		v, err := tomlValue(m[k])
		if err != nil {
			return nil, fmt.Errorf("settings key %s: %w", prefix+k, err)
		}
		out = append(out, "-c", prefix+k+"="+v)
	}
	return out, nil
}

var tomlBareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlValue writes a plain value (as strictyaml.Value makes them) as TOML.
func tomlValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return tomlString(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int, int64, uint64:
		return fmt.Sprint(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", fmt.Errorf("%v is not a TOML number", x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case json.Number:
		return x.String(), nil
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, err := tomlValue(e)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, err := tomlValue(x[k])
			if err != nil {
				return "", err
			}
			parts = append(parts, tomlString(k)+" = "+s)
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case nil:
		return "", errors.New("TOML has no null: leave the key out")
	}
	return "", fmt.Errorf("a %T cannot be written as TOML", v)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// geminiKitSettings merges the kit into the settings wfb writes for Gemini
// CLI: the arm's settings over wfb's (a key the arm sets wins), and its MCP
// servers as mcpServers, a secret written as $NAME, which Gemini CLI
// resolves from its environment.
func geminiKitSettings(base map[string]any, k bench.Kit) map[string]any {
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

// mergeSettings is base with over's keys set on it, tables merged key by
// key; neither is changed.
func mergeSettings(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		b, bok := out[k].(map[string]any)
		o, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeSettings(b, o)
			continue
		}
		out[k] = v
	}
	return out
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
