package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// rig is one results file, one run, one workspace and one mock provider.
type rig struct {
	db        *store.DB
	dbPath    string
	runID     string
	workspace string
	tmp       string // a directory any uid can traverse
	p         *provider.Provider
}

func newRig(t *testing.T, script *provider.Script) *rig {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "wfb.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("open results: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	runID := store.NewID("run")
	if err := db.CreateRun(ctx, store.Run{ID: runID, Kind: "run", StartedAt: time.Now().UTC(), Status: wfb.RunRunning, Harness: "conformance"}); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's parents are 0700; the session runs as nobody when the
	// tests run as root.
	tmp, err := os.MkdirTemp("", "wfb-conformance-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(tmp, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := provider.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &rig{db: db, dbPath: dbPath, runID: runID, workspace: ws, tmp: tmp, p: p}
}

// cell is a cell of c against the rig's provider; adjust tweaks it.
func (r *rig) cell(c cli, adjust ...func(*runner.Cell)) runner.Cell {
	cell := runner.Cell{
		SessionKey: runner.SessionKey{
			RunID: r.runID, Task: "conformance", Arm: c.name, Agent: c.agent, AgentBin: c.bin,
			Model: c.model, Prompt: "Say hello.", Timeout: 60 * time.Second,
		},
		Workspace: r.workspace, Sandbox: "host-unsafe", BaseURL: r.p.URL(), APIKey: "wfb-conformance-key",
		ExtraEnv: map[string]string{"CLAUDE_CODE_MAX_RETRIES": "1", "API_TIMEOUT_MS": "20000"},
	}
	for _, a := range adjust {
		a(&cell)
	}
	return cell
}

// run runs the cell and returns its row as the results file has it.
func (r *rig) run(t *testing.T, cell runner.Cell) store.Result {
	t.Helper()
	row, err := runner.RunCell(context.Background(), r.db, cell)
	if err != nil {
		t.Fatalf("RunCell: %v", err)
	}
	return r.stored(t, row.AttemptID)
}

func (r *rig) stored(t *testing.T, attemptID string) store.Result {
	t.Helper()
	rows, err := r.db.Results(context.Background(), r.runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.AttemptID == attemptID {
			return row
		}
	}
	t.Fatalf("attempt %s is not in the results file", attemptID)
	return store.Result{}
}

func requireOK(t *testing.T, row store.Result) {
	t.Helper()
	if !row.OK {
		t.Fatalf("session not ok: %s: %s\nstdout: %s\nstderr: %s", row.ErrorKind, row.ErrorDetail, clip(row.StdoutTail), clip(row.StderrTail))
	}
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// served is the usage the mock served over some replies, summed per
// Anthropic field; the script's usage must be whole numbers.
func served(t *testing.T, replies ...provider.Reply) [4]int64 {
	t.Helper()
	var sum [4]int64
	for _, rp := range replies {
		for i, f := range provider.UsageFields {
			switch v := rp.Usage[f].(type) {
			case nil:
			case int:
				sum[i] += int64(v)
			case int64:
				sum[i] += v
			default:
				t.Fatalf("usage %s = %v is not a whole number", f, v)
			}
		}
	}
	return sum
}

// tokens are a row's token columns.
type tokens struct {
	Semantics                                     string
	Input, Output, CacheRead, CacheCreation       *int64
	ReportedInput, ReportedCached, ReasoningToken *int64
}

func rowTokens(r store.Result) tokens {
	return tokens{r.UsageSemantics, r.InputTokens, r.OutputTokens, r.CacheReadInputTokens, r.CacheCreationInputTokens,
		r.ReportedInputTokens, r.ReportedCachedInputTokens, r.ReasoningOutputTokens}
}

// wantTokens is what a row must hold after the agent was served usage u
// (in the script's Anthropic fields), under the agent's semantics. For
// OpenAI the mock served input = in + cache_read + cache_creation with
// cached = cache_read, and wfb stores input − cached: cache writes land in
// input_tokens, and cache_creation_input_tokens is NULL (not reported).
func wantTokens(c cli, u [4]int64, reasoning int64) tokens {
	in, out, cr, cc := u[0], u[1], u[2], u[3]
	if c.agent == bench.AgentGemini {
		// The mock served prompt = in + cr + cc with cr cached, candidates
		// = out, thoughts = reasoning: Gemini's thoughts ADD to its output.
		return tokens{wfb.SemanticsOpenAI, ptr(in + cc), ptr(out + reasoning), ptr(cr), nil, ptr(in + cr + cc), ptr(cr), ptr(reasoning)}
	}
	if c.agent == bench.AgentCodex {
		return tokens{wfb.SemanticsOpenAI, ptr(in + cc), ptr(out), ptr(cr), nil, ptr(in + cr + cc), ptr(cr), ptr(reasoning)}
	}
	if c.agent == bench.AgentOpencode {
		// Chat Completions as the mock serves it: prompt = in + cr + cc,
		// cr cached, completion = out with reasoning inside. opencode prints
		// prompt − cached and completion − reasoning; wfb adds them back.
		return tokens{wfb.SemanticsOpenAI, ptr(in + cc), ptr(out), ptr(cr), nil, ptr(in + cr + cc), ptr(cr), ptr(reasoning)}
	}
	if c.agent == bench.AgentQwen {
		// Qwen Code's stream-json has no reasoning count: NULL.
		return tokens{wfb.SemanticsOpenAI, ptr(in + cc), ptr(out), ptr(cr), nil, ptr(in + cr + cc), ptr(cr), nil}
	}
	return tokens{wfb.SemanticsAnthropic, ptr(in), ptr(out), ptr(cr), ptr(cc), ptr(in), nil, nil}
}

// TestARealCLICompletesATextOnlySession stops wfb from mis-driving a real
// CLI headless: wrong flags, a prompt it never reads, output it cannot
// parse, a version not recorded.
func TestARealCLICompletesATextOnlySession(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			reply := provider.Reply{Text: "hello from the mock", Usage: provider.FullUsage(120, 8, 0, 0)}
			r := newRig(t, &provider.Script{Replies: []provider.Reply{reply}})
			row := r.run(t, r.cell(c))
			requireOK(t, row)
			if diff := cmp.Diff(wantTokens(c, served(t, reply), 0), rowTokens(row)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			if row.AgentVersion != c.version || row.Agent != c.agent || row.Model != c.model {
				t.Errorf("agent %q version %q model %q, want %q %q %q", row.Agent, row.AgentVersion, row.Model, c.agent, c.version, c.model)
			}
			if row.SessionID == "" || row.ResultEvent == "" || row.DurationMS == nil {
				t.Errorf("session id %q, result event %d bytes, duration %v: not recorded", row.SessionID, len(row.ResultEvent), row.DurationMS)
			}
			if row.CostUSD == nil || row.CostSource == "" {
				t.Errorf("cost %v (%q): a priced model's cost was not recorded", row.CostUSD, row.CostSource)
			}
			if c.agent == bench.AgentGemini || chatCLI(c) {
				// Their output shows no retries (and wfb allows Gemini CLI
				// none).
				if row.APIRetries != nil {
					t.Errorf("api retries %v, want NULL", *row.APIRetries)
				}
			} else if row.APIRetries == nil || *row.APIRetries != 0 {
				t.Errorf("api retries %v, want a measured 0", row.APIRetries)
			}
			var prompts []string
			for _, req := range modelTurns(r.p) {
				prompts = append(prompts, string(req.RawBody))
			}
			if len(prompts) != 1 || !strings.Contains(prompts[0], "Say hello.") {
				t.Errorf("%d model requests; the prompt reached the provider: %v", len(prompts), len(prompts) == 1 && strings.Contains(prompts[0], "Say hello."))
			}
			if chatCLI(c) && len(prompts) == 1 && !strings.Contains(strings.ReplaceAll(prompts[0], " ", ""), `"stream_options":{"include_usage":true}`) {
				// Without it a Chat Completions stream carries no usage.
				t.Errorf("the stream did not ask for usage: %s", clip(prompts[0]))
			}
			// No side traffic (title generation, probes, telemetry) reaches
			// the provider: every request is the one model turn.
			if all := r.p.Requests(); len(all) != len(prompts) {
				var seen []string
				for _, req := range all {
					seen = append(seen, req.Method+" "+req.Path)
				}
				t.Errorf("the provider saw %d requests, %d of them model turns: %v", len(all), len(prompts), seen)
			}
			switch c.agent {
			case bench.AgentClaude:
				if row.CostSource != "reported" || row.NumTurns == nil || *row.NumTurns != 1 {
					t.Errorf("cost source %q, turns %v; want reported, 1", row.CostSource, row.NumTurns)
				}
				wantMU := []store.ModelUsage{{Model: c.model, InputTokens: ptr(int64(120)), OutputTokens: ptr(int64(8)), CacheReadInputTokens: ptr(int64(0)), CacheCreationInputTokens: ptr(int64(0)), CostUSD: row.CostUSD}}
				if diff := cmp.Diff(wantMU, row.ModelUsage); diff != "" {
					t.Errorf("model usage (-want +got):\n%s", diff)
				}
				if row.PermissionDenials == nil || *row.PermissionDenials != 0 {
					t.Errorf("permission denials %v, want a measured 0", row.PermissionDenials)
				}
			case bench.AgentCodex, bench.AgentGemini:
				// gpt-5-codex and gemini-2.5-pro: $1.25 per million input,
				// $10 output.
				want := (120*1.25 + 8*10.0) / 1e6
				if row.CostSource != "derived" || row.CostUSD == nil || *row.CostUSD != want {
					t.Errorf("cost %v (%q), want %v derived", row.CostUSD, row.CostSource, want)
				}
			case bench.AgentOpencode, bench.AgentQwen:
				// Neither prices the model (opencode prints 0): wfb derives
				// it from its table.
				want := agent.Prices[c.model].Cost(120, 8, 0, 0)
				if row.CostSource != "derived" || row.CostUSD == nil || *row.CostUSD != want || want == 0 {
					t.Errorf("cost %v (%q), want %v derived", row.CostUSD, row.CostSource, want)
				}
			}
			if c.agent == bench.AgentGemini {
				wantMU := []store.ModelUsage{{Model: c.model, InputTokens: ptr(int64(120)), OutputTokens: ptr(int64(8)), CacheReadInputTokens: ptr(int64(0)), CostUSD: row.CostUSD}}
				if diff := cmp.Diff(wantMU, row.ModelUsage); diff != "" {
					t.Errorf("model usage (-want +got):\n%s", diff)
				}
			}
		})
	}
}

