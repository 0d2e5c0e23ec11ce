package agent

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// codexOutcome runs the Codex interpretation on stdout as if a process had
// printed it and exited with code.
func codexOutcome(model, stdout string, code int64) store.Result {
	return outcomeOf(&codexOutput{model: model}, "codex", stdout, code)
}

// outcomeOf feeds stdout to an adapter's output line by line and
// interprets it as if the process had exited with code.
func outcomeOf(out Output, bin, stdout string, code int64) store.Result {
	for _, l := range strings.Split(stdout, "\n") {
		if l != "" {
			out.Line([]byte(l), false)
		}
	}
	row := store.Result{}
	exited(&row, out, code)
	return row
}

const codexStart = `{"type":"thread.started","thread_id":"th-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}
`

func codexDone(usage string) string {
	return codexStart + `{"type":"turn.completed","usage":` + usage + `}`
}

// TestCodexUsageIsNormalisedWithoutDoubleCounting stops OpenAI's cached
// tokens (a SUBSET of input) from being added to input a second time, an
// unreported cache write from becoming a measured zero, and the reported
// figures from being lost.
func TestCodexUsageIsNormalisedWithoutDoubleCounting(t *testing.T) {
	row := codexOutcome("gpt-5-codex", codexDone(`{"input_tokens":400,"cached_input_tokens":300,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":5}`), 0)
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	got := tokensOf(row)
	want := rowTokens{wfb.SemanticsOpenAI, ptr(int64(100)), ptr(int64(300)), nil, ptr(int64(20)),
		ptr(int64(400)), ptr(int64(300)), ptr(int64(5)), ptr(int64(0)), "th-1", "derived"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	// gpt-5-codex: $1.25 input, $0.125 cached, $10 output per million.
	wantCost := (100*1.25 + 300*0.125 + 20*10.0) / 1e6
	if row.CostUSD == nil || math.Abs(*row.CostUSD-wantCost) > 1e-12 {
		t.Errorf("cost %v, want %v", row.CostUSD, wantCost)
	}
}

// rowTokens are a row's token columns and what goes with them.
type rowTokens struct {
	Semantics                                string
	Input, CacheRead, CacheCreation, Output  *int64
	ReportedInput, ReportedCached, Reasoning *int64
	Retries                                  *int64
	Session, CostSource                      string
}

func tokensOf(row store.Result) rowTokens {
	return rowTokens{row.UsageSemantics, row.InputTokens, row.CacheReadInputTokens, row.CacheCreationInputTokens, row.OutputTokens,
		row.ReportedInputTokens, row.ReportedCachedInputTokens, row.ReasoningOutputTokens, row.APIRetries, row.SessionID, row.CostSource}
}

// TestCodexUnknownModelHasNoCostNotAGuess stops a derived cost from being
// made up for a model the price table does not list.
func TestCodexUnknownModelHasNoCostNotAGuess(t *testing.T) {
	row := codexOutcome("gpt-5-codex-preview-xyz", codexDone(`{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2,"reasoning_output_tokens":0}`), 0)
	if !row.OK || row.InputTokens == nil {
		t.Fatalf("an unknown price must not fail the session or drop tokens: %s %s", row.ErrorKind, row.ErrorDetail)
	}
	if row.CostUSD != nil || row.CostSource != "" {
		t.Errorf("cost %v (%q), want NULL", row.CostUSD, row.CostSource)
	}
	if !strings.Contains(row.ErrorDetail, `no price for model "gpt-5-codex-preview-xyz"`) {
		t.Errorf("detail %q does not say why cost is NULL", row.ErrorDetail)
	}
}

// TestCodexRefusesWhatIsNotAMeasurement stops the ways Codex's output can
// mislead from becoming a passing row: zeros printed for a missing usage
// block, a turn that failed, more or fewer than one terminal event.
func TestCodexRefusesWhatIsNotAMeasurement(t *testing.T) {
	cases := []struct {
		name, stdout string
		code         int64
		kind, reason string
	}{
		{"zeros for missing usage", codexDone(`{"input_tokens":0,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0}`), 0, wfb.KindSessionError, "the provider reported no usage"},
		{"no usage object", codexStart + `{"type":"turn.completed"}`, 0, wfb.KindSessionError, "turn.completed has no usage"},
		{"missing field", codexDone(`{"input_tokens":5,"output_tokens":1,"reasoning_output_tokens":0}`), 0, wfb.KindSessionError, "usage.cached_input_tokens is missing"},
		{"cached beyond input", codexDone(`{"input_tokens":5,"cached_input_tokens":6,"output_tokens":1,"reasoning_output_tokens":0}`), 0, wfb.KindSessionError, "cached_input_tokens 6 exceeds input_tokens 5"},
		{"reasoning beyond output", codexDone(`{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":2}`), 0, wfb.KindSessionError, "reasoning_output_tokens 2 exceeds output_tokens 1"},
		{"float", codexDone(`{"input_tokens":5.5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}`), 0, wfb.KindSessionError, "not a whole number (5.5)"},
		{"no terminal event", codexStart, 0, wfb.KindSessionError, "no turn.completed or turn.failed"},
		{"two terminal events", codexDone(`{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}`) + "\n" + `{"type":"turn.failed","error":{"message":"x"}}`, 1, wfb.KindSessionError, "2 terminal events"},
		{"not json", "Reading additional input\n" + codexDone(`{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}`), 0, wfb.KindSessionError, "not JSON"},
		{"529 given up on", codexStart + `{"type":"error","message":"Reconnecting... 1/1 (unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:1/v1/responses)"}
{"type":"turn.failed","error":{"message":"unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:1/v1/responses"}}`, 1, wfb.KindProviderError, "unexpected status 529"},
		{"400 error body", codexStart + `{"type":"turn.failed","error":{"message":"{\"error\":{\"code\":null,\"message\":\"Invalid request\",\"param\":null,\"type\":\"invalid_request_error\"}}"}}`, 1, wfb.KindProviderError, "Invalid request"},
		{"agent failure", codexStart + `{"type":"turn.failed","error":{"message":"sandbox setup failed"}}`, 1, wfb.KindSessionError, "sandbox setup failed"},
		{"nonzero exit after success", codexDone(`{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}`), 1, wfb.KindSessionError, "exit code 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := codexOutcome("gpt-5-codex", c.stdout, c.code)
			if row.OK {
				t.Fatalf("ok = true")
			}
			if row.ErrorKind != c.kind {
				t.Errorf("error kind %q, want %q (%s)", row.ErrorKind, c.kind, row.ErrorDetail)
			}
			if !strings.Contains(row.ErrorDetail, c.reason) {
				t.Errorf("detail %q does not name %q", row.ErrorDetail, c.reason)
			}
			if strings.Contains(c.reason, "usage") || strings.Contains(c.reason, "exceeds") || strings.Contains(c.reason, "whole number") {
				if row.InputTokens != nil || row.CacheReadInputTokens != nil || row.OutputTokens != nil || row.CostUSD != nil || row.UsageSemantics != "" {
					t.Errorf("a refused usage still recorded measurements")
				}
			}
		})
	}
}

