package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// geminiOutcome runs the Gemini interpretation on stdout as if a process
// had printed it and exited with code.
func geminiOutcome(stdout string, code int64) store.Result {
	return outcomeOf(&geminiOutput{}, "gemini", stdout, code)
}

// geminiStart is what Gemini CLI 0.61.0 prints before its result.
const geminiStart = `{"type":"init","timestamp":"2026-12-01T19:01:03.932Z","session_id":"4e4b874f","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-12-01T19:01:03.934Z","role":"user","content":"write the file"}
{"type":"message","timestamp":"2026-12-01T19:01:04.253Z","role":"assistant","content":"done","delta":true}
`

func geminiDone(stats string) string {
	return geminiStart + `{"type":"result","timestamp":"2026-12-01T19:01:06.352Z","status":"success","stats":` + stats + `}`
}

func geminiFailed(errObj string) string {
	return geminiStart + `{"type":"result","timestamp":"2026-12-01T19:02:01.590Z","status":"error"` + errObj +
		`,"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}`
}

// Two models, as a session that used a helper model prints them: 400
// prompt (300 cached) + 20 candidates + 7 thoughts, and 50 + 5 + 0.
const geminiTwoModels = `{"total_tokens":482,"input_tokens":450,"output_tokens":25,"cached":300,"input":150,"duration_ms":2421,"tool_calls":1,"models":{` +
	`"gemini-2.5-pro":{"total_tokens":427,"input_tokens":400,"output_tokens":20,"cached":300,"input":100},` +
	`"gemini-2.5-flash-lite":{"total_tokens":55,"input_tokens":50,"output_tokens":5,"cached":0,"input":50}}}`

// TestGeminiUsageIsNormalisedWithThoughtsInOutput stops Gemini's prompt
// count (cached INCLUDED) from counting cached tokens twice, thoughts from
// vanishing (stream-json has them only inside total_tokens), an unreported
// cache write from becoming a measured zero, the reported figures and the
// per-model rows from being lost, and cost from being anything but the
// per-model derived sum.
func TestGeminiUsageIsNormalisedWithThoughtsInOutput(t *testing.T) {
	row := geminiOutcome(geminiDone(geminiTwoModels), 0)
	if !row.OK {
		t.Fatalf("not ok: %s: %s", row.ErrorKind, row.ErrorDetail)
	}
	got := tokensOf(row)
	want := rowTokens{wfb.SemanticsOpenAI, ptr(int64(150)), ptr(int64(300)), nil, ptr(int64(32)),
		ptr(int64(450)), ptr(int64(300)), ptr(int64(7)), nil, "4e4b874f", "derived"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	proCost := (100*1.25 + 300*0.125 + 27*10.0) / 1e6
	liteCost := (50*0.10 + 5*0.40) / 1e6
	wantModels := []store.ModelUsage{
		{Model: "gemini-2.5-flash-lite", InputTokens: ptr(int64(50)), OutputTokens: ptr(int64(5)), CacheReadInputTokens: ptr(int64(0)), CostUSD: &liteCost},
		{Model: "gemini-2.5-pro", InputTokens: ptr(int64(100)), OutputTokens: ptr(int64(27)), CacheReadInputTokens: ptr(int64(300)), CostUSD: &proCost},
	}
	if diff := cmp.Diff(wantModels, row.ModelUsage, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-15 })); diff != "" {
		t.Errorf("model usage (-want +got):\n%s", diff)
	}
	if row.CostUSD == nil || math.Abs(*row.CostUSD-(proCost+liteCost)) > 1e-15 {
		t.Errorf("cost %v, want %v", row.CostUSD, proCost+liteCost)
	}
}

