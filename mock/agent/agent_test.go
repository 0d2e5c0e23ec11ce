package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/mock/provider"
)

// agentProc is one finished run of the stand-in agent as a subprocess.
type agentProc struct {
	code   int
	stdout string
	stderr string
}

// agentCmd says how to start the stand-in agent.
type agentCmd struct {
	dir   string            // working directory
	env   map[string]string // added to a clean environment
	stdin string
	args  []string
	// unprivileged runs the agent as nobody when the test runs as root, so
	// that permission bits bind it as they bind a real session.
	unprivileged bool
}

// startProvider starts a real provider for script, closed at cleanup.
func startProvider(t *testing.T, script *provider.Script) *provider.Provider {
	t.Helper()
	p, err := provider.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// sessionEnv is the environment of a session against p.
func sessionEnv(p *provider.Provider) map[string]string {
	return map[string]string{"ANTHROPIC_BASE_URL": p.URL(), "ANTHROPIC_API_KEY": "offline-test-key"}
}

// agentCommand builds the subprocess: this test binary, re-executed as the
// agent by TestMain, with a clean environment.
func agentCommand(t *testing.T, c agentCmd) *exec.Cmd {
	t.Helper()
	bin := os.Args[0]
	var cred *syscall.Credential
	if c.unprivileged && os.Geteuid() == 0 {
		// nobody must be able to reach the binary and the working
		// directory: copy the binary out of go's private build directory.
		binDir := t.TempDir()
		openUp(t, binDir)
		bin = filepath.Join(binDir, "agent")
		src, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, src, 0o755); err != nil {
			t.Fatal(err)
		}
		openUp(t, c.dir)
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	cmd := exec.CommandContext(t.Context(), bin, c.args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"WFB_TEST_AGENT=1", "PATH=/usr/bin:/bin", "HOME=" + c.dir}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(c.stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// openUp makes dir and its parent (t.TempDir's 0700 root)
// traversable by other users.
func openUp(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// agentExec runs the agent to completion.
func agentExec(t *testing.T, c agentCmd) agentProc {
	t.Helper()
	cmd := agentCommand(t, c)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("start agent: %v", err)
	}
	return agentProc{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// resultView is the part of the result object tests assert on.
type resultView struct {
	Type              string                     `json:"type"`
	Subtype           string                     `json:"subtype"`
	IsError           bool                       `json:"is_error"`
	APIErrorStatus    *int                       `json:"api_error_status"`
	NumTurns          int                        `json:"num_turns"`
	Result            *string                    `json:"result"`
	Errors            []string                   `json:"errors"`
	TotalCostUSD      *float64                   `json:"total_cost_usd"`
	Usage             map[string]json.RawMessage `json:"usage"`
	ModelUsage        map[string]map[string]any  `json:"modelUsage"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	TerminalReason string `json:"terminal_reason"`
}

// jsonLines splits JSONL output into objects.
func jsonLines(t *testing.T, out string) []map[string]json.RawMessage {
	t.Helper()
	var lines []map[string]json.RawMessage
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not a JSON object: %v\n%s", err, line)
		}
		lines = append(lines, m)
	}
	return lines
}

// resultOf parses the one result object of json or stream-json output.
func resultOf(t *testing.T, p agentProc) (resultView, map[string]json.RawMessage) {
	t.Helper()
	var results []map[string]json.RawMessage
	for _, m := range jsonLines(t, p.stdout) {
		if string(m["type"]) == `"result"` {
			results = append(results, m)
		}
	}
	if len(results) != 1 {
		t.Fatalf("want exactly one result event, got %d\nstdout:\n%s\nstderr:\n%s", len(results), p.stdout, p.stderr)
	}
	raw, _ := json.Marshal(results[0])
	var v resultView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v, results[0]
}

// usageText returns usage values as their raw JSON text.
func usageText(u map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	for k, v := range u {
		out[k] = string(v)
	}
	return out
}

// toolResults returns the tool_result blocks of stream-json output.
type toolResultView struct {
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

func toolResults(t *testing.T, out string) []toolResultView {
	t.Helper()
	var results []toolResultView
	for _, m := range jsonLines(t, out) {
		if string(m["type"]) != `"user"` {
			continue
		}
		var msg struct {
			Content []toolResultView `json:"content"`
		}
		if err := json.Unmarshal(m["message"], &msg); err != nil {
			t.Fatal(err)
		}
		results = append(results, msg.Content...)
	}
	return results
}

var (
	uuidPattern     = regexp.MustCompile(`"(session_id|uuid)":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"`)
	durationPattern = regexp.MustCompile(`"(duration_ms|duration_api_ms)":[0-9]+`)
)

// normalise replaces what changes from run to run (session ids,
// durations, the working directory) with placeholders, failing when a
// session id is not uuid-shaped (the pattern would not match it).
func normalise(out, dir string) string {
	out = strings.ReplaceAll(out, dir, "$WORK")
	out = uuidPattern.ReplaceAllString(out, `"$1":"<uuid>"`)
	return durationPattern.ReplaceAllString(out, `"$1":"<ms>"`)
}

// TestAgentOutputMatchesGolden pins the output shapes the runner parses —
// Claude Code's — so that a change to them is a reviewed golden diff, not a
// silent break of the runner's strict parse.
func TestAgentOutputMatchesGolden(t *testing.T) {
	seedUsage := provider.FullUsage(2000, 300, 7000, 1000)
	textOnly := &provider.Script{Default: &provider.Reply{Text: "The change looks right.", Usage: seedUsage}}
	tests := []struct {
		name   string
		script *provider.Script
		args   []string
		golden string
	}{
		{"text reply json", textOnly, []string{"-p", "--output-format", "json"}, "text_reply.json"},
		{"text reply stream-json", textOnly, []string{"-p", "--output-format", "stream-json", "--verbose"}, "text_reply.stream-json.jsonl"},
		{"text reply text", textOnly, []string{"-p"}, "text_reply.txt"},
		{
			name: "tool turn stream-json",
			script: &provider.Script{Default: &provider.Reply{
				Text: "writing",
				Tools: []provider.Tool{
					{Name: "Write", Input: map[string]any{"file_path": "notes/out.txt", "content": "hello\n"}},
					{Name: "Read", Input: map[string]any{"file_path": "notes/out.txt"}},
					{Name: "Bash", Input: map[string]any{"command": "cat notes/out.txt; exit 3"}},
					{Name: "Edit", Input: map[string]any{"file_path": "x"}},
				},
				Usage: seedUsage,
			}},
			args:   []string{"-p", "--output-format", "stream-json", "--verbose"},
			golden: "tool_turn.stream-json.jsonl",
		},
		{
			name:   "api error json",
			script: &provider.Script{Default: &provider.Reply{Status: 529}},
			args:   []string{"-p", "--output-format", "json"},
			golden: "api_error_529.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProvider(t, tt.script)
			dir := t.TempDir()
			proc := agentExec(t, agentCmd{dir: dir, env: sessionEnv(p), stdin: "review the change", args: tt.args})
			got := normalise(proc.stdout, dir)
			path := filepath.Join("testdata", "agent", tt.golden)
			golden.Check(t, path, []byte(got))
			if t.Failed() {
				t.Logf("stderr:\n%s", proc.stderr)
			}
		})
	}
}

// TestAgentForwardsUsageExactlyAsServed stops the stand-in from
// zero-filling an absent field (which made the runner's completeness guard
// unfirable from any offline test) or cleaning up a nonsense value before the
// runner could refuse it; and pins the exact cost of the seed's usage.
func TestAgentForwardsUsageExactlyAsServed(t *testing.T) {
	cost := func(f float64) *float64 { return &f }
	tests := []struct {
		name      string
		usage     provider.Usage
		wantUsage map[string]string
		wantCost  *float64 // nil: total_cost_usd must be absent
	}{
		{
			name:      "seed usage costs exactly 0.42",
			usage:     provider.FullUsage(2000, 300, 7000, 1000),
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_read_input_tokens": "7000", "cache_creation_input_tokens": "1000"},
			wantCost:  cost(0.42),
		},
		{
			name:      "measured zero costs zero, not absent",
			usage:     provider.FullUsage(0, 0, 0, 0),
			wantUsage: map[string]string{"input_tokens": "0", "output_tokens": "0", "cache_read_input_tokens": "0", "cache_creation_input_tokens": "0"},
			wantCost:  cost(0),
		},
		{
			name:      "absent cache field stays absent and leaves the cost unstated",
			usage:     provider.Usage{"input_tokens": 2000, "output_tokens": 300, "cache_creation_input_tokens": 1000},
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_creation_input_tokens": "1000"},
		},
		{
			name:      "no usage at all",
			usage:     provider.Usage{},
			wantUsage: map[string]string{},
		},
		{
			name:      "negative forwarded",
			usage:     provider.Usage{"input_tokens": 2000, "output_tokens": 300, "cache_read_input_tokens": -5, "cache_creation_input_tokens": 1000},
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_read_input_tokens": "-5", "cache_creation_input_tokens": "1000"},
		},
		{
			name:      "boolean forwarded",
			usage:     provider.Usage{"input_tokens": 2000, "output_tokens": 300, "cache_read_input_tokens": true, "cache_creation_input_tokens": 1000},
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_read_input_tokens": "true", "cache_creation_input_tokens": "1000"},
		},
		{
			name:      "string forwarded",
			usage:     provider.Usage{"input_tokens": 2000, "output_tokens": 300, "cache_read_input_tokens": "1200", "cache_creation_input_tokens": 1000},
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_read_input_tokens": `"1200"`, "cache_creation_input_tokens": "1000"},
		},
		{
			name:      "float forwarded",
			usage:     provider.Usage{"input_tokens": 2000, "output_tokens": 300, "cache_read_input_tokens": 1.5, "cache_creation_input_tokens": 1000},
			wantUsage: map[string]string{"input_tokens": "2000", "output_tokens": "300", "cache_read_input_tokens": "1.5", "cache_creation_input_tokens": "1000"},
		},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "stream-json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "done", Usage: tt.usage}})
				proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "review the change",
					args: []string{"-p", "--output-format", format, "--verbose"}})
				if proc.code != 0 {
					t.Fatalf("exit %d, want 0 (forwarding is not refusing)\nstderr:\n%s", proc.code, proc.stderr)
				}
				res, raw := resultOf(t, proc)
				if diff := cmp.Diff(tt.wantUsage, usageText(res.Usage)); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantCost, res.TotalCostUSD); diff != "" {
					t.Errorf("total_cost_usd (-want +got):\n%s", diff)
				}
				if _, present := raw["total_cost_usd"]; present != (tt.wantCost != nil) {
					t.Errorf("total_cost_usd present = %v, want %v: %s", present, tt.wantCost != nil, raw["total_cost_usd"])
				}
				if _, present := raw["modelUsage"]; present != (tt.wantCost != nil) {
					t.Errorf("modelUsage present = %v, want %v: %s", present, tt.wantCost != nil, raw["modelUsage"])
				}
				if tt.wantCost != nil {
					if got := res.ModelUsage["stand-in"]["costUSD"]; got != *tt.wantCost {
						t.Errorf("modelUsage[stand-in].costUSD = %v, want %v", got, *tt.wantCost)
					}
				}
			})
		}
	}
}

