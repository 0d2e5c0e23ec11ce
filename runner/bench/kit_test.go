package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kitDir is a bench directory with a workspace, a mock script, a skill, a
// file to place and an executable server program.
func kitDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"r.yaml":               "default: {text: ok}\n",
		"skills/lint/SKILL.md": "---\nname: lint\ndescription: lint it\n---\nRun the linter.\n",
		"skills/empty/x.txt":   "no SKILL.md here\n",
		"guide.md":             "Be brief.\n",
		"bin/server":           "#!/bin/sh\nexit 0\n",
		"bin/plain":            "not executable\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "bin/server"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func parseKitBench(t *testing.T, dir, arms string) (*Bench, error) {
	t.Helper()
	text := "provider: {mock: r.yaml}\ntasks:\n  - {id: t, workspace: ws, prompt: p}\narms:\n" + arms
	return Parse("bench.yaml", dir, []byte(text), checkScript)
}

// Every kit field is read into the arm, paths resolved against the bench
// file: a field read wrong would run another workflow than the one named.
func TestAnArmsKitIsRead(t *testing.T) {
	dir := kitDir(t)
	b, err := parseKitBench(t, dir, `  - id: a
    agent: claude
    mcp_servers:
      code: {command: bin/server, args: [--root, .], env: {TOKEN: {from_env: CODE_TOKEN}, MODE: {value: fast}}}
      web: {url: "https://mcp.example.com/mcp"}
      self: {command: wfb, args: [mock, mcp-server]}
    skills: [skills/lint]
    files:
      - {from: guide.md, to: home/.claude/CLAUDE.md}
      - {from: guide.md, to: workspace/CLAUDE.md}
    settings: {permissions: {allow: ["Bash(make:*)"]}, verbose: true}
    expect_tools: ["mcp__code__*", "skill:lint"]
`)
	if err != nil {
		t.Fatal(err)
	}
	want := Kit{
		MCPServers: []MCPServer{
			{Name: "code", Command: filepath.Join(dir, "bin/server"), Args: []string{"--root", "."},
				Env: []EnvVar{{Name: "TOKEN", FromEnv: "CODE_TOKEN"}, {Name: "MODE", Value: "fast", Literal: true}}},
			{Name: "web", URL: "https://mcp.example.com/mcp"},
			{Name: "self", Command: WFBCommand, Args: []string{"mock", "mcp-server"}},
		},
		Skills: []string{filepath.Join(dir, "skills/lint")},
		Files: []Placement{
			{From: filepath.Join(dir, "guide.md"), Into: PlaceHome, Path: ".claude/CLAUDE.md"},
			{From: filepath.Join(dir, "guide.md"), Into: PlaceWorkspace, Path: "CLAUDE.md"},
		},
		Settings:    map[string]any{"permissions": map[string]any{"allow": []any{"Bash(make:*)"}}, "verbose": true},
		ExpectTools: []string{"mcp__code__*", "skill:lint"},
	}
	if diff := cmp.Diff(want, b.Arms[0].Kit); diff != "" {
		t.Errorf("kit (-want +got):\n%s", diff)
	}
}