const reviewArtifact = `{"schema_version": 1, "verdict": "request_changes", "findings": [{"id": "f1", "severity": "high", "path": "source.ts", "line": 1, "category": "correctness", "evidence": "answer is hard-coded", "recommendation": "compute it", "blocking": true}]}`

// TestAWriteToolCallProducesAnAcceptedReviewArtifact stops the artifact
// write — outside the workspace, which the CLIs deny unless granted — from
// being silently refused, and the review from passing without it.
func TestAWriteToolCallProducesAnAcceptedReviewArtifact(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			// A fresh directory the sandbox creates and hands to the
			// session, so the artifact's path is known to the script.
			r := newRig(t, nil)
			artifactDir := filepath.Join(r.tmp, "artifacts")
			artifact := filepath.Join(artifactDir, review.ReviewOutput)
			replies := []provider.Reply{
				{Text: "writing the review", Tools: []provider.Tool{c.writeFile(artifact, reviewArtifact)}, Usage: provider.FullUsage(900, 60, 0, 0)},
				{Text: "review written", Usage: provider.FullUsage(1000, 12, 0, 0)},
			}
			r.p.Close()
			r.p = startProvider(t, &provider.Script{Replies: replies})
			row := r.run(t, r.cell(c, func(cell *runner.Cell) {
				cell.Review, cell.ArtifactDir = true, artifactDir
				cell.Prompt = "Review the change in source.ts."
			}))
			requireOK(t, row)
			rv, err := review.ParseReviewOutput(artifact)
			if err != nil {
				t.Fatalf("the parser refused the artifact the agent wrote: %v", err)
			}
			if rv.Verdict != "request_changes" || len(rv.Findings) != 1 {
				t.Errorf("parsed verdict %q with %d findings", rv.Verdict, len(rv.Findings))
			}
			if row.Verdict != "request_changes" || row.FindingsCount == nil || *row.FindingsCount != 1 {
				t.Errorf("row verdict %q, findings %v", row.Verdict, row.FindingsCount)
			}
			if c.agent == bench.AgentClaude && (row.PermissionDenials == nil || *row.PermissionDenials != 0) {
				t.Errorf("permission denials %v (%s), want a measured 0", row.PermissionDenials, row.ErrorDetail)
			}
		})
	}
}