// TestAgentDefaultIsOneRequestWhoseToolsRun stops the stand-in from looping
// on a default reply that always asks for tools: by default it makes one
// model request, runs that reply's tools, and reports success.
func TestAgentDefaultIsOneRequestWhoseToolsRun(t *testing.T) {
	p := startProvider(t, &provider.Script{Default: &provider.Reply{
		Text:  "writing",
		Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "echo ran > ran.txt"}}},
		Usage: provider.FullUsage(1, 1, 1, 1),
	}})
	dir := t.TempDir()
	proc := agentExec(t, agentCmd{dir: dir, env: sessionEnv(p), stdin: "go", args: []string{"-p", "--output-format", "json"}})
	res, _ := resultOf(t, proc)
	if proc.code != 0 || res.Subtype != "success" || res.IsError || res.NumTurns != 1 || res.Result == nil || *res.Result != "writing" {
		t.Errorf("exit %d, result %+v; want exit 0, success, 1 turn, result \"writing\"\nstderr:\n%s", proc.code, res, proc.stderr)
	}
	if n := len(p.MessageRequests()); n != 1 {
		t.Errorf("provider saw %d message requests, want 1", n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ran.txt")); err != nil || string(b) != "ran\n" {
		t.Errorf("ran.txt = %q, %v; the reply's tool did not run in the working directory", b, err)
	}
}

