package bench

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/wfbench/wfb/internal/strictyaml"
)

// Bounds of an arm's kit: what one bench file may ask of every session.
const (
	MaxMCPServers  = 32
	MaxSkills      = 64
	MaxFiles       = 256
	MaxExpectTools = 64
	// MaxPlacedFileBytes bounds one file an arm places (files).
	MaxPlacedFileBytes = 64 << 20
)

// serverName is an MCP server's name: it becomes part of tool names
// (mcp__NAME__TOOL), which providers bound to 64 characters of
// [A-Za-z0-9_-], and "__" inside it would make those names ambiguous.
var serverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`) })

const mcpServerFields = "command, args, env, url"

// mcpServers reads `mcp_servers: {NAME: {command, args, env} | {url}}`.
func (p *benchParser) mcpServers(n node, field string) []MCPServer {
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return nil
	}
	if len(pairs) > MaxMCPServers {
		p.Addf(n, field, "%d servers; an arm may have at most %d", len(pairs), MaxMCPServers)
		return nil
	}
	var out []MCPServer
	secrets := map[string]string{} // variable → the wfb variable it comes from
	for _, kv := range pairs {
		f := strictyaml.Join(field, kv.Key)
		if !serverName().MatchString(kv.Key) || strings.Contains(kv.Key, "__") {
			p.Addf(kv.KeyAt, f, "server name %q: want letters, digits, '_' and '-' (no \"__\"), at most 32, starting with a letter or digit: it becomes part of tool names mcp__NAME__TOOL", kv.Key)
			continue
		}
		if s, ok := p.mcpServer(kv.Value, f); ok {
			s.Name = kv.Key
			p.serverSecrets(kv.Value, f, s, secrets)
			out = append(out, s)
		}
	}
	return out
}

// agentOwnEnv are variables the agent's environment holds for wfb or the
// agent itself: a server's secret, which reaches the server through the
// agent's environment under its own name, must not replace one.
var agentOwnEnv = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(PATH|LANG|LC_[A-Z]+|HOME|TMPDIR|USER|SHELL|API_TIMEOUT_MS|(ANTHROPIC|CLAUDE|OPENAI|CODEX|GEMINI|GOOGLE|WFB)_[A-Z0-9_]*)$`)
})

// serverSecrets refuses a secret variable that would replace one of the
// agent's own, or that two servers of the arm take from different places.
func (p *benchParser) serverSecrets(at node, field string, s MCPServer, seen map[string]string) {
	for _, v := range s.Env {
		if v.Literal {
			continue
		}
		switch {
		case agentOwnEnv().MatchString(v.Name):
			p.Addf(at, field+".env."+v.Name, "a secret reaches its server through the agent's environment under its own name, and %s is the agent's own; name it otherwise", v.Name)
		case seen[v.Name] != "" && seen[v.Name] != v.FromEnv:
			p.Addf(at, field+".env."+v.Name, "another server of this arm takes %s from $%s; one name, one value", v.Name, seen[v.Name])
		default:
			seen[v.Name] = v.FromEnv
		}
	}
}

// mcpServer reads one server's mapping.
func (p *benchParser) mcpServer(n node, field string) (MCPServer, bool) {
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return MCPServer{}, false
	}
	before := len(p.Problems)
	var s MCPServer
	for _, kv := range pairs {
		f := field + "." + kv.Key
		switch kv.Key {
		case "command":
			if c, ok := p.NonEmpty(kv.Value, f); ok {
				s.Command = p.program(kv.Value, f, c)
			}
		case "args":
			s.Args = p.Strings(kv.Value, f)
		case "env":
			s.Env = p.env(kv.Value, f)
		case "url":
			if u, ok := p.NonEmpty(kv.Value, f); ok {
				p.httpURL(kv.Value, f, u, "")
				s.URL = u
			}
		default:
			p.Addf(kv.KeyAt, f, "unknown field (an MCP server has: %s)", mcpServerFields)
		}
	}
	hasCommand, hasURL := p.has(pairs, "command"), p.has(pairs, "url")
	switch {
	case hasCommand && hasURL:
		p.Addf(p.keyOf(pairs, "url"), field+".url", "command and url are exclusive: a server is a program the agent starts (stdio) or an HTTP server")
	case !hasCommand && !hasURL:
		p.Addf(n, field, "needs command: PROGRAM (a stdio server the agent starts) or url: URL (an HTTP server)")
	case hasURL:
		for _, k := range []string{"args", "env"} {
			if at := p.keyOf(pairs, k); at != nil {
				p.Addf(at, field+"."+k, "only with command: wfb does not start an HTTP server")
			}
		}
	}
	return s, len(p.Problems) == before
}

