package agent

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"

	"github.com/wfbench/wfb/internal/owned"
)

// An arm's kit reaches its agent in the agent's native form. The runner
// copies its files and skills into the session's private HOME (skills where
// the agent looks for them: Adapter.SkillsDir); each adapter writes its MCP
// servers and settings as its agent takes them — Claude Code (and the
// stand-in, which shares its interface) a --mcp-config file with
// --strict-mcp-config and a --settings file, Codex -c overrides of
// mcp_servers.NAME and of its settings, Gemini CLI and Qwen Code the
// mcpServers and settings of the settings file wfb writes for them,
// opencode the mcp servers and settings of the configuration wfb gives it
// in OPENCODE_CONFIG_CONTENT. A server's secret never goes into a file: its
// value joins the agent's environment under the server variable's own
// name, and the configuration refers to it (${NAME} for Claude Code,
// env_vars for Codex, $NAME for Gemini CLI and Qwen Code, {env:NAME} for
// opencode).

// kitDir is where, in the private HOME, wfb writes the configuration
// files it points an agent at.
const kitDir = ".wfb-kit"

// writeKitFile writes data to HOME/.wfb-kit/name, mode 0600, owned like
// HOME, and returns its path.
func writeKitFile(home, name string, data []byte) (string, error) {
	return writeHomeFile(home, filepath.Join(kitDir, name), data)
}

// writeHomeFile writes data to HOME/rel, a new file of mode 0600, making
// the directories on the way; what it makes is owned like HOME (the
// session uid's). A file already there is an error: wfb writes into a
// fresh private HOME and overwrites nothing.
func writeHomeFile(home, rel string, data []byte) (string, error) {
	owner, err := owned.Owner(home)
	if err != nil {
		return "", err
	}
	if err := owned.MkdirAll(home, filepath.Dir(rel), owner); err != nil {
		return "", err
	}
	path := filepath.Join(home, rel)
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
	return path, owned.Chown(path, owner)
}

// serverEnv is a server's environment as its configuration writes it: a
// literal value as it is, a secret as ref(NAME), which the agent resolves
// from its own environment.
func serverEnv(s MCPServer, ref func(string) string) map[string]any {
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
