package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/mock/provider"
)

// TestMockAgentPassesArgsVerbatimAndKeepsTheAgentsExitCode stops `wfb mock
// agent` from parsing the agent's flags itself (cobra would refuse
// Claude Code's -p PROMPT forms or eat --help) or flattening the agent's exit
// code: the runner tells a failed session (1) from a bad invocation (2) by
// it, and Main must not print a second error line after the agent's own.
func TestMockAgentPassesArgsVerbatimAndKeepsTheAgentsExitCode(t *testing.T) {
	p, err := provider.Start(&provider.Script{
		Replies: []provider.Reply{{Text: "reviewed", Usage: provider.FullUsage(2000, 300, 7000, 1000)}},
		Default: &provider.Reply{Status: 529},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	env := map[string]string{"ANTHROPIC_BASE_URL": p.URL(), "ANTHROPIC_API_KEY": "offline"}

	// First request: the scripted success, prompt from stdin.
	s, out, errOut := testStreams("review the change", env)
	if code := run(t.Context(), []string{"mock", "agent", "-p", "--output-format", "json"}, s); code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, errOut)
	}
	var res struct {
		Subtype      string         `json:"subtype"`
		IsError      bool           `json:"is_error"`
		Result       string         `json:"result"`
		TotalCostUSD float64        `json:"total_cost_usd"`
		Usage        map[string]any `json:"usage"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not one result object: %v\n%s", err, out)
	}
	if res.Subtype != "success" || res.IsError || res.Result != "reviewed" || res.TotalCostUSD != 0.42 {
		t.Errorf("result %+v: want success, not is_error, result \"reviewed\", cost 0.42", res)
	}
	reqs := p.MessageRequests()
	if len(reqs) != 1 {
		t.Fatalf("provider saw %d requests, want 1", len(reqs))
	}
	msgs, _ := reqs[0].Body["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "review the change" {
		t.Errorf("provider saw messages %v, want the stdin prompt", reqs[0].Body["messages"])
	}

	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantOut    string // substring of stdout
		wantErrOut string // substring of stderr
	}{
		{"provider failure is a failed session", env, []string{"-p", "--output-format", "json", "go"}, 1, `"api_error_status":529`, "API Error: 529"},
		{"unknown flag is bad input", env, []string{"-p", "--frobnicate", "go"}, 2, "", "unknown flag: --frobnicate"},
		{"missing ANTHROPIC_BASE_URL is bad input", map[string]string{}, []string{"-p", "go"}, 2, "", "ANTHROPIC_BASE_URL is not set"},
		{"help is the agent's", env, []string{"--help"}, 0, "--output-format", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, out, errOut := testStreams("", tt.env)
			code := run(t.Context(), append([]string{"mock", "agent"}, tt.args...), s)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("stdout %q does not contain %q", out, tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErrOut) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErrOut)
			}
			if strings.Contains(errOut.String(), "wfb: ") {
				t.Errorf("Main printed its own error line after the agent's:\n%s", errOut)
			}
		})
	}
}

// TestMockGroupsServeAndAgent stops any stand-in from going missing from
// the command tree.
func TestMockGroupsServeAndAgent(t *testing.T) {
	var got []string
	for _, c := range newMockCmd(&Streams{}).Commands() {
		got = append(got, c.Name())
	}
	if diff := cmp.Diff([]string{"agent", "mcp-server", "record", "serve"}, got); diff != "" {
		t.Errorf("wfb mock subcommands (-want +got):\n%s", diff)
	}
}
