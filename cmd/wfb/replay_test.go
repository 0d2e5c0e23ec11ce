package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/store"
)

// agentRunner runs an agent CLI once against base in ws and returns what
// its output showed.
type agentRunner func(t *testing.T, base, ws string) session

// session is what one agent session showed: the tool calls it printed, the
// usage its result reported, and the usage the proxy metered.
type session struct {
	Tools   []string          // name and input, as JSON
	Usage   map[string]string // the result's four usage fields, as printed
	Metered map[string]int64  // summed over billed requests
	Billed  int
}

// recordAndReplay runs agent against `wfb mock serve` behind `wfb proxy`,
// records the attempt with `wfb mock record`, then removes the notes.txt
// the session wrote and runs agent again, in the same workspace, against
// the recorded script behind a fresh proxy. It returns both sessions, the
// recorded script's path and the workspace.
func recordAndReplay(t *testing.T, script string, agent agentRunner) (orig, replay session, recorded, ws string) {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "wfb.db")
	ws, err := os.MkdirTemp("", "wfb-replay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	os.Chmod(ws, 0o755)
	scriptPath := filepath.Join(dir, "original.yaml")
	if err := os.WriteFile(scriptPath, []byte(strings.ReplaceAll(script, "{{ws}}", ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	orig, origID := meteredSession(t, dbPath, scriptPath, ws, agent)
	recorded = filepath.Join(dir, "recorded.yaml")
	rec := startWfb(t, nil, "mock", "record", origID, "--db", dbPath, "--out", recorded)
	if code := rec.wait(); code != 0 {
		t.Fatalf("wfb mock record exit %d: %s", code, rec.stderr)
	}
	os.Remove(filepath.Join(ws, "notes.txt"))
	replay, _ = meteredSession(t, dbPath, recorded, ws, agent)
	return orig, replay, recorded, ws
}

// runCLI runs an agent CLI in ws with env added and returns its stdout.
func runCLI(t *testing.T, ws, stdin string, env []string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdin = ws, strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(argv[0]), err, out, stderr.String())
	}
	return string(out)
}

// meteredSession serves script with `wfb mock serve`, meters it with
// `wfb proxy` into dbPath, and runs agent through the proxy.
func meteredSession(t *testing.T, dbPath, script, ws string, agent agentRunner) (session, string) {
	t.Helper()
	serve := startWfb(t, nil, "mock", "serve", "--script", script)
	upstream := serve.line(t)
	proxy := startWfb(t, []string{"ANTHROPIC_API_KEY=" + proxySecret}, "proxy", "--upstream", upstream, "--db", dbPath)
	base, id, _ := strings.Cut(proxy.line(t), "\t")
	s := agent(t, base, ws)
	if code := proxy.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("wfb proxy exit %d: %s", code, proxy.stderr)
	}
	serve.stop(t, syscall.SIGTERM)
	s.Metered, s.Billed = meteredSums(t, dbPath, id)
	return s, id
}

// parseStreamJSON reads Claude Code's stream-json (the stand-in's too).
func parseStreamJSON(t *testing.T, stdout string) session {
	t.Helper()
	var s session
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Type    string
			IsError bool `json:"is_error"`
			Message struct {
				Content []struct {
					Type  string
					Name  string
					Input json.RawMessage
				}
			}
			Usage map[string]json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "assistant":
			for _, b := range ev.Message.Content {
				if b.Type == "tool_use" {
					s.Tools = append(s.Tools, b.Name+" "+string(b.Input))
				}
			}
		case "result":
			if ev.IsError {
				t.Fatalf("the agent's result is an error:\n%s", stdout)
			}
			s.Usage = map[string]string{}
			for _, f := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
				s.Usage[f] = string(ev.Usage[f])
			}
		}
	}
	if s.Usage == nil {
		t.Fatalf("no result event in the agent's output:\n%s", stdout)
	}
	return s
}

// meteredSums sums the attempt's billed requests per usage column.
func meteredSums(t *testing.T, dbPath, attempt string) (map[string]int64, int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reqs, err := db.Requests(ctx, attempt)
	if err != nil {
		t.Fatal(err)
	}
	sums, billed := map[string]int64{}, 0
	for _, r := range reqs {
		if !r.Billed {
			continue
		}
		billed++
		for name, v := range map[string]*int64{"input": r.InputTokens, "output": r.OutputTokens, "cache_read": r.CacheReadInputTokens, "cache_creation": r.CacheCreationInputTokens} {
			if v != nil {
				sums[name] += *v
			}
		}
	}
	return sums, billed
}