// TestGeminiUnknownModelHasNoCostNotAGuess stops a derived cost from being
// made up for a model the price table does not list, or from being the
// cost of the priced models only.
func TestGeminiUnknownModelHasNoCostNotAGuess(t *testing.T) {
	stats := strings.ReplaceAll(geminiTwoModels, "gemini-2.5-flash-lite", "gemini-9-preview")
	row := geminiOutcome(geminiDone(stats), 0)
	if !row.OK || row.InputTokens == nil || len(row.ModelUsage) != 2 {
		t.Fatalf("an unknown price must not fail the session or drop tokens: %s %s", row.ErrorKind, row.ErrorDetail)
	}
	if row.CostUSD != nil || row.CostSource != "" {
		t.Errorf("cost %v (%q), want NULL", *row.CostUSD, row.CostSource)
	}
	if row.ModelUsage[1].Model != "gemini-9-preview" || row.ModelUsage[1].CostUSD != nil {
		t.Errorf("the unknown model's row: %+v", row.ModelUsage[1])
	}
	if !strings.Contains(row.ErrorDetail, "no price for model gemini-9-preview") {
		t.Errorf("detail %q does not say why cost is NULL", row.ErrorDetail)
	}
}

// TestGeminiRefusesWhatIsNotAMeasurement stops the ways Gemini CLI's output
// can mislead from becoming a passing row: zeros for a missing usage, sums
// that do not add up, a failed result whatever its exit code (the HTTP
// status mod 256, 1, or 0 for a broken stream), and more or fewer than one
// result.
func TestGeminiRefusesWhatIsNotAMeasurement(t *testing.T) {
	one := func(prompt, cached, input, out, total int) string {
		counts := map[string]int{"input_tokens": prompt, "cached": cached, "input": input, "output_tokens": out, "total_tokens": total}
		b, _ := json.Marshal(map[string]any{"models": map[string]any{"gemini-2.5-pro": counts}})
		c, _ := json.Marshal(counts)
		return string(c[:len(c)-1]) + "," + string(b[1:])
	}
	cases := []struct {
		name, stdout string
		code         int64
		kind, reason string
	}{
		{"zeros for missing usage", geminiDone(one(0, 0, 0, 0, 0)), 0, wfb.KindSessionError, "the provider reported no usage"},
		{"cached beyond prompt", geminiDone(one(5, 6, 0, 1, 6)), 0, wfb.KindSessionError, "cached 6 exceeds input_tokens 5"},
		{"input not prompt minus cached", geminiDone(one(10, 4, 10, 1, 11)), 0, wfb.KindSessionError, "input 10 is not input_tokens 10 − cached 4"},
		{"total short of prompt and output", geminiDone(one(10, 0, 10, 5, 0)), 0, wfb.KindSessionError, "totalTokenCount is missing or wrong"},
		{"missing field", geminiDone(`{"total_tokens":6,"input_tokens":5,"output_tokens":1,"input":5,"models":{}}`), 0, wfb.KindSessionError, "stats.cached is missing"},
		{"float", geminiDone(`{"total_tokens":6,"input_tokens":5.5,"output_tokens":1,"cached":0,"input":5}`), 0, wfb.KindSessionError, "not a whole number (5.5)"},
		{"models do not add up", geminiDone(`{"total_tokens":6,"input_tokens":5,"output_tokens":1,"cached":0,"input":5,"models":{"gemini-2.5-pro":{"total_tokens":3,"input_tokens":2,"output_tokens":1,"cached":0,"input":2}}}`), 0, wfb.KindSessionError, "not the totals"},
		{"a model without a name", geminiDone(`{"total_tokens":6,"input_tokens":5,"output_tokens":1,"cached":0,"input":5,"models":{"":{"total_tokens":6,"input_tokens":5,"output_tokens":1,"cached":0,"input":5}}}`), 0, wfb.KindSessionError, `stats.models[""]: usage under no model name`},
		{"no stats", geminiStart + `{"type":"result","status":"success"}`, 0, wfb.KindSessionError, "the result has no stats"},
		{"no result", geminiStart, 0, wfb.KindSessionError, "no result event"},
		{"two results", geminiDone(one(5, 0, 5, 1, 6)) + "\n" + geminiDone(one(5, 0, 5, 1, 6)), 0, wfb.KindSessionError, "2 result events"},
		{"not json", "Warning: 256-color support not detected.\n" + geminiDone(one(5, 0, 5, 1, 6)), 0, wfb.KindSessionError, "not JSON"},
		{"nonzero exit after success", geminiDone(one(5, 0, 5, 1, 6)), 1, wfb.KindSessionError, "exit code 1"},
		{"unknown status", geminiStart + `{"type":"result","status":"cancelled"}`, 0, wfb.KindSessionError, `result status is "cancelled"`},
		{"400, exit 144", geminiFailed(`,"error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":400,\"message\":\"Bad Request\",\"status\":\"INVALID_ARGUMENT\"}}]"}`), 144, wfb.KindProviderError, "Bad Request"},
		{"429, exit 173", geminiFailed(`,"error":{"type":"unknown","message":"[API Error: Too Many Requests]\nPlease wait and try again later."}`), 173, wfb.KindProviderError, "Too Many Requests"},
		{"dropped connection, exit 1", geminiFailed(`,"error":{"type":"unknown","message":"[API Error: terminated]"}`), 1, wfb.KindProviderError, "terminated"},
		{"no finish reason, exit 0", geminiStart + `{"type":"error","timestamp":"2026-12-01T19:03:03.347Z","severity":"error","message":"Model stream ended without a finish reason."}
` + geminiFailed(""), 0, wfb.KindProviderError, "without a finish reason"},
		{"agent failure", geminiFailed(`,"error":{"type":"FatalToolExecutionError","message":"tool registry failed"}`), 1, wfb.KindSessionError, "tool registry failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := geminiOutcome(c.stdout, c.code)
			if row.OK {
				t.Fatalf("ok = true")
			}
			if row.ErrorKind != c.kind {
				t.Errorf("error kind %q, want %q (%s)", row.ErrorKind, c.kind, row.ErrorDetail)
			}
			if !strings.Contains(row.ErrorDetail, c.reason) {
				t.Errorf("detail %q does not name %q", row.ErrorDetail, c.reason)
			}
			// Valid usage stays recorded beside a failure that is not about it.
			measured := c.name == "not json" || c.name == "nonzero exit after success"
			if measured != (row.InputTokens != nil) {
				t.Errorf("input tokens %v; want recorded only when the usage itself is valid", row.InputTokens)
			}
			if !measured && (row.OutputTokens != nil || row.CostUSD != nil || row.UsageSemantics != "" || row.ModelUsage != nil) {
				t.Errorf("a refused or failed session still recorded measurements")
			}
		})
	}
}