func startProvider(t *testing.T, s *provider.Script) *provider.Provider {
	t.Helper()
	p, err := provider.Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestUsageTotalsEqualWhatTheMockServedAcrossTurns stops a multi-turn
// session's usage from being taken from one turn, double counted, or
// zero-filled: the row holds the sum of what the provider served.
func TestUsageTotalsEqualWhatTheMockServedAcrossTurns(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			replies := []provider.Reply{
				{Text: "step one", Tools: []provider.Tool{c.harmless}, Usage: provider.FullUsage(1500, 40, 3000, 500), ReasoningTokens: 11},
				{Text: "step two", Tools: []provider.Tool{c.harmless}, Usage: provider.FullUsage(200, 30, 4500, 0), ReasoningTokens: 7},
				{Text: "done", Usage: provider.FullUsage(250, 25, 4500, 100), ReasoningTokens: 0},
			}
			r := newRig(t, &provider.Script{Replies: replies})
			row := r.run(t, r.cell(c, func(cell *runner.Cell) { cell.Prompt = "Run the checks." }))
			requireOK(t, row)
			if n := len(modelTurns(r.p)); n != len(replies) {
				t.Fatalf("%d model requests, want %d (the script was not followed)", n, len(replies))
			}
			if diff := cmp.Diff(wantTokens(c, served(t, replies...), 18), rowTokens(row)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
			if c.agent == bench.AgentGemini {
				u := served(t, replies...)
				in, out := u[0]+u[3], u[1]+18
				wantMU := []store.ModelUsage{{Model: c.model, InputTokens: &in, OutputTokens: &out, CacheReadInputTokens: &u[2], CostUSD: row.CostUSD}}
				if diff := cmp.Diff(wantMU, row.ModelUsage); diff != "" {
					t.Errorf("model usage (-want +got):\n%s", diff)
				}
			}
			if c.agent == bench.AgentClaude {
				u := served(t, replies...)
				wantMU := []store.ModelUsage{{Model: c.model, InputTokens: &u[0], OutputTokens: &u[1], CacheReadInputTokens: &u[2], CacheCreationInputTokens: &u[3], CostUSD: row.CostUSD}}
				if diff := cmp.Diff(wantMU, row.ModelUsage); diff != "" {
					t.Errorf("model usage (-want +got):\n%s", diff)
				}
				if row.NumTurns == nil || *row.NumTurns != 3 {
					t.Errorf("turns %v, want 3", row.NumTurns)
				}
				if row.PermissionDenials == nil || *row.PermissionDenials != 0 {
					t.Errorf("permission denials %v (%s), want a measured 0", row.PermissionDenials, row.ErrorDetail)
				}
			}
		})
	}
}