// TestAgentWriteIsAtomicTempThenRename stops a Write that edits the file in
// place: the real agent writes <path>.tmp.<pid>.<hex> beside the target and
// renames it, which is why a review artifact needs a writable DIRECTORY. The
// target is replaced by a new inode (a hard link to the old one keeps the old
// content), and no temporary file is left behind.
func TestAgentWriteIsAtomicTempThenRename(t *testing.T) {
	dir := t.TempDir()
	artifacts := filepath.Join(t.TempDir(), "artifacts")
	if err := os.Mkdir(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(artifacts, "existing.json")
	if err := os.WriteFile(existing, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Link(existing, alias); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	review := `{"schema_version": 1, "verdict": "approve", "findings": []}`
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "writing", Tools: []provider.Tool{
		{Name: "Write", Input: map[string]any{"file_path": filepath.Join(artifacts, "review-output.json"), "content": review}},
		{Name: "Write", Input: map[string]any{"file_path": existing, "content": "new"}},
		{Name: "Write", Input: map[string]any{"file_path": "relative/dir/note.txt", "content": "relative"}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	proc := agentExec(t, agentCmd{dir: dir, env: sessionEnv(p), stdin: "write", args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	if proc.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", proc.code, proc.stderr)
	}
	for _, r := range toolResults(t, proc.stdout) {
		if r.IsError {
			t.Errorf("tool error: %s", r.Content)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(artifacts, "review-output.json"): review,
		existing: "new",
		alias:    "old",
		filepath.Join(dir, "relative/dir/note.txt"): "relative",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("read %s: %v", path, err)
		}
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	after, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Errorf("%s is the same inode after the write: it was written in place, not renamed over", existing)
	}
	if after.Mode().Perm() != 0o640 {
		t.Errorf("mode after overwrite = %v, want the original 0640 kept", after.Mode().Perm())
	}
	for _, d := range []string{artifacts, filepath.Join(dir, "relative/dir")} {
		if left, _ := filepath.Glob(filepath.Join(d, "*.tmp.*")); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	}
}

// TestAgentWriteRefusedIsAToolErrorNotACrash stops the empty-artifact bug's
// cousin: a write the filesystem refuses (a read-only directory, even when
// the file itself is writable — atomic rename needs the directory) must be a
// tool error the session reports and continues from, not a crash or a failed
// session. As root the agent runs as nobody so the mode bits bind.
func TestAgentWriteRefusedIsAToolErrorNotACrash(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	rw := filepath.Join(dir, "rw")
	for _, d := range []string{ro, rw} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writableFile := filepath.Join(ro, "existing.json")
	if err := os.WriteFile(writableFile, []byte("before"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	if err := os.Chmod(rw, 0o777); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "writing", Tools: []provider.Tool{
		{Name: "Write", Input: map[string]any{"file_path": filepath.Join(ro, "new.json"), "content": "x"}},
		{Name: "Write", Input: map[string]any{"file_path": writableFile, "content": "tampered"}},
		{Name: "Write", Input: map[string]any{"file_path": filepath.Join(rw, "out.json"), "content": "landed"}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	proc := agentExec(t, agentCmd{dir: dir, env: sessionEnv(p), stdin: "write", unprivileged: true,
		args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	res, _ := resultOf(t, proc)
	if proc.code != 0 || res.Subtype != "success" || res.IsError {
		t.Fatalf("exit %d, subtype %q, is_error %v; want a successful session\nstderr:\n%s", proc.code, res.Subtype, res.IsError, proc.stderr)
	}
	results := toolResults(t, proc.stdout)
	var gotErrors []bool
	for _, r := range results {
		gotErrors = append(gotErrors, r.IsError)
	}
	if diff := cmp.Diff([]bool{true, true, false}, gotErrors); diff != "" {
		t.Fatalf("tool results is_error (-want +got):\n%s\n%+v", diff, results)
	}
	for _, r := range results[:2] {
		if !strings.Contains(r.Content, "permission denied") {
			t.Errorf("refused write's tool result does not say why: %q", r.Content)
		}
	}
	if b, _ := os.ReadFile(writableFile); string(b) != "before" {
		t.Errorf("%s = %q: a write into a read-only directory landed", writableFile, b)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "out.json")); string(b) != "landed" {
		t.Errorf("out.json = %q: the session did not continue after the refused writes", b)
	}
	entries, _ := os.ReadDir(ro)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"existing.json"}, names); diff != "" {
		t.Errorf("read-only directory entries (-want +got):\n%s", diff)
	}
}

// TestAgentBashRunsAndANonZeroExitIsAToolError stops a failing command from
// crashing the session or passing as a clean result.
func TestAgentBashRunsAndANonZeroExitIsAToolError(t *testing.T) {
	dir := t.TempDir()
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Tools: []provider.Tool{
		{Name: "Bash", Input: map[string]any{"command": "printf made > made.txt; echo out; echo err >&2"}},
		{Name: "Bash", Input: map[string]any{"command": "echo failing; exit 3"}},
		{Name: "Bash", Input: map[string]any{"command": "sleep 5", "timeout": 100}},
	}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	proc := agentExec(t, agentCmd{dir: dir, env: sessionEnv(p), stdin: "run", args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	res, _ := resultOf(t, proc)
	if proc.code != 0 || res.Subtype != "success" {
		t.Fatalf("exit %d, subtype %q\nstderr:\n%s", proc.code, res.Subtype, proc.stderr)
	}
	var got []toolResultView
	for _, r := range toolResults(t, proc.stdout) {
		r.ToolUseID = ""
		got = append(got, r)
	}
	want := []toolResultView{
		{Content: "out\nerr"},
		{Content: "Exit code 3\nfailing", IsError: true},
		{Content: "Command timed out after 100ms\n", IsError: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made" {
		t.Errorf("made.txt = %q, %v: the command did not run in the working directory", b, err)
	}
}

// TestAgentProviderFailureIsAFailedSessionNotASilentPass stops an upstream
// error from being reported as a usable result: like Claude Code, subtype
// "success" but is_error true, a result naming the status, exit 1.
func TestAgentProviderFailureIsAFailedSessionNotASilentPass(t *testing.T) {
	for _, status := range []int{529, 400, 401, 500} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			p := startProvider(t, &provider.Script{Default: &provider.Reply{Status: status}})
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "review the change", args: []string{"-p", "--output-format", "json"}})
			if proc.code != 1 {
				t.Errorf("exit %d, want 1", proc.code)
			}
			res, _ := resultOf(t, proc)
			if !res.IsError || res.Subtype != "success" || res.APIErrorStatus == nil || *res.APIErrorStatus != status {
				t.Errorf("result %+v: want is_error true, subtype success, api_error_status %d", res, status)
			}
			if res.Result == nil || !strings.HasPrefix(*res.Result, "API Error: "+strconv.Itoa(status)+" ") {
				t.Errorf("result text %v does not name the status %d", res.Result, status)
			}
			if res.TotalCostUSD != nil || len(res.Usage) != 0 {
				t.Errorf("a failed request reported usage %v and cost %v: nothing was measured", res.Usage, res.TotalCostUSD)
			}
		})
	}
}

// TestAgentBrokenExchangeFailsWithAClearMessage stops a stream cut short or
// an unreachable provider from passing as an (empty) answer.
func TestAgentBrokenExchangeFailsWithAClearMessage(t *testing.T) {
	cut := startProvider(t, &provider.Script{Default: &provider.Reply{Text: "partial answer", Usage: provider.FullUsage(1, 1, 1, 1), CutAfterEvents: 3}})
	gone := startProvider(t, nil)
	goneURL := gone.URL()
	gone.Close()
	tests := []struct {
		name    string
		baseURL string
		want    string
	}{
		{"stream cut before message_stop", cut.URL(), "message_stop"},
		{"provider unreachable", goneURL, "request to provider failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: map[string]string{"ANTHROPIC_BASE_URL": tt.baseURL}, stdin: "go",
				args: []string{"-p", "--output-format", "json"}})
			if proc.code != 1 {
				t.Errorf("exit %d, want 1", proc.code)
			}
			res, raw := resultOf(t, proc)
			if !res.IsError || res.Subtype != "error_during_execution" || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tt.want) {
				t.Errorf("result %+v: want is_error, error_during_execution, an error naming %q", res, tt.want)
			}
			if _, ok := raw["result"]; ok {
				t.Errorf("an error_during_execution result carries result %s; Claude Code's carries errors[] only", raw["result"])
			}
			if !strings.Contains(proc.stderr, tt.want) {
				t.Errorf("stderr does not explain: %q", proc.stderr)
			}
		})
	}
}

// TestAgentMultiTurnSendsToolResultsAndSumsUsage stops --max-turns from
// dropping turns' usage or not feeding tool results back to the model.
func TestAgentMultiTurnSendsToolResultsAndSumsUsage(t *testing.T) {
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{
		{Tools: []provider.Tool{{Name: "Write", Input: map[string]any{"file_path": "notes.txt", "content": "first"}}}, Usage: provider.FullUsage(100, 10, 1000, 50)},
		{Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "cat notes.txt"}}}, Usage: provider.FullUsage(200, 20, 2000, 0)},
		{Text: "done", Usage: provider.FullUsage(300, 30, 3000, 100)},
	}})
	proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "work", args: []string{"-p", "--output-format", "json", "--max-turns", "3"}})
	if proc.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", proc.code, proc.stderr)
	}
	res, _ := resultOf(t, proc)
	if res.NumTurns != 3 || res.Result == nil || *res.Result != "done" {
		t.Errorf("num_turns %d, result %v; want 3, \"done\"", res.NumTurns, res.Result)
	}
	wantUsage := map[string]string{"input_tokens": "600", "output_tokens": "60", "cache_read_input_tokens": "6000", "cache_creation_input_tokens": "150"}
	if diff := cmp.Diff(wantUsage, usageText(res.Usage)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	// 600*100 + 60*400 + 6000*10 + 150*30 = 148500 micro-dollars.
	if res.TotalCostUSD == nil || *res.TotalCostUSD != 0.1485 {
		t.Errorf("total_cost_usd = %v, want 0.1485", res.TotalCostUSD)
	}
	reqs := p.MessageRequests()
	if len(reqs) != 3 {
		t.Fatalf("provider saw %d message requests, want 3", len(reqs))
	}
	// Each later request carries the previous tool_use ids back as
	// tool_result blocks, with the tool's output.
	for i, want := range []string{"File created successfully at: ", "first"} {
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(reqs[i+1].RawBody, &body); err != nil {
			t.Fatal(err)
		}
		if n := len(body.Messages); n != 3+2*i {
			t.Fatalf("request %d has %d messages, want %d", i+2, n, 3+2*i)
		}
		var used []struct {
			Type, ID string
		}
		var results []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
		}
		asst, user := body.Messages[len(body.Messages)-2], body.Messages[len(body.Messages)-1]
		if asst.Role != "assistant" || user.Role != "user" {
			t.Fatalf("request %d ends with roles %s, %s", i+2, asst.Role, user.Role)
		}
		if err := json.Unmarshal(asst.Content, &used); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(user.Content, &results); err != nil {
			t.Fatal(err)
		}
		if len(used) != 1 || len(results) != 1 || results[0].Type != "tool_result" || results[0].ToolUseID != used[0].ID || !strings.HasPrefix(results[0].Content, want) {
			t.Errorf("request %d: tool_use %+v answered by %+v, want one tool_result for that id starting %q", i+2, used, results, want)
		}
	}
}