// TestCodexRetriesAreCountedAndWarningsKept stops provider retries from
// vanishing (a flaky provider looks healthy otherwise) and Codex's warning
// items from failing a session.
func TestCodexRetriesAreCountedAndWarningsKept(t *testing.T) {
	stdout := `{"type":"thread.started","thread_id":"th-2"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`m`" + ` not found."}}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/2 (unexpected status 529)"}
{"type":"error","message":"Reconnecting... 2/2 (unexpected status 529)"}
` + `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}`
	row := codexOutcome("gpt-5", stdout, 0)
	if !row.OK {
		t.Fatalf("not ok: %s", row.ErrorDetail)
	}
	if row.APIRetries == nil || *row.APIRetries != 2 {
		t.Errorf("api retries %v, want 2", row.APIRetries)
	}
	if !strings.Contains(row.ErrorDetail, "the agent warned: Model metadata") {
		t.Errorf("warning not kept: %q", row.ErrorDetail)
	}
}

// TestCodexCommandIsHeadlessBoundedAndPointedAtTheProvider stops a Codex
// command that waits on stdin, talks to OpenAI instead of the configured
// provider, retries without bound, or reads the user's own config.
func TestCodexCommandIsHeadlessBoundedAndPointedAtTheProvider(t *testing.T) {
	const prompt = "-p looks like a flag"
	spec := Session{
		Bin: "/opt/codex", Model: "gpt-5-codex",
		Env: map[string]string{
			"HOME": "/sb/home", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/", "ANTHROPIC_API_KEY": "sk-cell",
			"CLAUDE_CODE_MAX_RETRIES": "1", "API_TIMEOUT_MS": "3000",
		},
	}
	ad := &codexAdapter{}
	cmd, err := ad.Command(spec, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if !cmd.NoStdin || cmd.Stdin != "" {
		t.Errorf("stdin: noStdin %v, stdin %q; codex waits on an open pipe", cmd.NoStdin, cmd.Stdin)
	}
	want := []string{"/opt/codex", "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config", "--strict-config", "--color", "never",
		"-m", "gpt-5-codex", "-s", "workspace-write",
		"-c", `model_provider="wfb"`,
		"-c", `model_providers.wfb={name="wfb", base_url="http://127.0.0.1:9/v1", env_key="OPENAI_API_KEY", wire_api="responses", request_max_retries=1, stream_max_retries=1, stream_idle_timeout_ms=3000}`,
		"-c", `approval_policy="never"`, "-c", "check_for_update_on_startup=false", "-c", "analytics.enabled=false",
		"-c", "feedback.enabled=false", "-c", `history.persistence="none"`, "-c", `web_search="disabled"`,
		"--", "-p looks like a flag"}
	if diff := cmp.Diff(want, cmd.Argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"CODEX_HOME": "/sb/home", "OPENAI_API_KEY": "sk-cell"}, cmd.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	// An arm pointed at OpenAI itself keeps its own URL and key.
	spec.Env = map[string]string{"HOME": "/sb/home", "OPENAI_BASE_URL": "https://api.openai.com/v1", "OPENAI_API_KEY": "sk-real", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
	cmd, err = (&codexAdapter{}).Command(spec, "p")
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(cmd.Argv, func(a string) bool { return strings.HasPrefix(a, "model_providers.wfb=") }); i < 0 || !strings.Contains(cmd.Argv[i], `base_url="https://api.openai.com/v1"`) {
		t.Errorf("provider not pointed at OPENAI_BASE_URL: %v", cmd.Argv)
	}
	if _, ok := cmd.Env["OPENAI_API_KEY"]; ok {
		t.Errorf("the arm's OPENAI_API_KEY was overridden: %v", cmd.Env)
	}
}

// TestCodexRefusesArmSettingsItCannotHonour stops an arm's max turns or
// tool allow-list from being silently ignored for Codex.
func TestCodexRefusesArmSettingsItCannotHonour(t *testing.T) {
	base := Session{Bin: "codex", Env: map[string]string{"HOME": "/h", "ANTHROPIC_BASE_URL": "http://x"}}
	cases := []struct {
		name   string
		adjust func(*Session)
		want   string
	}{
		{"max turns", func(s *Session) { s.MaxTurns = 3 }, "no turn limit"},
		{"allowed tools", func(s *Session) { s.AllowedTools = []string{"Write"} }, "no tool allow-list"},
		{"permission", func(s *Session) { s.Permission = "acceptEdits" }, `permission "acceptEdits"`},
		{"format", func(s *Session) { s.OutputFormat = "stream-json" }, "jsonl only"},
		{"no home", func(s *Session) { s.Env = map[string]string{"ANTHROPIC_BASE_URL": "http://x"} }, "needs HOME"},
		{"no url", func(s *Session) { s.Env = map[string]string{"HOME": "/h"} }, "needs a provider base URL"},
		{"bad retries", func(s *Session) { s.Env["CLAUDE_CODE_MAX_RETRIES"] = "lots" }, `CLAUDE_CODE_MAX_RETRIES="lots"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := base
			spec.Env = map[string]string{}
			for k, v := range base.Env {
				spec.Env[k] = v
			}
			c.adjust(&spec)
			_, err := (&codexAdapter{}).Command(spec, "p")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one naming %q", err, c.want)
			}
		})
	}
}

