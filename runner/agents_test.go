package runner

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
)

// fakeIsolation stands in for a wfb sandbox where only its artifact
// directory matters.
type fakeIsolation struct{ artifacts string }

func (f fakeIsolation) Backend() string           { return "host-unsafe" }
func (f fakeIsolation) RequirePIDNamespace() bool { return false }
func (f fakeIsolation) ArtifactDir() string       { return f.artifacts }
func (f fakeIsolation) Launch(context.Context) (*sandbox.Launch, error) {
	return &sandbox.Launch{}, nil
}

// TestAnAgentIsGrantedWhereItMayWriteAndGivenItsKit stops an adapter from
// being told less than the session is: a sandboxed session's artifact
// directory and a review artifact's directory granted (each once), and
// the kit's servers with their secrets still secrets.
func TestAnAgentIsGrantedWhereItMayWriteAndGivenItsKit(t *testing.T) {
	kit := bench.Kit{
		MCPServers: []bench.MCPServer{{Name: "code", Command: "/opt/code", Args: []string{"--stdio"},
			Env: []bench.EnvVar{{Name: "MODE", Value: "fast", Literal: true}, {Name: "TOKEN", FromEnv: "T", Value: "s3cret"}}}},
		Skills:   []string{"/k/skills/review"},
		Settings: map[string]any{"a": 1},
	}
	for _, c := range []struct {
		name  string
		spec  SessionSpec
		grant []string
	}{
		{"sandboxed review", SessionSpec{Sandbox: fakeIsolation{"/sb/artifacts"}, Review: &ReviewSpec{ArtifactPath: "/art/review-output.json"}}, []string{"/sb/artifacts", "/art"}},
		{"review artifact in the artifact directory", SessionSpec{Sandbox: fakeIsolation{"/sb/artifacts"}, Review: &ReviewSpec{ArtifactPath: "/sb/artifacts/review-output.json"}}, []string{"/sb/artifacts"}},
		{"unsandboxed review", SessionSpec{Review: &ReviewSpec{ArtifactPath: "/art/review-output.json"}}, []string{"/art"}},
		{"unsandboxed", SessionSpec{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.SessionKey = SessionKey{AgentBin: "/opt/agent", AgentVersion: "1.2.3", Model: "m", Kit: kit}
			c.spec.Env = map[string]string{"HOME": "/h"}
			want := agent.Session{
				Bin: "/opt/agent", Version: "1.2.3", Model: "m", Env: c.spec.Env,
				Sandboxed: c.spec.Sandbox != nil, Grant: c.grant,
				Kit: agent.Kit{
					MCPServers: []agent.MCPServer{{Name: "code", Command: "/opt/code", Args: []string{"--stdio"},
						Env: []agent.ServerVar{{Name: "MODE", Value: "fast", Literal: true}, {Name: "TOKEN", Value: "s3cret"}}}},
					Skills: []string{"/k/skills/review"}, Settings: map[string]any{"a": 1},
				},
			}
			if diff := cmp.Diff(want, agentSession(c.spec)); diff != "" {
				t.Errorf("the adapter's session (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryAgentOfABenchHasAnAdapter stops an agent a bench accepts from
// having no adapter to run it.
func TestEveryAgentOfABenchHasAnAdapter(t *testing.T) {
	for _, name := range bench.Agents {
		if _, err := agent.For(name); err != nil {
			t.Errorf("agent %s: %v", name, err)
		}
	}
	if len(bench.Agents) != len(agent.Names()) {
		t.Errorf("a bench names %v, the adapters are %v", bench.Agents, agent.Names())
	}
}
