package conformance

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/sandbox"
)

// TestABenchOfEveryAgentUnderBwrapRecordsEveryRowHonestly is issue 28's
// done-when: one bench file with an arm for each of the five real agents
// (Claude Code, Codex, Gemini CLI, opencode, Qwen Code), run as `wfb run`
// runs it — under bwrap, metered — against the mock, and every row honest.
// Where the provider tells the truth each row is ok, names its agent and
// version, holds what the mock served in its agent's meaning (the wire's
// witness agreeing) and a cost; where it lies (a negative cached count,
// which opencode clamps to 0 and the others pass or choke on) each row is
// a session-error the wire refused, with no token column and no cost.
func TestABenchOfEveryAgentUnderBwrapRecordsEveryRowHonestly(t *testing.T) {
	var arms []string
	byArm := map[string]cli{}
	for _, c := range clis {
		c := require(t, c)
		arms = append(arms, fmt.Sprintf("  - {id: %s, agent: %s, agent_bin: %s, model: %s}", c.name, c.agent, c.bin, c.model))
		byArm[c.name] = c
	}
	if len(byArm) != 5 {
		t.Fatalf("%d agents, want the five", len(byArm))
	}
	dir, err := os.MkdirTemp("", "wfb-conformance-five-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kernelBackend(t, sandbox.Bwrap, dir)
	honest := provider.Reply{Text: "hello from one script", Usage: provider.FullUsage(1200, 30, 4000, 500)}
	rows := runBenchFiles(t, dir, map[string]string{
		"ws/source.ts": "export const answer = 42;\n",
		"honest.yaml":  "default:\n  text: hello from one script\n  usage: {input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: 4000, cache_creation_input_tokens: 500}\n",
		"lies.yaml":    "default:\n  text: hello from a liar\n  usage: {input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: -5, cache_creation_input_tokens: 500}\n",
		"bench.yaml": "runs: 1\nworkers: 2\ntimeout: 3m\nsandbox: bwrap\nprovider: {mock: honest.yaml}\ntasks:\n" +
			"  - {id: honest, workspace: ws, prompt: Say hello.}\n" +
			"  - {id: lying, workspace: ws, prompt: Say hello., provider: {mock: lies.yaml}}\n" +
			"arms:\n" + strings.Join(arms, "\n") + "\n",
	})
	if len(rows) != 2*len(byArm) {
		t.Fatalf("%d rows, want %d", len(rows), 2*len(byArm))
	}
	for _, row := range rows {
		c, ok := byArm[row.Arm]
		if !ok {
			t.Fatalf("a row of arm %q", row.Arm)
		}
		t.Run(row.Task+"/"+c.name, func(t *testing.T) {
			if row.Sandbox != sandbox.Bwrap || row.Agent != c.agent || row.AgentVersion != c.version || row.Model != c.model {
				t.Errorf("sandbox %q agent %q version %q model %q, want bwrap %q %q %q", row.Sandbox, row.Agent, row.AgentVersion, row.Model, c.agent, c.version, c.model)
			}
			if row.Task == "lying" {
				if row.OK || row.ErrorKind != wfb.KindSessionError || !strings.Contains(row.ErrorDetail, "usage refused by the wire") || !strings.Contains(row.UsageCheck, "wire -5") {
					t.Fatalf("ok %v kind %q check %q: %s; want the wire's refusal of the -5", row.OK, row.ErrorKind, row.UsageCheck, row.ErrorDetail)
				}
				if row.InputTokens != nil || row.OutputTokens != nil || row.CacheReadInputTokens != nil || row.MeteredInputTokens != nil || row.CostUSD != nil {
					t.Errorf("a refused measurement was recorded: in %v out %v cache %v metered %v cost %v", row.InputTokens, row.OutputTokens, row.CacheReadInputTokens, row.MeteredInputTokens, row.CostUSD)
				}
				return
			}
			requireOK(t, row)
			if diff := cmp.Diff(wantTokens(c, served(t, honest), 0), rowTokens(row)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			if want := wantMetered(c, served(t, honest)); !sameCounts(want, meteredCols(row)) {
				t.Errorf("metered %s, want %s", show(meteredCols(row)), show(want))
			}
			if row.UsageSource != wfb.UsageMetered || row.UsageCheck != "agree" {
				t.Errorf("usage source %q check %q, want metered, agree", row.UsageSource, row.UsageCheck)
			}
			if row.CostUSD == nil || row.MeteredCostUSD == nil {
				t.Errorf("cost %s, wire's %s: a priced model's cost was not recorded (%s)", showCost(row.CostUSD), showCost(row.MeteredCostUSD), row.ErrorDetail)
			}
		})
	}
}

// TestTheWireRefusesAPromptCountAChatCLIMadeZero stops the zero a Chat
// Completions CLI makes of a prompt count the provider left out — opencode
// and Qwen Code both count a missing or null prompt_tokens as 0 — from
// becoming a measured input of 0: the agent's own parse refuses a
// session's input of 0 (no model request has one), and the wire names the
// absent field.
func TestTheWireRefusesAPromptCountAChatCLIMadeZero(t *testing.T) {
	for _, c := range clis {
		if !chatCLI(c) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			u := provider.FullUsage(1200, 30, 0, 0)
			delete(u, "input_tokens") // with no prompt, the mock's cache fields go too
			delete(u, "cache_read_input_tokens")
			delete(u, "cache_creation_input_tokens")
			r := newRig(t, &provider.Script{Replies: []provider.Reply{{Text: "hello", Usage: u}}})
			row := r.run(t, r.cell(c, metered(t, r)))
			if row.OK || row.ErrorKind != wfb.KindSessionError || !strings.Contains(row.ErrorDetail, "usage refused") {
				t.Fatalf("ok %v kind %q: %s", row.OK, row.ErrorKind, row.ErrorDetail)
			}
			if !strings.Contains(row.UsageCheck, "wire absent") {
				t.Errorf("check %q does not name the absent prompt count", row.UsageCheck)
			}
			if row.InputTokens != nil || row.OutputTokens != nil || row.MeteredInputTokens != nil || row.CostUSD != nil {
				t.Errorf("a refused measurement was recorded: in %v out %v metered %v cost %v", row.InputTokens, row.OutputTokens, row.MeteredInputTokens, row.CostUSD)
			}
			t.Logf("%s: %s | %s", c.name, row.ErrorDetail, row.UsageCheck)
		})
	}
}
