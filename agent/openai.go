package agent

import (
	"fmt"
	"strings"
)

// What the agents that speak an OpenAI API (Codex the Responses API;
// opencode and Qwen Code Chat Completions) share: where their provider is
// and which key they use. The base URL follows the OpenAI convention — it
// ends in /v1, e.g. https://api.openai.com/v1, and the client appends
// /responses or /chat/completions — and is the arm's OPENAI_BASE_URL when
// set, else the cell's provider, ANTHROPIC_BASE_URL + "/v1" (wfb's mock
// serves every API on one base URL, and the meter proxies them all). The
// key is OPENAI_API_KEY: the arm's, else, with the cell's base URL, the
// cell's key passed on under that name.

// openAIUpstream is an OpenAI agent's Adapter.Upstream: OPENAI_BASE_URL
// when the arm sets it, else the cell's ANTHROPIC_BASE_URL, from which
// openAIEndpoint builds the base URL.
func openAIUpstream(env map[string]string) (string, string) {
	if url := env["OPENAI_BASE_URL"]; url != "" {
		return "OPENAI_BASE_URL", url
	}
	return "ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"]
}

// openAIEndpoint is the base URL the session's agent (named for messages)
// calls, with what its environment needs for the key added to add.
func openAIEndpoint(agent string, env, add map[string]string) (string, error) {
	if url := env["OPENAI_BASE_URL"]; url != "" {
		return url, nil
	}
	base := strings.TrimSuffix(env["ANTHROPIC_BASE_URL"], "/")
	if base == "" {
		return "", fmt.Errorf("%s needs a provider base URL: OPENAI_BASE_URL or the cell's ANTHROPIC_BASE_URL", agent)
	}
	if env["OPENAI_API_KEY"] == "" {
		add["OPENAI_API_KEY"] = env["ANTHROPIC_API_KEY"]
	}
	return base + "/v1", nil
}