// A bad kit is reported whole, each problem naming its field, before
// anything runs: a server that cannot start, a skill without SKILL.md, a
// file placed outside HOME or the workspace, a pattern that matches
// nothing, a setting the agent has no place for.
func TestABadKitNamesEveryProblem(t *testing.T) {
	dir := kitDir(t)
	_, err := parseKitBench(t, dir, `  - id: a
    agent: stand-in
    mcp_servers:
      "bad__name": {command: wfb}
      both: {command: wfb, url: "http://x/mcp"}
      none: {args: [x]}
      missing: {command: bin/nope}
      plain: {command: bin/plain}
      http: {url: "ftp://x", env: {A: {value: b}}}
      secret: {command: wfb, env: {API_TOKEN: {value: abc}}}
      path: {command: wfb, env: {PATH: {from_env: MY_PATH}, TOKEN: {from_env: A}}}
      other: {command: wfb, env: {TOKEN: {from_env: B}}}
    skills: [skills/empty, skills/nope, guide.md]
    files:
      - {from: guide.md, to: etc/passwd}
      - {from: guide.md, to: workspace/../x}
      - {from: nope.md, to: home/x}
      - {from: guide.md}
      - {from: guide.md, to: home/.wfb-kit/mcp.json}
      - {from: /dev/null, to: home/null}
    settings: {a: 1}
    expect_tools: ["[", " x"]
  - id: g
    agent: gemini
    files: [{from: skills, to: home/.gemini}]
  - id: c
    agent: codex
    env: {CODEX_HOME: {value: /srv/codex}, GH_TOKEN: {from_env: GH}}
    skills: [skills/lint]
    mcp_servers: {x: {command: wfb, env: {GH_TOKEN: {from_env: OTHER}}}}
`)
	var be *Error
	if !errors.As(err, &be) {
		t.Fatalf("Parse = %v, want a *Error", err)
	}
	got := be.Error()
	for _, want := range []string{
		`arms[0].mcp_servers.bad__name: server name "bad__name"`,
		`arms[0].mcp_servers.both.url: command and url are exclusive`,
		`arms[0].mcp_servers.none: needs command: PROGRAM`,
		`arms[0].mcp_servers.missing.command: MCP server program bin/nope: no such file or directory`,
		`arms[0].mcp_servers.plain.command: MCP server program bin/plain is not executable`,
		`arms[0].mcp_servers.http.url: must be an http(s) URL`,
		`arms[0].mcp_servers.http.env: only with command`,
		`arms[0].mcp_servers.secret.env.API_TOKEN.value: API_TOKEN looks like a secret`,
		`arms[0].skills[0]: skill skills/empty has no SKILL.md file`,
		`arms[0].skills[1]: skill skills/nope: no such file or directory`,
		`arms[0].skills[2]: skill guide.md is not a directory`,
		`arms[0].files[0].to: "etc/passwd": must start with home/`,
		`arms[0].files[1].to: "workspace/../x": leaves workspace/`,
		`arms[0].files[2].from: nope.md: no such file or directory`,
		`arms[0].files[3].to: is required`,
		`arms[0].settings: the stand-in agent has no settings`,
		`arms[0].mcp_servers.path.env.PATH: a secret reaches its server through the agent's environment`,
		`arms[0].mcp_servers.other.env.TOKEN: another server of this arm takes TOKEN from $A`,
		`arms[0].files: home/.wfb-kit/mcp.json would cover home/.wfb-kit: where wfb writes`,
		`arms[0].files[5].from: /dev/null is neither a file nor a directory`,
		`arms[0].expect_tools[0]: "[" is not a tool pattern`,
		`arms[0].expect_tools[1]: " x" is not a tool pattern`,
		`arms[1].files: home/.gemini would cover home/.gemini/settings.json: gemini's settings`,
		`arms[2].skills: wfb installs skills in the session's private CODEX_HOME`,
		`arms[2].mcp_servers.x.env.GH_TOKEN: the arm's env sets GH_TOKEN too`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the problems do not say %q; they are:\n%s", want, got)
		}
	}
}