// TestProviderFailuresAreFailedRowsWithProviderError stops an upstream
// 529 or 400 (and for Gemini CLI, which exits with the status mod 256, a
// 429) from passing as a session, or being blamed on the agent.
func TestProviderFailuresAreFailedRowsWithProviderError(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		statuses := []int{529, 400}
		switch {
		case c.agent == bench.AgentGemini:
			statuses = []int{429, 529, 400}
		case c.slow529:
			// Qwen Code honours a retry hint for a 429 and a 503 only: its
			// 529 is TestOnly529sLeaveTheTokensNull's, bounded by wfb's
			// timeout.
			statuses = []int{429, 503, 400}
		}
		for _, status := range statuses {
			t.Run(c.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				c := require(t, c)
				r := newRig(t, &provider.Script{Default: &provider.Reply{Status: status, RetryAfterMS: c.retryHint}})
				row := r.run(t, r.cell(c))
				if row.OK || row.ErrorKind != wfb.KindProviderError {
					t.Fatalf("ok %v kind %q (%s), want provider-error\nstdout: %s", row.OK, row.ErrorKind, row.ErrorDetail, clip(row.StdoutTail))
				}
				if !strings.Contains(row.ErrorDetail, strconv.Itoa(status)) && !providerMessage.MatchString(row.ErrorDetail) {
					t.Errorf("detail %q names neither the status nor the provider's message", row.ErrorDetail)
				}
				if row.ProcessState != wfb.StateExited || row.ExitCode == nil || *row.ExitCode == 0 {
					t.Errorf("process %s exit %v, want exited non-zero", row.ProcessState, row.ExitCode)
				}
				requests := len(modelTurns(r.p))
				if c.agent == bench.AgentGemini {
					// wfb allows Gemini CLI one attempt per request: it
					// retries a broken stream without a trace otherwise.
					if requests != 1 {
						t.Errorf("%d requests for a %d, want 1 (general.maxAttempts 1)", requests, status)
					}
					if row.APIRetries != nil {
						t.Errorf("api retries %s, want NULL (stream-json shows none)", deref(row.APIRetries))
					}
					t.Logf("%d requests, exit %s: %s", requests, deref(row.ExitCode), row.ErrorDetail)
					return
				}
				if c.attempts > 0 {
					// No setting bounds their retries; the hint made them
					// quick. A 400 is not retried.
					want := c.attempts
					if status == 400 {
						want = 1
					}
					if requests != want {
						t.Errorf("%d requests for a %d, want %d", requests, status, want)
					}
					if row.APIRetries != nil {
						t.Errorf("api retries %s, want NULL (the output shows none)", deref(row.APIRetries))
					}
					t.Logf("%d requests, exit %s: %s", requests, deref(row.ExitCode), row.ErrorDetail)
					return
				}
				switch {
				case status == 529 && requests < 2:
					t.Errorf("a 529 was not retried within the bound: %d requests", requests)
				case status == 529 && requests > 4:
					// One retry allowed: Claude Code makes 2 requests;
					// Codex 4 (a request retry, then a stream reconnect
					// with its own request retry).
					t.Errorf("a 529 was retried beyond the bound of 1: %d requests", requests)
				case status == 400 && c.agent == bench.AgentCodex && requests != 1:
					t.Errorf("a 400 was retried: %d requests", requests)
				case status == 400 && requests > 8:
					// Claude Code answers a 400 by degrading its request
					// (dropping beta features one by one): 6 requests in
					// 2.1.332, none of them reported as an api_retry.
					t.Errorf("a 400 was retried %d times", requests)
				}
				if status == 400 && (row.APIRetries == nil || *row.APIRetries != 0) {
					t.Errorf("api retries %s for a 400, want a measured 0", deref(row.APIRetries))
				}
				if status == 529 && (row.APIRetries == nil || *row.APIRetries != 1) {
					t.Errorf("api retries %s for a 529 with one retry allowed, want 1", deref(row.APIRetries))
				}
				t.Logf("%d requests, api_retries %v: %s", requests, deref(row.APIRetries), row.ErrorDetail)
			})
		}
	}
}