// requireSameSession fails unless the replay made the same tool calls and
// reported and metered the same usage as the original, which made some.
func requireSameSession(t *testing.T, orig, replay session, recorded string) {
	t.Helper()
	if len(orig.Tools) == 0 || orig.Billed < 2 {
		t.Fatalf("the original session made %d tool calls over %d billed requests; the test needs a multi-turn session with tools", len(orig.Tools), orig.Billed)
	}
	if diff := cmp.Diff(orig, replay); diff != "" {
		script, _ := os.ReadFile(recorded)
		t.Errorf("the replay differs from the original (-original +replay):\n%s\nrecorded script:\n%s", diff, script)
	}
}

const replayScript = `replies:
  - text: "writing the file"
    tools:
      - name: Write
        input: {file_path: "{{ws}}/notes.txt", content: "recorded once\nreplayed offline\n"}
    usage: {input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 300, cache_creation_input_tokens: 40}
  - tools:
      - name: Read
        input: {file_path: "{{ws}}/notes.txt"}
    usage: {input_tokens: 1400, output_tokens: 30, cache_read_input_tokens: 1500, cache_creation_input_tokens: 0}
  - text: "done: the notes say it"
    usage: {input_tokens: 1600, output_tokens: 12, cache_read_input_tokens: 2900, cache_creation_input_tokens: 7}
`