// TestGeminiCommandIsHeadlessOfflineAndBounded stops the command from
// losing what keeps Gemini CLI headless and offline: API-key auth (a base
// URL otherwise means gateway auth, which headless refuses, exit 41), no
// trust prompt (exit 55), no update check, telemetry or usage statistics,
// one attempt per request, the base URL and key from the cell, the
// artifact directory granted, and a settings file no workspace can
// override. It also stops the adapter from overwriting a settings file it
// did not write.
func TestGeminiCommandIsHeadlessOfflineAndBounded(t *testing.T) {
	home := t.TempDir()
	spec := Session{
		Bin: "/opt/gemini", Model: "gemini-2.5-pro", MaxTurns: 7,
		Env:   map[string]string{"HOME": home, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/m/a1/", "ANTHROPIC_API_KEY": "sk-cell"},
		Grant: []string{"/art"}, // a review's artifact directory
	}
	argv, env, err := geminiArgv(spec)
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := []string{"/opt/gemini", "--output-format", "stream-json", "--approval-mode", "yolo", "--model", "gemini-2.5-pro", "--include-directories", "/art"}
	if diff := cmp.Diff(wantArgv, argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	settings := filepath.Join(home, ".gemini", "settings.json")
	wantEnv := map[string]string{
		"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/m/a1", "GEMINI_API_KEY": "sk-cell", "GEMINI_CLI_NO_RELAUNCH": "true",
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH": settings, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": settings,
	}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 1.0},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"tools":     map[string]any{"useRipgrep": false},
		"model":     map[string]any{"maxSessionTurns": 7.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if _, _, err := geminiArgv(spec); err == nil || !strings.Contains(err.Error(), "overwrites none") {
		t.Errorf("a second session in the same HOME: %v, want a refusal to overwrite", err)
	}

	for _, bad := range []struct {
		mutate func(*Session)
		want   string
	}{
		{func(s *Session) { s.AllowedTools = []string{"write_file"} }, "allowed tools"},
		{func(s *Session) { s.Permission = "acceptEdits" }, `permission "acceptEdits"`},
		{func(s *Session) { s.OutputFormat = "json" }, "stream-json only"},
		{func(s *Session) { s.Env = map[string]string{"HOME": t.TempDir()} }, "needs a provider base URL"},
	} {
		s := spec
		s.Env = map[string]string{"HOME": t.TempDir(), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
		bad.mutate(&s)
		if _, _, err := geminiArgv(s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v", bad.want, err)
		}
	}
}

// TestGeminiGetsItsPromptAsAnArgument stops the prompt from going to
// Gemini CLI on stdin, which it waits for only 500 ms (under load it then
// exits 42, "No input provided via stdin"), except when no argument can
// carry it: past the per-argument limit, or with a NUL in it.
func TestGeminiGetsItsPromptAsAnArgument(t *testing.T) {
	for _, c := range []struct {
		name, prompt string
		onStdin      bool
	}{
		{"short", "-fix the bug\nin main.go", false},
		{"at the limit", strings.Repeat("x", geminiArgPromptMax), false},
		{"past the limit", strings.Repeat("x", geminiArgPromptMax+1), true},
		{"with a NUL", "a\x00b", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := Session{
				Bin: filepath.Join(t.TempDir(), "no-gemini"), Model: "gemini-2.5-pro",
				Env: map[string]string{"HOME": t.TempDir(), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
			}
			cmd, err := (&geminiAdapter{}).Command(spec, c.prompt)
			if err != nil {
				t.Fatal(err)
			}
			last := cmd.Argv[len(cmd.Argv)-1]
			if c.onStdin {
				if cmd.Stdin != c.prompt || strings.HasPrefix(last, "--prompt") {
					t.Errorf("stdin %d bytes, last argument %.20q: want the prompt on stdin only", len(cmd.Stdin), last)
				}
				return
			}
			if last != "--prompt="+c.prompt || cmd.Stdin != "" {
				t.Errorf("last argument %.40q, stdin %.20q: want --prompt=PROMPT and an empty stdin", last, cmd.Stdin)
			}
		})
	}
}

// TestGeminiRefusesMoreModelsThanTheLimitInOneLine stops a stats block
// naming thousands of models from becoming as many model_usage rows, or a
// refusal that lists every unpriced name.
func TestGeminiRefusesMoreModelsThanTheLimitInOneLine(t *testing.T) {
	// They add up to the totals: the first carries them all.
	models := []string{`"m0":{"total_tokens":6,"input_tokens":5,"output_tokens":1,"cached":0,"input":5}`}
	for i := 1; i < 5000; i++ {
		models = append(models, fmt.Sprintf(`"m%d":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0}`, i))
	}
	row := geminiOutcome(geminiDone(`{"total_tokens":6,"input_tokens":5,"output_tokens":1,"cached":0,"input":5,"models":{`+strings.Join(models, ",")+`}}`), 0)
	if want := "stats.models names 5000 models, more than the 64"; row.OK || !strings.Contains(row.ErrorDetail, want) {
		t.Errorf("ok=%v detail %.300q; want a refusal naming %q", row.OK, row.ErrorDetail, want)
	}
	if len(row.ModelUsage) != 0 || len(row.ErrorDetail) > 4<<10 {
		t.Errorf("%d model_usage rows, a %d-byte detail; want none and a short one", len(row.ModelUsage), len(row.ErrorDetail))
	}
}
