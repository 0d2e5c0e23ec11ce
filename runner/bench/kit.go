package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wfbench/wfb/internal/treedigest"
)

// Kit is what an arm gives its agent besides the model and the prompt: MCP
// servers, skills, files placed before the session, the agent's own
// settings, and the tools its workflow must be seen using. The runner
// writes each in the agent's native form (see runner/kit.go).
type Kit struct {
	MCPServers []MCPServer
	// Skills are directories, absolute, each holding a SKILL.md; each is
	// installed under its base name where the agent looks for skills.
	Skills []string
	Files  []Placement
	// Settings is the agent's own settings object (nil: none), merged into
	// what wfb gives the agent: Claude Code's --settings, Codex's -c
	// overrides, Gemini CLI's settings file.
	Settings map[string]any
	// ExpectTools are patterns (path.Match syntax: * and ?) of tool names
	// as wfb counts them (see runner's tool counting: built-in tools as the
	// agent names them, MCP tools as mcp__SERVER__TOOL, skills as
	// skill:NAME). A session that ends ok without a call matching EACH
	// pattern is recorded workflow-not-used.
	ExpectTools []string
}

// Empty reports whether the kit gives the agent nothing beyond its
// defaults and expects nothing.
func (k Kit) Empty() bool {
	return len(k.MCPServers) == 0 && len(k.Skills) == 0 && len(k.Files) == 0 && k.Settings == nil && len(k.ExpectTools) == 0
}

// MCPServer is one MCP server an arm's agent is given: a program the agent
// starts and talks to over stdio (Command, Args, Env), or an HTTP server
// (URL).
type MCPServer struct {
	Name    string
	Command string // WFBCommand, an absolute path, or a name on the session's PATH
	Args    []string
	// Env are the server's variables: a secret's value comes from wfb's
	// environment (FromEnv) and reaches the server through the agent's
	// environment, never written to a file.
	Env []EnvVar
	URL string
}

// Stdio reports whether the agent starts the server itself.
func (s MCPServer) Stdio() bool { return s.URL == "" }

// WFBCommand, as an MCP server's command, is this wfb: `command: wfb` with
// `args: [mock, mcp-server]` is the stand-in MCP server, run from the
// run's staged copy of wfb.
const WFBCommand = "wfb"

// Placement is a file or directory copied into a session's private HOME
// or its workspace copy before the session starts.
type Placement struct {
	From string // absolute, on the host
	Into string // PlaceHome or PlaceWorkspace
	Path string // where, relative to Into's directory; clean, never leaving it
}

// Where a Placement goes.
const (
	PlaceHome      = "home"
	PlaceWorkspace = "workspace"
)

// String is the placement's destination as the bench file writes it.
func (p Placement) String() string { return p.Into + "/" + p.Path }

// MatchTool reports whether a tool name as wfb counts it matches an
// expect_tools pattern.
func MatchTool(pattern, tool string) bool {
	ok, err := path.Match(pattern, tool)
	return err == nil && ok
}

// validToolPattern says whether pattern is a usable expect_tools pattern.
func validToolPattern(pattern string) bool {
	if pattern == "" || strings.TrimSpace(pattern) != pattern {
		return false
	}
	_, err := path.Match(pattern, "")
	return err == nil
}

// KitDigest is the digest of everything an arm's kit gives its agent, by
// content: its servers (a program given by path by its bytes), each
// skill's tree, each placed file's or tree's bytes, its settings and its
// expectations — "sha256:HEX", or "" for an arm without a kit. A skill
// edited between two runs makes a different digest, as a changed prompt
// makes a different bench file.
func (a Arm) KitDigest() (string, error) {
	if a.Kit.Empty() {
		return "", nil
	}
	type server struct {
		Name    string   `json:"name"`
		Command string   `json:"command,omitempty"`
		Program string   `json:"program_sha256,omitempty"`
		Package string   `json:"package_json_sha256,omitempty"`
		Args    []string `json:"args,omitempty"`
		Env     []string `json:"env,omitempty"`
		URL     string   `json:"url,omitempty"`
	}
	doc := struct {
		Servers  []server          `json:"mcp_servers,omitempty"`
		Skills   map[string]string `json:"skills,omitempty"`
		Files    map[string]string `json:"files,omitempty"`
		Settings map[string]any    `json:"settings,omitempty"`
		Expect   []string          `json:"expect_tools,omitempty"`
	}{Settings: a.Settings, Expect: a.ExpectTools, Skills: map[string]string{}, Files: map[string]string{}}
	for _, s := range a.MCPServers {
		e := server{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL}
		if filepath.IsAbs(s.Command) {
			d, err := contentDigest(s.Command)
			if err != nil {
				return "", fmt.Errorf("MCP server %s: %w", s.Name, err)
			}
			e.Program = d
			// An npm program's entry file stays the same across many
			// versions of its package: the package's manifest says which.
			if e.Package, err = packageDigest(s.Command); err != nil {
				return "", fmt.Errorf("MCP server %s: %w", s.Name, err)
			}
		}
		for _, v := range s.Env {
			if v.Literal {
				e.Env = append(e.Env, v.Name+"="+v.Value)
			} else {
				e.Env = append(e.Env, v.Name+" from $"+v.FromEnv)
			}
		}
		doc.Servers = append(doc.Servers, e)
	}
	for _, dir := range a.Skills {
		d, err := contentDigest(dir)
		if err != nil {
			return "", fmt.Errorf("skill %s: %w", filepath.Base(dir), err)
		}
		doc.Skills[filepath.Base(dir)] = d
	}
	for _, pl := range a.Files {
		d, err := contentDigest(pl.From)
		if err != nil {
			return "", fmt.Errorf("file for %s: %w", pl, err)
		}
		doc.Files[pl.String()] = d
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("kit of arm %s: %w", a.ID, err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// packageDigest is the sha256 of the package.json of the npm package a
// program's file (its symlinks resolved) belongs to, or "" for a program
// that is not in a node_modules package.
func packageDigest(program string) (string, error) {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return "", err
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		parent := filepath.Dir(dir)
		if parent == dir || filepath.Base(dir) == "node_modules" {
			return "", nil
		}
		m := filepath.Join(dir, "package.json")
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			// Only a package that node_modules holds (@scope/name or name).
			if filepath.Base(parent) == "node_modules" || filepath.Base(filepath.Dir(parent)) == "node_modules" {
				return contentDigest(m)
			}
		}
	}
}

// contentDigest is a directory's tree digest (content and modes) or a
// file's sha256, following symlinks.
func contentDigest(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", err
		}
		return treedigest.Of(real)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