// TestARecordedStandInSessionReplaysTheSame stops record → replay from
// changing a session: the stand-in agent, run against the mock through
// wfb proxy, is recorded with wfb mock record and run again against the
// recording; it must make the same tool calls and report (and be metered
// for) the same usage.
func TestARecordedStandInSessionReplaysTheSame(t *testing.T) {
	standIn := func(t *testing.T, base, ws string) session {
		return parseStreamJSON(t, runCLI(t, ws, "write the notes, read them back",
			[]string{"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + proxySecret},
			os.Args[0], "mock", "agent", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--max-turns", "5"))
	}
	orig, replay, recorded, ws := recordAndReplay(t, replayScript, standIn)
	requireSameSession(t, orig, replay, recorded)
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "recorded once\nreplayed offline\n" {
		t.Errorf("the replay wrote %q (%v)", b, err)
	}
	if data, _ := os.ReadFile(recorded); strings.Contains(string(data), proxySecret) {
		t.Error("the recorded script holds the key")
	}
}

// agentBin is the real agent CLI named by env (WFB_CLAUDE_BIN,
// WFB_CODEX_BIN), or a skip (a failure with WFB_REQUIRE_AGENTS=1 or
// CI=true); a skip under -short.
func agentBin(t *testing.T, env string) string {
	t.Helper()
	slowPath(t, "a real agent CLI")
	bin := os.Getenv(env)
	if bin == "" {
		msg := env + " is not set: the real agent CLI is needed (run .ci/install-agents.sh)"
		if os.Getenv("WFB_REQUIRE_AGENTS") == "1" || os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		gate.Skipf(t, "WFB_REQUIRE_AGENTS", "%s; WFB_REQUIRE_AGENTS=1 makes this a failure", msg)
	}
	return bin
}

// TestARecordedClaudeSessionReplaysTheSame is the same through the real
// Claude Code CLI: a session recorded through wfb proxy and replayed from
// the recorded script makes the same tool calls and reports the same
// usage totals.
func TestARecordedClaudeSessionReplaysTheSame(t *testing.T) {
	t.Parallel()
	bin := agentBin(t, "WFB_CLAUDE_BIN")
	home := t.TempDir()
	claude := func(t *testing.T, base, ws string) session {
		return parseStreamJSON(t, runCLI(t, ws, "Write the notes, then read them back.",
			[]string{"HOME=" + home, "ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + proxySecret,
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=1", "API_TIMEOUT_MS=20000"},
			bin, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
			"--no-session-persistence", "--model", "claude-sonnet-4-5", "--max-turns", "6"))
	}
	orig, replay, recorded, _ := recordAndReplay(t, replayScript, claude)
	requireSameSession(t, orig, replay, recorded)
	fmt.Fprintf(os.Stderr, "claude record/replay: %d tool calls, %d billed requests, usage %v\n", len(orig.Tools), orig.Billed, orig.Usage)
}

// parseCodexJSON reads `codex exec --json`: the commands it ran and the
// usage of its turn.completed.
func parseCodexJSON(t *testing.T, stdout string) session {
	t.Helper()
	var s session
	for _, line := range strings.Split(stdout, "\n") {
		var ev struct {
			Type string
			Item struct {
				Type    string
				Command string
			}
			Usage map[string]json.RawMessage
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "item.completed" && ev.Item.Type == "command_execution":
			s.Tools = append(s.Tools, ev.Item.Command)
		case ev.Type == "turn.completed":
			s.Usage = map[string]string{}
			for k, v := range ev.Usage {
				s.Usage[k] = string(v)
			}
		case ev.Type == "turn.failed":
			t.Fatalf("codex's turn failed:\n%s", stdout)
		}
	}
	if s.Usage == nil {
		t.Fatalf("no turn.completed in codex's output:\n%s", stdout)
	}
	return s
}

const codexReplayScript = `replies:
  - text: "writing the file"
    tools:
      - name: exec_command
        input: {cmd: "printf 'recorded once\\n' > notes.txt"}
    usage: {input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 300}
    reasoning_tokens: 20
  - tools:
      - name: exec_command
        input: {cmd: "cat notes.txt"}
    usage: {input_tokens: 1400, output_tokens: 30, cache_read_input_tokens: 1500}
    reasoning_tokens: 0
  - text: "done: the notes say it"
    usage: {input_tokens: 1600, output_tokens: 12, cache_read_input_tokens: 2900}
    reasoning_tokens: 5
`

// TestARecordedCodexSessionReplaysTheSame is the same through the real
// Codex CLI, which speaks the OpenAI Responses API.
func TestARecordedCodexSessionReplaysTheSame(t *testing.T) {
	t.Parallel()
	bin := agentBin(t, "WFB_CODEX_BIN")
	codex := func(t *testing.T, base, ws string) session {
		home := t.TempDir()
		provider := fmt.Sprintf(`{name="wfb", base_url=%q, env_key="OPENAI_API_KEY", wire_api="responses", request_max_retries=1, stream_max_retries=1}`, base+"/v1")
		argv := []string{bin, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config", "--color", "never",
			"-m", "gpt-5-codex", "--dangerously-bypass-approvals-and-sandbox"}
		for _, kv := range []string{`model_provider="wfb"`, "model_providers.wfb=" + provider, `approval_policy="never"`,
			"check_for_update_on_startup=false", "analytics.enabled=false", `history.persistence="none"`} {
			argv = append(argv, "-c", kv)
		}
		argv = append(argv, "--", "Write the notes, then read them back.")
		return parseCodexJSON(t, runCLI(t, ws, "",
			[]string{"HOME=" + home, "CODEX_HOME=" + home, "OPENAI_API_KEY=" + proxySecret, "TMPDIR=" + t.TempDir()}, argv...))
	}
	orig, replay, recorded, _ := recordAndReplay(t, codexReplayScript, codex)
	requireSameSession(t, orig, replay, recorded)
	fmt.Fprintf(os.Stderr, "codex record/replay: %d tool calls, %d billed requests, usage %v\n", len(orig.Tools), orig.Billed, orig.Usage)
}

// TestMockRecordRefusesWhatItCannotReplayWithExit2 stops a recording of
// nothing from producing an empty script that silently serves defaults.
func TestMockRecordRefusesWhatItCannotReplayWithExit2(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "wfb.db")
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(t.TempDir(), "s.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mock", "record", "proxy-none", "--db", dbPath, "--out", out}, `attempt "proxy-none" has no metered requests`},
		{[]string{"mock", "record", "proxy-none", "--db", dbPath}, "--out FILE is required"},
		{[]string{"mock", "record", "--db", dbPath, "--out", out}, "takes one ATTEMPT"},
	} {
		var stdout, stderr strings.Builder
		s := &Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
		if code := run(context.Background(), tc.args, s); code != exitBadInput || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a script was written for nothing")
	}
}