// TestCodexInsideAWfbSandboxLeavesIsolationToWfb stops Codex's own sandbox
// from being started inside wfb's, where it cannot start (it must create
// .git in a workspace a review makes read-only) and its failures leave no
// trace in the output; the artifact directory is still granted.
func TestCodexInsideAWfbSandboxLeavesIsolationToWfb(t *testing.T) {
	spec := Session{Bin: "codex", Sandboxed: true, Grant: []string{"/sb/artifacts"},
		Env: map[string]string{"HOME": "/h", "ANTHROPIC_BASE_URL": "http://x"}}
	cmd, err := (&codexAdapter{}).Command(spec, "p")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cmd.Argv, " ")
	for _, want := range []string{"--dangerously-bypass-approvals-and-sandbox", "--add-dir /sb/artifacts"} {
		if !strings.Contains(got, want) {
			t.Errorf("argv %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, " -s ") {
		t.Errorf("argv %q also asks for Codex's sandbox", got)
	}
	spec.Permission = "workspace-write"
	cmd, err = (&codexAdapter{}).Command(spec, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cmd.Argv, " "); !strings.Contains(got, "-s workspace-write") || strings.Contains(got, "bypass") {
		t.Errorf("an arm's own permission was not kept: %q", got)
	}
}

// BenchmarkCodexOutput measures consuming and interpreting a typical Codex
// transcript (a few hundred events, one terminal event).
func BenchmarkCodexOutput(b *testing.B) {
	var lines [][]byte
	lines = append(lines, []byte(`{"type":"thread.started","thread_id":"th-1"}`), []byte(`{"type":"turn.started"}`))
	for i := 0; i < 200; i++ {
		lines = append(lines, []byte(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \"go test ./...\"","aggregated_output":"ok  \tgithub.com/wfbench/wfb/store\t1.8s\n","exit_code":0,"status":"completed"}}`))
	}
	lines = append(lines, []byte(`{"type":"turn.completed","usage":{"input_tokens":400000,"cached_input_tokens":300000,"output_tokens":20000,"reasoning_output_tokens":5000}}`))
	code := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		out := &codexOutput{model: "gpt-5-codex"}
		for _, l := range lines {
			out.Line(l, false)
		}
		var row store.Result
		exited(&row, out, code)
		if !row.OK {
			b.Fatal(row.ErrorDetail)
		}
	}
}

// TestMalformedProviderUsageIsOneKindForEveryAgent stops one fault from
// having two kinds: fed to each parser, the provider's usage carrying a
// negative cache count, or none, is a session-error that refuses the
// usage (the test of the same name in package runner holds the same
// through the meter).
func TestMalformedProviderUsageIsOneKindForEveryAgent(t *testing.T) {
	for _, c := range []struct {
		name string
		row  store.Result
	}{
		{"claude/negative", outcome(result(`"usage":{"input_tokens":1200,"output_tokens":30,"cache_read_input_tokens":-5,"cache_creation_input_tokens":500}`), 0)},
		{"codex/negative", codexOutcome("gpt-5-codex", codexDone(`{"input_tokens":1695,"cached_input_tokens":-5,"output_tokens":30,"reasoning_output_tokens":0}`), 0)},
		{"gemini/negative", geminiOutcome(geminiDone(`{"total_tokens":1225,"input_tokens":1195,"output_tokens":30,"cached":-5,"input":1200,"models":{}}`), 0)},
		{"claude/missing", outcome(result(`"usage":{"input_tokens":1200,"output_tokens":30,"cache_creation_input_tokens":500}`), 0)},
		{"codex/missing", codexOutcome("gpt-5-codex", codexDone(`{"input_tokens":1695,"output_tokens":30,"reasoning_output_tokens":0}`), 0)},
		{"gemini/missing", geminiOutcome(geminiDone(`{"total_tokens":1225,"input_tokens":1195,"output_tokens":30,"input":1200,"models":{}}`), 0)},
		// opencode clamps a negative to 0 (its total keeps the raw sum) and
		// fills a missing usage with zeros (and no total).
		{"opencode/negative", opencodeOutcome(ocModel, ocStart+"\n"+ocStep(`{"total":1725,"input":1700,"output":30,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0)},
		{"opencode/missing", opencodeOutcome(ocModel, ocStart+"\n"+ocStep(`{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}`, "0"), 0)},
		{"qwen/negative", qwenOutcome(qwModel, qwSession(`{"input_tokens":1695,"output_tokens":30,"cache_read_input_tokens":-5,"total_tokens":1725}`), 0)},
		{"qwen/missing", qwenOutcome(qwModel, qwSession(`{"input_tokens":1695,"output_tokens":30,"total_tokens":1725}`), 0)},
	} {
		t.Run("parsed/"+c.name, func(t *testing.T) {
			if c.row.OK || c.row.ErrorKind != wfb.KindSessionError || !strings.Contains(c.row.ErrorDetail, "usage refused") || c.row.InputTokens != nil {
				t.Errorf("ok %v kind %q input %v: %s; want a session-error refusing the usage", c.row.OK, c.row.ErrorKind, c.row.InputTokens, c.row.ErrorDetail)
			}
		})
	}
}