// A skill edited between two runs is a different bench, as a changed
// prompt is: the kit's digest follows the content of what it places, not
// its path.
func TestTheKitDigestFollowsTheContentOfSkillsAndFiles(t *testing.T) {
	dir := kitDir(t)
	b, err := parseKitBench(t, dir, `  - {id: a, agent: stand-in, skills: [skills/lint], files: [{from: guide.md, to: home/g.md}]}
  - {id: b, agent: stand-in}
`)
	if err != nil {
		t.Fatal(err)
	}
	digest := func() string {
		t.Helper()
		d, err := b.Arms[0].KitDigest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digest()
	if !strings.HasPrefix(before, "sha256:") || digest() != before {
		t.Fatalf("digest %q: want a stable sha256", before)
	}
	if d, _ := b.Arms[1].KitDigest(); d != "" {
		t.Errorf("an arm without a kit has digest %q, want none (its fingerprint stays what it was)", d)
	}
	skill := filepath.Join(dir, "skills/lint/SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: lint\n---\nRun the linter twice.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	afterSkill := digest()
	if afterSkill == before {
		t.Error("editing the skill's SKILL.md left the kit digest unchanged")
	}
	if err := os.WriteFile(filepath.Join(dir, "guide.md"), []byte("Be thorough.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if digest() == afterSkill {
		t.Error("editing a placed file left the kit digest unchanged")
	}
	f := Fingerprint{Kits: map[string]string{"a": afterSkill}}
	changes := Fingerprint{Kits: map[string]string{"a": digest()}}.Changes(f)
	if len(changes) != 1 || !strings.Contains(changes[0], "kit (MCP servers, skills, files, settings) of arm a: changed") {
		t.Errorf("changes = %q, want the arm's kit named as changed", changes)
	}
}

// An npm server's version is its package's: a new version whose entry
// file is byte for byte the old one still makes a different kit.
func TestTheKitDigestFollowsAnNPMServersPackage(t *testing.T) {
	dir := kitDir(t)
	pkg := filepath.Join(dir, "node_modules", "@acme", "server")
	for name, text := range map[string]string{"package.json": `{"name":"@acme/server","version":"1.0.0"}`, "bin/cli.js": "#!/usr/bin/env node\n"} {
		p := filepath.Join(pkg, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@acme/server/bin/cli.js", filepath.Join(bin, "acme-server")); err != nil {
		t.Fatal(err)
	}
	b, err := parseKitBench(t, dir, "  - {id: a, agent: stand-in, mcp_servers: {acme: {command: node_modules/.bin/acme-server}}}\n")
	if err != nil {
		t.Fatal(err)
	}
	before, err := b.Arms[0].KitDigest()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@acme/server","version":"1.0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.Arms[0].KitDigest(); after == before {
		t.Error("a new version of the server's package left the kit digest unchanged")
	}
}

// TestOpencodeAndQwenArmsAskOnlyForWhatTheirCLIsHonour stops an arm from
// naming what opencode or Qwen Code cannot do headless — a turn limit and
// a model-less arm for opencode, an allow-list for either — or placing a
// file over the plugin lock wfb writes for opencode, from failing every
// cell instead of the bench; and an arm they can run from being refused.
func TestOpencodeAndQwenArmsAskOnlyForWhatTheirCLIsHonour(t *testing.T) {
	dir := kitDir(t)
	b, err := parseKitBench(t, dir, `  - {id: o, agent: opencode, model: gpt-4.1, skills: [skills/lint], settings: {permission: {bash: deny}}}
  - {id: q, agent: qwen, model: gpt-4.1-mini, max_turns: 4, skills: [skills/lint], settings: {general: {outputStyle: Concise}}}
`)
	if err != nil {
		t.Fatal(err)
	}
	if b.Arms[0].Agent != AgentOpencode || b.Arms[1].Agent != AgentQwen || b.Arms[1].MaxTurns != 4 {
		t.Errorf("arms %+v", b.Arms)
	}
	_, err = parseKitBench(t, dir, `  - {id: o, agent: opencode, max_turns: 3, allowed_tools: [write]}
  - {id: q, agent: qwen, allowed_tools: [write_file]}
  - {id: f, agent: opencode, model: m, files: [{from: guide.md, to: home/.config/opencode/package-lock.json}]}
  - {id: x, agent: open-code}
`)
	var be *Error
	if !errors.As(err, &be) {
		t.Fatalf("Parse = %v, want a *Error", err)
	}
	got := be.Error()
	for _, want := range []string{
		`arms[0].max_turns: opencode run has no turn limit`,
		`arms[0].allowed_tools: opencode's permission rules decide which tools run`,
		`arms[0].model: opencode needs a model`,
		`arms[1].allowed_tools: qwen's approval mode decides which tools run`,
		`arms[2].files: home/.config/opencode/package-lock.json would cover home/.config/opencode/package-lock.json: opencode's plugin lock`,
		`arms[3].agent: unknown agent "open-code" (want stand-in, claude, codex, gemini, opencode or qwen)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the problems do not say %q; they are:\n%s", want, got)
		}
	}
}