// TestAgentMaxTurnsExhaustedIsAnErrorSubtype stops a session cut off by
// --max-turns from passing as a success: like Claude Code, subtype
// error_max_turns with errors[] and no result (is_error stays false, so the
// runner must read the subtype).
func TestAgentMaxTurnsExhaustedIsAnErrorSubtype(t *testing.T) {
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Tools: []provider.Tool{{Name: "Bash", Input: map[string]any{"command": "true"}}}, Usage: provider.FullUsage(1, 1, 1, 1)}})
	proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "loop", args: []string{"-p", "--output-format", "json", "--max-turns", "2"}})
	res, raw := resultOf(t, proc)
	if proc.code != 1 || res.Subtype != "error_max_turns" || res.NumTurns != 2 || len(res.Errors) != 1 {
		t.Errorf("exit %d, result %+v; want exit 1, error_max_turns, 2 turns, one error", proc.code, res)
	}
	if _, ok := raw["result"]; ok {
		t.Errorf("error_max_turns carries a result: %s", raw["result"])
	}
	if n := len(p.MessageRequests()); n != 2 {
		t.Errorf("provider saw %d requests, want 2", n)
	}
}

// TestAgentSendsThePromptTheHarnessMeant stops a session from measuring the
// wrong prompt: stdin (all of it) or the argument reaches the provider as
// messages[0].content, with the API key and version headers.
func TestAgentSendsThePromptTheHarnessMeant(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"stdin", "review the change\nline two\n", []string{"-p"}, "review the change\nline two\n"},
		{"argument", "ignored", []string{"-p", "review", "this"}, "review this"},
		{"print after the prompt", "", []string{"review it", "--print"}, "review it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProvider(t, nil)
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: tt.stdin, args: append(tt.args, "--model", "claude-test")})
			if proc.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", proc.code, proc.stderr)
			}
			if got := strings.TrimSpace(proc.stdout); got != "ok" {
				t.Errorf("text output %q, want the reply text %q", got, "ok")
			}
			reqs := p.MessageRequests()
			if len(reqs) != 1 {
				t.Fatalf("provider saw %d requests, want 1", len(reqs))
			}
			req := reqs[0]
			var body struct {
				Model    string `json:"model"`
				Stream   bool   `json:"stream"`
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(req.RawBody, &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Messages) != 1 || body.Messages[0].Role != "user" || body.Messages[0].Content != tt.want {
				t.Errorf("messages = %+v, want one user message %q", body.Messages, tt.want)
			}
			var tools []string
			for _, tool := range body.Tools {
				tools = append(tools, tool.Name)
			}
			if body.Model != "claude-test" || !body.Stream || !slices.Equal(tools, []string{"Write", "Read", "Bash"}) {
				t.Errorf("model %q stream %v tools %v; want claude-test, true, [Write Read Bash]", body.Model, body.Stream, tools)
			}
			if req.Method != "POST" || req.Path != "/v1/messages" || req.Header.Get("x-api-key") == "" || req.Header.Get("anthropic-version") == "" {
				t.Errorf("request %s %s headers %v: want POST /v1/messages with x-api-key and anthropic-version", req.Method, req.Path, req.Header)
			}
		})
	}
}