// providerMessage matches the mock's default error messages, for an agent
// that passes on the message but not the status.
var providerMessage = regexp.MustCompile(`Invalid request|Too Many Requests|overloaded|Bad Request`)

func deref(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return strconv.FormatInt(*p, 10)
}

// hungTimeouts are the cell timeouts of
// TestAHungProviderIsBoundedAndLeavesNoProcess for a CLI that starts
// quickly (cli.hungTimeouts), shortest first.
var hungTimeouts = []time.Duration{4 * time.Second, 15 * time.Second}

// TestAHungProviderIsBoundedAndLeavesNoProcess stops a provider that never
// answers from stalling a cell, and a timed-out agent from living on.
//
// Each CLI is tried with its shortest timeout first: the hang must begin
// before the timeout ends the session, and a CLI that had not reached it
// (a cold start on a loaded machine) proved nothing about the hang, so it
// is tried again with the next timeout. Every attempt must still end as a
// timeout and leave no process. (One fixed timeout long enough for a
// loaded machine made this test wait 78 s on a quiet one.)
func TestAHungProviderIsBoundedAndLeavesNoProcess(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			for i, timeout := range c.hungTimeouts {
				last := i == len(c.hungTimeouts)-1
				if hungSession(t, c, timeout, last) || last {
					return
				}
				t.Logf("%s had not reached the hung request when its %s timeout ended the session; trying %s", c.name, timeout, c.hungTimeouts[i+1])
			}
		})
	}
}

