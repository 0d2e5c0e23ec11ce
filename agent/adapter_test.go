package agent

import (
	"strings"
	"testing"
)

// TestAnUnknownAgentIsNamedWithTheOnesThereAre stops a misspelt agent from
// failing without saying which agents there are.
func TestAnUnknownAgentIsNamedWithTheOnesThereAre(t *testing.T) {
	_, err := For("claud")
	if err == nil || !strings.Contains(err.Error(), `unknown agent "claud" (want claude, codex, gemini, opencode, qwen or stand-in)`) {
		t.Errorf("err %v, want one naming every agent", err)
	}
}

// TestEachAgentIsMeteredAtTheURLItWouldCall stops the meter from taking the
// wrong variable as an agent's provider (its requests would bypass it), or
// from metering an agent that would call none, which then refuses to run.
func TestEachAgentIsMeteredAtTheURLItWouldCall(t *testing.T) {
	cell := map[string]string{"ANTHROPIC_BASE_URL": "http://cell"}
	own := map[string]string{"ANTHROPIC_BASE_URL": "http://cell", "OPENAI_BASE_URL": "http://openai", "GOOGLE_GEMINI_BASE_URL": "http://google"}
	for _, c := range []struct {
		agent    string
		env      map[string]string
		key, url string
	}{
		{Claude, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{Claude, nil, "ANTHROPIC_BASE_URL", AnthropicAPI},
		{StandIn, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{StandIn, nil, "ANTHROPIC_BASE_URL", ""},
		{Codex, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{Codex, own, "OPENAI_BASE_URL", "http://openai"},
		{Codex, nil, "ANTHROPIC_BASE_URL", ""},
		{Gemini, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{Gemini, own, "GOOGLE_GEMINI_BASE_URL", "http://google"},
		{Gemini, nil, "ANTHROPIC_BASE_URL", ""},
		{Opencode, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{Opencode, own, "OPENAI_BASE_URL", "http://openai"},
		{Opencode, nil, "ANTHROPIC_BASE_URL", ""},
		{Qwen, cell, "ANTHROPIC_BASE_URL", "http://cell"},
		{Qwen, own, "OPENAI_BASE_URL", "http://openai"},
		{Qwen, nil, "ANTHROPIC_BASE_URL", ""},
	} {
		ad, err := For(c.agent)
		if err != nil {
			t.Fatal(err)
		}
		if key, url := ad.Upstream(c.env); key != c.key || url != c.url {
			t.Errorf("%s with %v: %s=%q, want %s=%q", c.agent, c.env, key, url, c.key, c.url)
		}
	}
}

// TestTheVersionIsAskedOfEveryRealCLI stops a real CLI's version from going
// unrecorded, and the stand-in (whose version is wfb's) from being asked.
func TestTheVersionIsAskedOfEveryRealCLI(t *testing.T) {
	for _, name := range Names() {
		ad, _ := For(name)
		p, asks := ad.Version()
		if asks != (name != StandIn) || (asks && strings.Join(p.Args, " ") != "--version") {
			t.Errorf("%s: asks %v with %v", name, asks, p.Args)
		}
	}
	if v := VersionProbe.Parse([]byte("2.1.332 (Claude Code)\n")); v != "2.1.332" {
		t.Errorf("parsed %q from Claude Code's answer", v)
	}
	if v := VersionProbe.Parse([]byte("codex-cli 0.171.0-alpha.2\n")); v != "0.171.0-alpha.2" {
		t.Errorf("parsed %q from Codex's answer", v)
	}
	// opencode and Qwen Code print the bare version.
	if v := VersionProbe.Parse([]byte("1.18.33\n")); v != "1.18.33" {
		t.Errorf("parsed %q from opencode's answer", v)
	}
}