// TestAgentToolRestrictionsAreHonoured stops --allowedTools / --tools /
// acceptEdits from being accepted and ignored: a refused tool is a tool
// error (and a permission denial), and the session still succeeds.
func TestAgentToolRestrictionsAreHonoured(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantErrors  []bool
		wantDenials []string
		wantWritten bool
	}{
		{"no restriction", nil, []bool{false, false}, nil, true},
		{"allowedTools Read only", []string{"--allowedTools", "Read"}, []bool{true, true}, []string{"Write", "Bash"}, false},
		{"allowed Bash prefix rule", []string{"--allowed-tools", "Write,Bash(echo:*)"}, []bool{false, false}, nil, true},
		{"allowed Bash other prefix", []string{"--allowedTools", "Write Bash(git log:*)"}, []bool{false, true}, []string{"Bash"}, true},
		{"disallowedTools Write", []string{"--disallowedTools", "Write"}, []bool{true, false}, []string{"Write"}, false},
		{"tools without Write", []string{"--tools", "Read,Bash"}, []bool{true, false}, nil, false},
		{"acceptEdits denies outside cwd", []string{"--permission-mode", "acceptEdits"}, []bool{true, false}, []string{"Write"}, false},
		{"acceptEdits with add-dir", []string{"--permission-mode", "acceptEdits", "--add-dir", "OUT"}, []bool{false, false}, nil, true},
		{"plan mode", []string{"--permission-mode", "plan"}, []bool{true, true}, []string{"Write", "Bash"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			target := filepath.Join(out, "artifact.json")
			p := startProvider(t, &provider.Script{Default: &provider.Reply{Tools: []provider.Tool{
				{Name: "Write", Input: map[string]any{"file_path": target, "content": "{}"}},
				{Name: "Bash", Input: map[string]any{"command": "echo hi"}},
			}, Usage: provider.FullUsage(1, 1, 1, 1)}})
			args := []string{"-p", "--output-format", "stream-json", "--verbose"}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "OUT", out))
			}
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "go", args: args})
			res, _ := resultOf(t, proc)
			if proc.code != 0 || res.Subtype != "success" || res.IsError {
				t.Fatalf("exit %d, result %+v\nstderr:\n%s", proc.code, res, proc.stderr)
			}
			var gotErrors []bool
			for _, r := range toolResults(t, proc.stdout) {
				gotErrors = append(gotErrors, r.IsError)
			}
			if diff := cmp.Diff(tt.wantErrors, gotErrors); diff != "" {
				t.Errorf("tool results is_error (-want +got):\n%s", diff)
			}
			var denials []string
			for _, d := range res.PermissionDenials {
				denials = append(denials, d.ToolName)
			}
			if diff := cmp.Diff(tt.wantDenials, denials); diff != "" {
				t.Errorf("permission_denials (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(target); (err == nil) != tt.wantWritten {
				t.Errorf("artifact written = %v, want %v", err == nil, tt.wantWritten)
			}
		})
	}
}