// hungSession runs one session of c whose provider hangs after a first turn
// that leaves a background process behind, with wfb's timeout given, and
// checks it ended as a timeout and left no process. It reports whether
// the hang began before the timeout; if it did not and this is not the
// last attempt, that is no failure.
func hungSession(t *testing.T, c cli, timeout time.Duration, last bool) (reached bool) {
	t.Helper()
	// The first turn leaves a background process behind, as a build
	// or a dev server would; then the provider hangs.
	r := newRig(t, &provider.Script{Replies: []provider.Reply{{Text: "starting", Tools: []provider.Tool{c.background}, Usage: provider.FullUsage(10, 5, 0, 0)}}, Default: &provider.Reply{Hang: true}})
	mark := "wfb-conformance-" + randomHex(t)
	cell := r.cell(c, func(cell *runner.Cell) {
		// The hang is what the timeout ends (see hungTimeouts).
		cell.Timeout = timeout
		// The agent's own bound is far away: wfb's timeout is what
		// must end the session.
		cell.ExtraEnv["API_TIMEOUT_MS"] = "600000"
		cell.ExtraEnv["WFB_CONFORMANCE_MARK"] = mark
		if c.agent == bench.AgentClaude {
			cell.AllowedTools = []string{"Bash"}
		}
	})
	type done struct {
		row store.Result
		err error
	}
	finished := make(chan done, 1)
	start := time.Now()
	go func() {
		row, err := runner.RunCell(context.Background(), r.db, cell)
		finished <- done{row, err}
	}()
	// Control: while the request hangs, the marked agent is found,
	// so finding none afterwards means something.
	seen := 0
	var hungAfter time.Duration
	for deadline := time.Now().Add(timeout + 5*time.Second); time.Now().Before(deadline) && len(finished) == 0; time.Sleep(50 * time.Millisecond) {
		if pending(r.p, 1) {
			// The tool call returned before this request was made,
			// so its background job is running.
			hungAfter = time.Since(start)
			seen = len(marked(t, mark))
			reached = true
			break
		}
	}
	d := <-finished
	elapsed := time.Since(start)
	if d.err != nil {
		t.Fatalf("RunCell: %v", d.err)
	}
	if reached && seen < 2 || !reached && last {
		// Both CLIs start tool commands in sessions of their own
		// (setsid), out of reach of wfb's process-group kill; only
		// the CLI's own SIGTERM handling ends them.
		t.Errorf("%d marked processes were found while the provider hung (hung: %v), want the agent and its background job; the orphan check below proves too little", seen, reached)
	}
	row := r.stored(t, d.row.AttemptID)
	if row.OK || row.ErrorKind != wfb.KindTimeout {
		t.Errorf("ok %v kind %q (%s), want timeout", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.ProcessState != wfb.StateTimeout && row.ProcessState != wfb.StateForcedKill {
		t.Errorf("process state %q, want timeout or forced-kill", row.ProcessState)
	}
	if left := marked(t, mark); len(left) > 0 {
		t.Errorf("processes outlived the session: %v", left)
	}
	hung := "the hang not reached"
	if reached {
		hung = "hung after " + hungAfter.Round(time.Millisecond).String()
	}
	t.Logf("%s: %s after %s (timeout %s, %s), %d marked processes while hung", c.name, row.ProcessState, elapsed.Round(time.Millisecond), timeout, hung, seen)
	return reached
}

// TestTheAgentsOwnRequestTimeoutHolds stops the bound wfb sets through the
// environment (API_TIMEOUT_MS) from being ignored: a hung request ends the
// session well before wfb's own timeout, as a provider error.
//
// Claude Code only: Codex's stream_idle_timeout_ms (which the Codex adapter
// maps API_TIMEOUT_MS to) does not bound a request that never gets response
// headers (0.171.0 waited the full 45 s), so for Codex wfb's timeout is the
// bound — TestAHungProviderIsBoundedAndLeavesNoProcess covers it.
func TestTheAgentsOwnRequestTimeoutHolds(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		if c.agent != bench.AgentClaude {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			r := newRig(t, &provider.Script{Default: &provider.Reply{Hang: true}})
			row := r.run(t, r.cell(c, func(cell *runner.Cell) {
				cell.Timeout = 45 * time.Second
				cell.ExtraEnv["API_TIMEOUT_MS"] = "1500"
				cell.ExtraEnv["CLAUDE_CODE_MAX_RETRIES"] = "0"
			}))
			if row.OK {
				t.Fatalf("a session against a hung provider passed")
			}
			if row.ErrorKind == wfb.KindTimeout {
				t.Fatalf("the agent ignored its request timeout; wfb's timeout ended it (%s)", row.ErrorDetail)
			}
			if row.ErrorKind != wfb.KindProviderError {
				t.Errorf("kind %q (%s), want provider-error", row.ErrorKind, row.ErrorDetail)
			}
			t.Logf("%s: %s after %dms: %s", c.name, row.ErrorKind, *row.DurationMS, row.ErrorDetail)
		})
	}
}