// program resolves an MCP server's command: wfb itself, a path (relative
// to the bench file) that must be an executable file, or a bare name the
// session finds on its PATH when it runs.
func (p *benchParser) program(at node, field, c string) string {
	if c == WFBCommand || !strings.Contains(c, "/") {
		return c
	}
	abs := p.resolve(c)
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		p.Addf(at, field, "MCP server program %s: %s", c, errText(err))
	case !fi.Mode().IsRegular():
		p.Addf(at, field, "MCP server program %s is not a file", c)
	case fi.Mode().Perm()&0o111 == 0:
		p.Addf(at, field, "MCP server program %s is not executable (chmod +x it)", c)
	}
	return abs
}

// skills reads `skills: [DIR, ...]`: directories holding a SKILL.md, each
// installed under its base name, which must be unique in the arm.
func (p *benchParser) skills(n node, field string) []string {
	items, ok := p.Sequence(n, field)
	if !ok {
		return nil
	}
	if len(items) > MaxSkills {
		p.Addf(n, field, "%d skills; an arm may have at most %d", len(items), MaxSkills)
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := p.NonEmpty(item, f)
		if !ok {
			continue
		}
		dir := p.resolve(s)
		name := filepath.Base(dir)
		switch fi, err := os.Stat(dir); {
		case err != nil:
			p.Addf(item, f, "skill %s: %s", s, errText(err))
			continue
		case !fi.IsDir():
			p.Addf(item, f, "skill %s is not a directory (a skill is a directory holding SKILL.md)", s)
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil || !fi.Mode().IsRegular() {
			p.Addf(item, f, "skill %s has no SKILL.md file", s)
			continue
		}
		if !idPattern().MatchString(name) {
			p.Addf(item, f, "skill %s: its directory name %q must be letters, digits, '.', '_' and '-' (it is the skill's name)", s, name)
			continue
		}
		if seen[name] {
			p.Addf(item, f, "a second skill named %s (skills are installed under their directory's name)", name)
			continue
		}
		seen[name] = true
		out = append(out, dir)
	}
	return out
}

const placementFields = "from, to"

// files reads `files: [{from: PATH, to: home/PATH | workspace/PATH}]`.
func (p *benchParser) files(n node, field string) []Placement {
	var out []Placement
	seen := map[string]bool{}
	count := 0
	p.mappings(n, field, func(f string, item node, pairs []strictyaml.Pair) {
		if count++; count > MaxFiles {
			if count == MaxFiles+1 {
				p.Addf(n, field, "more than %d files; an arm may place at most %d", MaxFiles, MaxFiles)
			}
			return
		}
		var pl Placement
		good := true
		for _, kv := range pairs {
			kf := f + "." + kv.Key
			switch kv.Key {
			case "from":
				if s, ok := p.NonEmpty(kv.Value, kf); ok {
					pl.From = p.resolve(s)
					fi, err := os.Stat(pl.From)
					switch {
					case err != nil:
						p.Addf(kv.Value, kf, "%s: %s", s, errText(err))
						good = false
					case !fi.IsDir() && !fi.Mode().IsRegular():
						p.Addf(kv.Value, kf, "%s is neither a file nor a directory", s)
						good = false
					case fi.Mode().IsRegular() && fi.Size() > MaxPlacedFileBytes:
						p.Addf(kv.Value, kf, "%s has %d bytes; a placed file may have at most %d", s, fi.Size(), MaxPlacedFileBytes)
						good = false
					}
				}
			case "to":
				if s, ok := p.NonEmpty(kv.Value, kf); ok {
					into, rel, why := placementTarget(s)
					if why != "" {
						p.Addf(kv.Value, kf, "%q: %s", s, why)
						good = false
					}
					pl.Into, pl.Path = into, rel
				}
			default:
				p.Addf(kv.KeyAt, kf, "unknown field (a file has: %s)", placementFields)
			}
		}
		p.required(item, f, pairs, "from", "to")
		if good && pl.From != "" && pl.Path != "" {
			if seen[pl.String()] {
				p.Addf(item, f, "a second file placed at %s", pl)
				return
			}
			seen[pl.String()] = true
			out = append(out, pl)
		}
	})
	return out
}

// placementTarget splits a placement's `to` into where and the clean
// relative path, or says why it cannot be used.
func placementTarget(s string) (into, rel, why string) {
	into, rel, _ = strings.Cut(s, "/")
	if into != PlaceHome && into != PlaceWorkspace {
		return "", "", "must start with home/ (the session's private HOME) or workspace/ (the cell's copy of the task's tree)"
	}
	clean := path.Clean(rel)
	switch {
	case rel == "" || clean == ".":
		return "", "", "names no file under " + into + "/"
	case clean != rel:
		return "", "", "write it clean: " + into + "/" + clean
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "", "", "leaves " + into + "/"
	}
	return into, clean, ""
}

// settings reads the agent's own settings: a mapping, kept as plain values.
func (p *benchParser) settings(n node, field string) map[string]any {
	if _, ok := p.Mapping(n, field); !ok {
		return nil
	}
	v, ok := p.Value(n, field)
	if !ok {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// expectTools reads `expect_tools: [PATTERN, ...]`.
func (p *benchParser) expectTools(n node, field string) []string {
	items, ok := p.Sequence(n, field)
	if !ok {
		return nil
	}
	if len(items) > MaxExpectTools {
		p.Addf(n, field, "%d patterns; an arm may expect at most %d", len(items), MaxExpectTools)
		return nil
	}
	var out []string
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := p.NonEmpty(item, f)
		if !ok {
			continue
		}
		if !validToolPattern(s) {
			p.Addf(item, f, "%q is not a tool pattern (a tool name, * and ? as in mcp__code__* or skill:review)", s)
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// checkKit refuses what an arm's agent cannot honour, and expectations no
// session of the arm could meet.
func (p *benchParser) checkKit(f string, a *Arm, pairs []strictyaml.Pair) {
	if a.Agent == AgentStandIn {
		if at := p.keyOf(pairs, "settings"); at != nil {
			p.Addf(at, f+".settings", "the stand-in agent has no settings of its own; remove them from this arm")
		}
	}
	// What wfb writes in HOME: a placement there, or a directory placed
	// over it, would collide with it.
	reserved := map[string]string{".wfb-kit": "where wfb writes the agent's MCP configuration and settings"}
	switch a.Agent {
	case AgentGemini:
		reserved[".gemini/settings.json"] = "gemini's settings, which wfb writes; give their content as this arm's settings"
	case AgentCodex:
		if len(a.Skills) > 0 {
			reserved["skills"] = "where wfb installs this arm's skills"
		}
	case AgentOpencode:
		reserved[".config/opencode/package-lock.json"] = "opencode's plugin lock, which wfb writes so that opencode installs nothing from npm"
		reserved[".config/opencode/node_modules"] = "beside opencode's plugin lock, which wfb writes"
	}
	for _, pl := range a.Files {
		for _, r := range slices.Sorted(maps.Keys(reserved)) {
			why := reserved[r]
			if pl.Into == PlaceHome && (pl.Path == r || strings.HasPrefix(pl.Path, r+"/") || strings.HasPrefix(r, pl.Path+"/")) {
				p.Addf(p.keyOf(pairs, "files"), f+".files", "%s would cover home/%s: %s", pl, r, why)
			}
		}
	}
	armEnv := map[string]bool{}
	for _, v := range a.Env {
		armEnv[v.Name] = true
		if v.Name == "CODEX_HOME" && a.Agent == AgentCodex && len(a.Skills) > 0 {
			p.Addf(p.keyOf(pairs, "skills"), f+".skills", "wfb installs skills in the session's private CODEX_HOME; an arm that sets its own (env CODEX_HOME) cannot have skills — it would share them with every session, and keep them")
		}
	}
	for _, s := range a.MCPServers {
		for _, v := range s.Env {
			if !v.Literal && armEnv[v.Name] {
				p.Addf(p.keyOf(pairs, "mcp_servers"), f+".mcp_servers."+s.Name+".env."+v.Name, "the arm's env sets %s too; a server's secret reaches it through the agent's environment under its own name, so name one of them otherwise", v.Name)
			}
		}
	}
	if a.Agent == AgentClaude || a.Agent == AgentStandIn {
		for _, pl := range a.Files {
			if pl.Into == PlaceHome && strings.HasPrefix(pl.Path+"/", ".claude/skills/") {
				p.Addf(p.keyOf(pairs, "files"), f+".files", "%s: install skills with this arm's skills, which the fingerprint and the evidence of use know", pl)
			}
		}
	}
}
