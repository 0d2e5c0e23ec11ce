package provider

import "slices"

// Match restricts a reply to the requests it answers. A reply without one
// answers any model request; with one, only a request that fits every
// field set. A request takes the first reply, in script order, that fits
// it and has not been served yet — so a script whose replies have no Match
// is served strictly in order — else the default.
//
// A recorded script (wfb mock record) sets Turn (and Model) on every
// reply, so that a replay answers each request of the agent with the reply
// recorded for its place in the conversation, whatever side requests the
// agent interleaves.
type Match struct {
	// Model, when set, is the request's "model".
	Model string `json:"model,omitempty"`
	// Turn, when set, is how many assistant turns the request's
	// conversation already holds: 0 for the first request of a session, 1
	// after one reply, and so on. Messages and Chat Completions APIs: the
	// messages with role "assistant" (Gemini: contents of role "model").
	// Responses API: the runs of consecutive model output items (assistant
	// messages, function and custom tool calls, reasoning) in "input", one
	// run per earlier response.
	Turn *int `json:"turn,omitempty"`
	// Offers, when set, is a tool the request offers the model, named as
	// Claude Code names it (an MCP tool mcp__SERVER__TOOL, whatever the
	// agent's own spelling): a model calls only what it is offered, so an
	// arm given a tool and one without can share a script.
	Offers string `json:"offers,omitempty"`
}

// fits says whether a request with the given model and turn, offering the
// tools offers says it offers, fits m.
func (m *Match) fits(model string, turn int, offers func(string) bool) bool {
	if m == nil {
		return true
	}
	return (m.Model == "" || m.Model == model) && (m.Turn == nil || *m.Turn == turn) &&
		(m.Offers == "" || offers(m.Offers))
}

// requestOffers reports whether a request offers the tool named (see
// Match.Offers), in each API's own shape: Messages' tools[].name,
// Responses' tools[].name and an MCP server's tools inside its
// "namespace" tool, Gemini's tools[].functionDeclarations[].name, Chat
// Completions' tools[].function.name (an MCP tool under any name of
// chatMCPNames).
func requestOffers(body map[string]any, api, name string) bool {
	server, tool, isMCP := splitMCPName(name)
	if api == apiChat {
		want := []string{name}
		if isMCP {
			want = chatMCPNames(server, tool)
		}
		for _, n := range chatFunctionNames(body) {
			if slices.Contains(want, n) {
				return true
			}
		}
		return false
	}
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		obj, _ := t.(map[string]any)
		switch api {
		case apiMessages:
			if obj["name"] == name {
				return true
			}
		case apiResponses:
			if obj["name"] == name {
				return true
			}
			if isMCP && obj["type"] == "namespace" && obj["name"] == "mcp__"+server && namedIn(obj["tools"], "name", codexToolName(tool)) {
				return true
			}
		case apiGemini:
			want := name
			if isMCP {
				want = "mcp_" + server + "_" + tool
			}
			if namedIn(obj["functionDeclarations"], "name", want) {
				return true
			}
		}
	}
	return false
}

// namedIn reports whether list, a JSON array of objects, holds one whose
// key is name.
func namedIn(list any, key, name string) bool {
	items, _ := list.([]any)
	for _, it := range items {
		if obj, _ := it.(map[string]any); obj[key] == name {
			return true
		}
	}
	return false
}

// requestTurn counts the assistant turns a request's conversation holds
// (see Match.Turn).
func requestTurn(body map[string]any, api string) int {
	switch api {
	case apiMessages, apiChat, apiGemini:
		// Messages' and Chat Completions' assistant turns; Gemini's
		// contents of role "model".
		list, role := "messages", "assistant"
		if api == apiGemini {
			list, role = "contents", "model"
		}
		n := 0
		msgs, _ := body[list].([]any)
		for _, m := range msgs {
			if obj, _ := m.(map[string]any); obj["role"] == role {
				n++
			}
		}
		return n
	}
	input, _ := body["input"].([]any)
	n, inRun := 0, false
	for _, it := range input {
		obj, _ := it.(map[string]any)
		out := modelOutputItem(obj)
		if out && !inRun {
			n++
		}
		inRun = out
	}
	return n
}

// modelOutputItem says whether a Responses input item is one the model
// produced.
func modelOutputItem(item map[string]any) bool {
	switch item["type"] {
	case "function_call", "custom_tool_call", "reasoning", "local_shell_call", "web_search_call":
		return true
	case "message", nil:
		return item["role"] == "assistant"
	}
	return false
}