// TestAgentRefusesBadInvocations stops a misconfigured session from
// running at all, or failing without saying why.
func TestAgentRefusesBadInvocations(t *testing.T) {
	p := startProvider(t, nil)
	tests := []struct {
		name       string
		env        map[string]string
		stdin      string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"missing ANTHROPIC_BASE_URL", map[string]string{"ANTHROPIC_API_KEY": "k"}, "hi", []string{"-p"}, 2, "ANTHROPIC_BASE_URL is not set"},
		{"unknown flag", sessionEnv(p), "hi", []string{"-p", "--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{"bad output format", sessionEnv(p), "hi", []string{"-p", "--output-format", "xml"}, 2, "allowed choices are text, json, stream-json"},
		{"stream-json without verbose", sessionEnv(p), "hi", []string{"-p", "--output-format", "stream-json"}, 1, "requires --verbose"},
		{"no print mode", sessionEnv(p), "hi", nil, 2, "pass -p/--print"},
		{"empty prompt", sessionEnv(p), "  \n", []string{"-p"}, 1, "Input must be provided"},
		{"unknown tool", sessionEnv(p), "hi", []string{"-p", "--tools", "Edit"}, 2, `unknown tool "Edit"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := agentExec(t, agentCmd{dir: t.TempDir(), env: tt.env, stdin: tt.stdin, args: tt.args})
			if proc.code != tt.wantCode {
				t.Errorf("exit %d, want %d", proc.code, tt.wantCode)
			}
			if !strings.Contains(proc.stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", proc.stderr, tt.wantStderr)
			}
			if proc.stdout != "" {
				t.Errorf("stdout %q, want nothing: no session ran", proc.stdout)
			}
		})
	}
	if n := len(p.MessageRequests()); n != 0 {
		t.Errorf("provider saw %d requests from refused invocations", n)
	}
}

// TestAgentSIGTERMExitsWithoutAResult stops a killed session from printing
// a result that looks measured: like Claude Code, exit 143 and no result.
func TestAgentSIGTERMExitsWithoutAResult(t *testing.T) {
	p := startProvider(t, &provider.Script{Default: &provider.Reply{Hang: true}})
	cmd := agentCommand(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "hang", args: []string{"-p", "--output-format", "stream-json", "--verbose"}})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Signal once the request is in flight, so the cancellation path (not
	// process start-up) is what is tested.
	for len(p.MessageRequests()) == 0 {
		if t.Context().Err() != nil {
			t.Fatal("the agent never reached the provider")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 143 {
		t.Errorf("wait: %v, want exit status 143\nstderr:\n%s", err, stderr.String())
	}
	if strings.Contains(stdout.String(), `"type":"result"`) {
		t.Errorf("a result was printed after SIGTERM:\n%s", stdout.String())
	}
}

// BenchmarkAgentSessionInProcess measures one stand-in session (one
// streamed model request, a Write, the JSON result) without process start.
func BenchmarkAgentSessionInProcess(b *testing.B) {
	dir := b.TempDir()
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "writing", Tools: []provider.Tool{
		{Name: "Write", Input: map[string]any{"file_path": filepath.Join(dir, "out.json"), "content": `{"ok":true}`}},
	}, Usage: provider.FullUsage(2000, 300, 7000, 1000)}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	env := sessionEnv(p)
	for b.Loop() {
		if code := Main(b.Context(), []string{"-p", "--output-format", "json", "go"}, strings.NewReader(""), io.Discard, io.Discard, func(k string) string { return env[k] }); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkAgentSessionSubprocess measures the same session as the runner
// sees it: a fresh agent process per session.
func BenchmarkAgentSessionSubprocess(b *testing.B) {
	dir := b.TempDir()
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "writing", Tools: []provider.Tool{
		{Name: "Write", Input: map[string]any{"file_path": filepath.Join(dir, "out.json"), "content": `{"ok":true}`}},
	}, Usage: provider.FullUsage(2000, 300, 7000, 1000)}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	env := append([]string{"WFB_TEST_AGENT=1", "PATH=/usr/bin:/bin"}, "ANTHROPIC_BASE_URL="+p.URL())
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-p", "--output-format", "json", "go")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAgentRetriesA529OnceAndCountsTheSuccessOnce stops the stand-in from
// giving up on a momentary overload (a real CLI would not), from retrying
// without bound, or from counting the failed try's usage: a 529 then a
// success is one turn with the success's usage, the same body re-sent and
// a system/api_retry event; the retries stop at --max-retries (by default
// none), whatever CLAUDE_CODE_MAX_RETRIES says.
func TestAgentRetriesA529OnceAndCountsTheSuccessOnce(t *testing.T) {
	p := startProvider(t, &provider.Script{Replies: []provider.Reply{{Status: 529}, {Text: "fine", Usage: provider.FullUsage(900, 12, 300, 40)}}})
	proc := agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "go", args: []string{"-p", "--output-format", "stream-json", "--verbose", "--max-retries", "1"}})
	res, _ := resultOf(t, proc)
	if proc.code != 0 || res.IsError || res.NumTurns != 1 || res.Result == nil || *res.Result != "fine" {
		t.Fatalf("exit %d, result %+v: want a success after the retry", proc.code, res)
	}
	if got := string(res.Usage["input_tokens"]) + "/" + string(res.Usage["cache_read_input_tokens"]); got != "900/300" {
		t.Errorf("usage input/cache read %s, want the success's 900/300", got)
	}
	reqs := p.MessageRequests()
	if len(reqs) != 2 || reqs[0].Status != 529 || reqs[1].Status != 200 || !bytes.Equal(reqs[0].RawBody, reqs[1].RawBody) {
		t.Fatalf("provider saw %v, want a 529 and the same body re-sent", reqs)
	}
	retries := 0
	for _, m := range jsonLines(t, proc.stdout) {
		if string(m["subtype"]) == `"api_retry"` && string(m["error_status"]) == "529" && string(m["attempt"]) == "1" {
			retries++
		}
	}
	if retries != 1 {
		t.Errorf("%d api_retry events, want 1:\n%s", retries, proc.stdout)
	}
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 1}, {[]string{"--max-retries", "0"}, 1}, {[]string{"--max-retries", "3"}, 4}} {
		p := startProvider(t, &provider.Script{Default: &provider.Reply{Status: 529}})
		env := sessionEnv(p)
		env["CLAUDE_CODE_MAX_RETRIES"] = "2" // Claude Code's, which wfb sets: not the stand-in's
		proc := agentExec(t, agentCmd{dir: t.TempDir(), env: env, stdin: "go", args: append([]string{"-p", "--output-format", "json"}, c.args...)})
		if n := len(p.MessageRequests()); proc.code != 1 || n != c.want {
			t.Errorf("%v: exit %d after %d requests, want 1 after %d", c.args, proc.code, n, c.want)
		}
	}
	proc = agentExec(t, agentCmd{dir: t.TempDir(), env: sessionEnv(p), stdin: "go", args: []string{"-p", "--max-retries", "-1"}})
	if proc.code != 2 || !strings.Contains(proc.stderr, "--max-retries -1") {
		t.Errorf("--max-retries -1: exit %d, stderr %q", proc.code, proc.stderr)
	}
}