// modelTurns are the model turns the provider received, whichever API
// the agent speaks.
func modelTurns(p *provider.Provider) []provider.Request {
	return append(append(append(p.MessageRequests(), p.ResponsesRequests()...), p.GeminiRequests()...), p.ChatRequests()...)
}

// pending reports whether a model request after the first skip ones is
// waiting for an answer.
func pending(p *provider.Provider, skip int) bool {
	for i, req := range modelTurns(p) {
		if i >= skip && req.Status == 0 {
			return true
		}
	}
	return false
}

// marked lists the processes whose environment carries mark: the agent and
// every descendant it started (they inherit it).
func marked(t *testing.T, mark string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	needle := []byte("WFB_CONFORMANCE_MARK=" + mark + "\x00")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return found
}

func randomHex(t *testing.T) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// TestTheAPIKeyNeverReachesTheResultsFile stops a key from leaking into the
// results file through the environment, evidence or error details. The
// key is not shaped like one, so redaction cannot be what keeps it out; a
// key-shaped secret the model echoes must be redacted on the way in.
func TestTheAPIKeyNeverReachesTheResultsFile(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			key := "wfbkeyprobe" + randomHex(t)
			echoed := "sk-ant-api03-" + randomHex(t) + randomHex(t)
			r := newRig(t, &provider.Script{Replies: []provider.Reply{
				{Text: "checking", Tools: []provider.Tool{c.harmless}, Usage: provider.FullUsage(10, 5, 0, 0)},
				// Padded so that the mock's Gemini stream, which splits a
				// text in halves, keeps the key whole in the first.
				{Text: "the key you gave me is " + echoed + " " + strings.Repeat(".", len(echoed)+24), Usage: provider.FullUsage(10, 5, 0, 0)},
			}})
			row := r.run(t, r.cell(c, func(cell *runner.Cell) { cell.APIKey = key }))
			requireOK(t, row)
			if !strings.Contains(row.ResultEvent+row.StdoutTail, store.Redacted) {
				t.Errorf("the echoed key was not redacted in the evidence (control): %s", clip(row.StdoutTail))
			}
			// The provider saw the key (so it was in use) but recorded it
			// redacted.
			reqs := modelTurns(r.p)
			if len(reqs) == 0 {
				t.Fatal("no model requests")
			}
			h := reqs[0].Header
			if h.Get("X-Api-Key") == "" && h.Get("Authorization") == "" && h.Get("X-Goog-Api-Key") == "" {
				t.Errorf("the agent sent no credential header: %v", h)
			}
			for _, leak := range secretsInResultsFile(t, r, key, echoed) {
				t.Error(leak)
			}
		})
	}
}

// secretsInResultsFile says which of the secrets the rig's results file
// holds, byte for byte, in any of its files (the database, its WAL), while
// open and once closed; it closes the rig's handle.
func secretsInResultsFile(t *testing.T, r *rig, secrets ...string) []string {
	t.Helper()
	var leaks []string
	for _, phase := range []string{"open", "closed"} {
		if phase == "closed" {
			r.db.Close()
		}
		files, _ := filepath.Glob(r.dbPath + "*")
		if len(files) == 0 {
			t.Fatalf("no results file at %s", r.dbPath)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range secrets {
				if bytes.Contains(b, []byte(secret)) {
					leaks = append(leaks, fmt.Sprintf("%s (%s): the results file holds a secret %q", filepath.Base(f), phase, secret[:12]+"..."))
				}
			}
		}
	}
	return leaks
}

// TestABrokenGeminiStreamIsAProviderError stops a stream that ends without
// a finishReason from passing as a session. Gemini CLI retries such a
// stream without a trace and concatenates the text of every try (and exits
// 0 when it gives up), so wfb allows it one attempt: the first broken
// stream ends the session. A dropped connection fails the same way.
func TestABrokenGeminiStreamIsAProviderError(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		if c.agent != bench.AgentGemini {
			continue
		}
		for _, clean := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clean=%v", c.name, clean), func(t *testing.T) {
				c := require(t, c)
				r := newRig(t, &provider.Script{Default: &provider.Reply{Text: "a broken answer", Usage: provider.FullUsage(10, 5, 0, 0), CutAfterEvents: 1, CutCleanly: clean}})
				row := r.run(t, r.cell(c))
				if row.OK || row.ErrorKind != wfb.KindProviderError {
					t.Fatalf("ok %v kind %q (%s), want provider-error\nstdout: %s", row.OK, row.ErrorKind, row.ErrorDetail, clip(row.StdoutTail))
				}
				if n := len(modelTurns(r.p)); n != 1 {
					t.Errorf("%d requests, want 1: the broken stream was retried", n)
				}
				if row.InputTokens != nil || row.CostUSD != nil {
					t.Errorf("a broken session recorded usage: input %v cost %v", row.InputTokens, row.CostUSD)
				}
				t.Logf("exit %s: %s", deref(row.ExitCode), row.ErrorDetail)
			})
		}
	}
}
