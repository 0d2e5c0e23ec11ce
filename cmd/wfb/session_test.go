package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// sessionFixture is a workspace any uid can read and a results file.
func sessionFixture(t *testing.T) (workspace, db string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "wfb-cmd-session-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	workspace = filepath.Join(tmp, "clone")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return workspace, filepath.Join(t.TempDir(), "wfb.db")
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// storedRows reads back what `wfb session` recorded.
func storedRows(t *testing.T, db string) []store.Result {
	t.Helper()
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runs, err := d.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v (%d)", err, len(runs))
	}
	if runs[0].Status != wfb.RunComplete || runs[0].FinishedAt == nil {
		t.Errorf("run status %q finished %v, want complete with a finish time", runs[0].Status, runs[0].FinishedAt)
	}
	rows, err := d.Results(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestSessionCommandRecordsAndPrintsTheRow(t *testing.T) {
	cases := []struct {
		name, script string
		review       bool
		wantCode     int
		wantKind     string
		wantOut      map[string]any
	}{
		{
			name:     "ok",
			script:   "default: {text: hi, usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000, cache_creation_input_tokens: 1000}}\n",
			wantCode: 0,
			wantOut:  map[string]any{"cost_usd": 0.42, "input_tokens": 2000.0, "error_kind": nil, "ok": 1.0},
		},
		{
			name:     "provider failure",
			script:   "default: {status: 529}\n",
			wantCode: 1,
			wantKind: wfb.KindProviderError,
			wantOut:  map[string]any{"error_kind": "provider-error", "input_tokens": nil, "cost_usd": nil, "ok": 0.0},
		},
		{
			name:     "review never written",
			script:   "default: {text: looked, usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}}\n",
			review:   true,
			wantCode: 1,
			wantKind: wfb.KindArtifactMissing,
			wantOut:  map[string]any{"error_kind": "artifact-missing", "verdict": nil, "findings_count": nil, "input_tokens": 1.0},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			workspace, db := sessionFixture(t)
			args := []string{"session", "--workspace", workspace, "--prompt", "review the change",
				"--mock-script", writeScript(t, c.script), "--db", db, "--format", "json", "--timeout", "30s"}
			if c.review {
				args = append(args, "--review")
			}
			s, out, errOut := testStreams("", nil)
			code := run(context.Background(), args, s)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.wantCode, out, errOut)
			}
			var printed []map[string]any
			if err := json.Unmarshal(out.Bytes(), &printed); err != nil || len(printed) != 1 {
				t.Fatalf("output is not one JSON record (%v):\n%s", err, out)
			}
			for k, want := range c.wantOut {
				if got, ok := printed[0][k]; !ok || got != want {
					t.Errorf("printed %s = %#v, want %#v", k, got, want)
				}
			}
			rows := storedRows(t, db)
			if len(rows) != 1 {
				t.Fatalf("%d rows stored, want 1", len(rows))
			}
			if rows[0].ErrorKind != c.wantKind || rows[0].OK != (c.wantKind == "") {
				t.Errorf("stored ok=%v kind=%q, want kind %q", rows[0].OK, rows[0].ErrorKind, c.wantKind)
			}
		})
	}
}

// Bad input is refused before anything is recorded: exit 2, no file.
func TestSessionCommandRefusesBadInputBeforeRecording(t *testing.T) {
	workspace, db := sessionFixture(t)
	good := writeScript(t, "default: {text: hi}\n")
	bad := writeScript(t, "default:\n  status: 42\n")
	cases := map[string][]string{
		"no provider":      {"session", "--workspace", workspace, "--prompt", "p", "--db", db},
		"both providers":   {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--base-url", "http://127.0.0.1:1"},
		"missing dir":      {"session", "--workspace", workspace + "/nope", "--prompt", "p", "--db", db, "--mock-script", good},
		"bad script":       {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", bad},
		"no prompt":        {"session", "--workspace", workspace, "--db", db, "--mock-script", good},
		"unknown agent":    {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--agent", "gpt"},
		"base url no key":  {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--base-url", "http://127.0.0.1:1"},
		"unknown flag":     {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--frobnicate"},
		"artifact no rev.": {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--artifact-dir", "/tmp"},
		"bad meter":        {"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--meter", "maybe"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			s, out, errOut := testStreams("", nil)
			if code := run(context.Background(), args, s); code != exitBadInput {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitBadInput, out, errOut)
			}
			if errOut.Len() == 0 {
				t.Error("no error message")
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("bad input created the results file")
			}
		})
	}
	// The bad script's error names the file, line and field.
	s, _, errOut := testStreams("", nil)
	run(context.Background(), cases["bad script"], s)
	if !strings.Contains(errOut.String(), bad+":2") || !strings.Contains(errOut.String(), "status") {
		t.Errorf("bad script error %q does not name file:line and field", errOut)
	}
}

// TestSessionCommandRefusesABaseURLCarryingCredentials stops a key in the
// --base-url's userinfo from being stored in the run's config (which the
// results file keeps) or echoed in the refusal. The key variable is set, so
// only the URL check can refuse.
func TestSessionCommandRefusesABaseURLCarryingCredentials(t *testing.T) {
	workspace, db := sessionFixture(t)
	for name, u := range map[string]string{
		"user and password": "http://u:s3cret@127.0.0.1:1",
		"key as user":       "http://s3cret@127.0.0.1:1",
		"not http":          "ftp://u:s3cret@127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			s, out, errOut := testStreams("", map[string]string{"ANTHROPIC_API_KEY": "k"})
			args := []string{"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--base-url", u, "--timeout", "5s"}
			if code := run(context.Background(), args, s); code != exitBadInput {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitBadInput, out, errOut)
			}
			if !strings.Contains(errOut.String(), "--base-url") {
				t.Errorf("the error does not name --base-url: %s", errOut)
			}
			if strings.Contains(errOut.String()+out.String(), "s3cret") {
				t.Errorf("the refusal carries the credentials: %s", errOut)
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("bad input created the results file")
			}
		})
	}
}

// The key for a real API comes from the environment, reaches the agent, and
// never reaches the results file.
func TestSessionCommandNeverStoresTheAPIKey(t *testing.T) {
	workspace, db := sessionFixture(t)
	// Point at a provider that does not exist: the session fails, the row
	// (and its evidence) is still written, and must not carry the key.
	const key = "sk-ant-api03-wfbtestkeyDO-NOT-STORE-0123456789"
	s, _, _ := testStreams("", map[string]string{"ANTHROPIC_API_KEY": key})
	code := run(context.Background(), []string{"session", "--workspace", workspace, "--prompt", "p",
		"--base-url", "http://127.0.0.1:9", "--db", db, "--timeout", "20s", "--format", "json"}, s)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d", code, exitFailed)
	}
	for _, f := range []string{db, db + "-wal"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if strings.Contains(string(data), key) || strings.Contains(string(data), "DO-NOT-STORE") {
			t.Errorf("%s contains the API key", f)
		}
	}
}

// Without --edit the workspace is read-only to the agent; with it, the
// agent's edit lands in place.
func TestSessionCommandEditsOnlyWithEdit(t *testing.T) {
	for _, edit := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-only", true: "edit"}[edit], func(t *testing.T) {
			workspace, db := sessionFixture(t)
			target := filepath.Join(workspace, "source.ts")
			// Writable by any uid: as root the session runs as 65534.
			if err := os.Chmod(workspace, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(target, 0o666); err != nil {
				t.Fatal(err)
			}
			script := writeScript(t, "default:\n  tools: [{name: Write, input: {file_path: "+target+", content: edited}}]\n"+
				"  usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}\n")
			args := []string{"session", "--workspace", workspace, "--prompt", "fix it", "--mock-script", script,
				"--db", db, "--format", "json", "--timeout", "30s", "--sandbox", "host-unsafe"}
			if edit {
				args = append(args, "--edit")
			}
			s, out, errOut := testStreams("", nil)
			if code := run(context.Background(), args, s); code != exitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			got, _ := os.ReadFile(target)
			if edited := string(got) == "edited"; edited != edit {
				t.Errorf("with --edit=%v the workspace file reads %q", edit, got)
			}
		})
	}
}

// TestSessionCommandMetersByDefaultAndRecordsTheSetting stops `wfb session`
// from running unmetered unasked (or metered when told off), and the run's
// config from hiding which it was.
func TestSessionCommandMetersByDefaultAndRecordsTheSetting(t *testing.T) {
	script := "default: {text: hi, usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000, cache_creation_input_tokens: 1000}}\n"
	for _, c := range []struct {
		flag            []string
		config, check   string
		source          string
		requests        int
		meteredInputNil bool
	}{
		{nil, `"meter":"on"`, "agree", wfb.UsageMetered, 1, false},
		{[]string{"--meter=off"}, `"meter":"off"`, "", wfb.UsageReported, 0, true},
	} {
		t.Run(c.config, func(t *testing.T) {
			workspace, db := sessionFixture(t)
			args := append([]string{"session", "--workspace", workspace, "--prompt", "p",
				"--mock-script", writeScript(t, script), "--db", db, "--format", "json", "--timeout", "30s"}, c.flag...)
			s, out, errOut := testStreams("", nil)
			if code := run(context.Background(), args, s); code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			rows := storedRows(t, db)
			r := rows[0]
			if r.UsageCheck != c.check || (r.MeteredInputTokens == nil) != c.meteredInputNil || (c.source != "" && r.UsageSource != c.source) {
				t.Errorf("check %q metered input %v source %q", r.UsageCheck, r.MeteredInputTokens, r.UsageSource)
			}
			d, err := store.OpenReadOnly(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			runs, _ := d.Runs(context.Background())
			if !strings.Contains(runs[0].Config, c.config) {
				t.Errorf("config %s does not record %s", runs[0].Config, c.config)
			}
			reqs, err := d.Requests(context.Background(), r.AttemptID)
			if err != nil || len(reqs) != c.requests {
				t.Errorf("%d requests (%v), want %d", len(reqs), err, c.requests)
			}
		})
	}
}

// TestSessionCommandScrubsTheKeyFromEveryColumnTheAgentControls stops an
// agent from smuggling the API key it was given into the results file
// through a column nobody redacted: its session id, a per-model usage key,
// its result text (percent-encoded in either case, or JSON-escaped). The
// key has no key shape, so only scrubbing by value can catch it. Neither
// the file (WAL included) nor `wfb export` nor the printed row holds it.
func TestSessionCommandScrubsTheKeyFromEveryColumnTheAgentControls(t *testing.T) {
	workspace, db := sessionFixture(t)
	const key = "wfbplain-proxy-key-0123456789"
	forms := []string{key, "wfbplain%2dproxy%2Dkey%2d0123456789", "wfbplain%2Dproxy-key-0123456789", `\u0077fbplain\u002dproxy-key-0123456789`}
	counts := `"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.001`
	event := `{"type":"result","subtype":"success","is_error":false,"num_turns":1,` +
		`"result":"see https://p/?k=` + forms[1] + ` and ` + forms[3] + `","session_id":"'"$ANTHROPIC_API_KEY"'","total_cost_usd":0.001,` +
		`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},` +
		`"modelUsage":{"'"$ANTHROPIC_API_KEY"'":{` + counts + `},"` + forms[2] + `":{` + counts + `}}}`
	agent := filepath.Join(filepath.Dir(workspace), "leaky-agent")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\ncat >/dev/null\n" +
		"printf '%s\\n' '" + event + "'\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, out, errOut := testStreams("", map[string]string{"ANTHROPIC_API_KEY": key})
	code := run(context.Background(), []string{"session", "--workspace", workspace, "--prompt", "p", "--agent", "claude",
		"--agent-bin", agent, "--base-url", "http://127.0.0.1:9", "--db", db, "--timeout", "20s", "--format", "json",
		"--sandbox", "host-unsafe", "--label", "leak"}, s)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	printed := out.String()
	var raw []byte
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		b, _ := os.ReadFile(f)
		raw = append(raw, b...)
	}
	var exported string
	for _, format := range []string{"csv", "jsonl"} {
		o, e, code := wfbCmd(t, "export", "leak", "--db", db, "--format", format)
		if code != exitOK {
			t.Fatalf("export: exit %d: %s", code, e)
		}
		exported += o
	}
	for name, text := range map[string]string{"results file": string(raw), "export": exported, "printed row": printed} {
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("the %s holds the key as %q", name, f)
			}
		}
	}
	// Control: the session id and models were recorded, scrubbed.
	rows := storedRows(t, db)
	if len(rows) != 1 || rows[0].SessionID != store.Redacted || len(rows[0].ModelUsage) != 2 {
		t.Fatalf("rows %+v, want one with a scrubbed session id and two model rows", rows)
	}
}

// leakySession runs `wfb session` on an agent that prints said on stderr
// and in its failed result event, and returns what the command printed,
// what `wfb sql` shows of the row's error detail and evidence, and the
// results file's bytes (WAL included).
func leakySession(t *testing.T, said string) (printed, sqlOut, file string) {
	t.Helper()
	workspace, db := sessionFixture(t)
	event := `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,` +
		`"result":"gave up with ` + said + `","session_id":"s","total_cost_usd":0.001,` +
		`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`
	agent := filepath.Join(filepath.Dir(workspace), "leaky-agent")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\ncat >/dev/null\n" +
		"echo 'found " + said + "' >&2\nprintf '%s\\n' '" + event + "'\nexit 1\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, out, errOut := testStreams("", map[string]string{"ANTHROPIC_API_KEY": "offline-key-0123"})
	code := run(context.Background(), []string{"session", "--workspace", workspace, "--prompt", "p", "--agent", "claude",
		"--agent-bin", agent, "--base-url", "http://127.0.0.1:9", "--db", db, "--timeout", "20s", "--format", "json",
		"--sandbox", "host-unsafe", "--label", "leak"}, s)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d (the agent failed)\nstdout: %s\nstderr: %s", code, exitFailed, out, errOut)
	}
	sqlOut, raw := sqlAndBytes(t, db, "SELECT r.error_detail, e.stderr_tail, e.result_event FROM results r JOIN evidence e USING (attempt_id)")
	return out.String() + errOut.String(), sqlOut, raw
}

// sqlAndBytes returns what `wfb sql --format tsv` shows of query over db,
// and the results file's bytes (WAL included).
func sqlAndBytes(t *testing.T, db, query string) (shown, raw string) {
	t.Helper()
	shown, errOut, code := wfbCmd(t, "sql", "--db", db, "--format", "tsv", query)
	if code != exitOK {
		t.Fatalf("sql: exit %d: %s", code, errOut)
	}
	for _, f := range []string{db, db + "-wal"} {
		b, _ := os.ReadFile(f)
		raw += string(b)
	}
	return shown, raw
}

// TestTheRowASessionPrintsIsTheRedactedOne stops `wfb session` (and the
// progress lines of `wfb run`, which get the same row from RunCell) from
// printing a key the agent echoed that the results file holds redacted:
// RunCell returned the row as it was before the store redacted its copy.
func TestTheRowASessionPrintsIsTheRedactedOne(t *testing.T) {
	const key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"
	printed, sqlOut, file := leakySession(t, key)
	for name, text := range map[string]string{"results file": file, "printed row": printed, "sql": sqlOut} {
		if strings.Contains(text, key) {
			t.Errorf("the %s holds the key:\n%s", name, text)
		}
	}
	if !strings.Contains(printed, "gave up with [REDACTED]") {
		t.Errorf("the printed row lacks the redacted detail:\n%s", printed)
	}
}

// TestKeyShapedSecretsAnAgentPrintsNeverReachTheFileOrTheScreen stops a
// Google API key or a GitHub token that an agent prints (from its own
// environment, a git remote, a config file: values wfb never gave it, so
// scrubbing by value cannot know them) from reaching the results file, the
// row the session command prints, or `wfb sql`: redaction knew only the
// sk- key shapes and bearer tokens.
func TestKeyShapedSecretsAnAgentPrintsNeverReachTheFileOrTheScreen(t *testing.T) {
	secrets := []string{"AIzaSyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU_v", "ghp_0123456789abcdefABCDEF0123456789abcd",
		"github_pat_11ABCDEFG0abcdefghij_KLMNOPQRSTUVWXYZ0123456789"}
	printed, sqlOut, file := leakySession(t, strings.Join(secrets, " and "))
	for name, text := range map[string]string{"results file": file, "printed row": printed, "sql": sqlOut} {
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("the %s holds %s", name, sec)
			}
		}
	}
	// Control: the evidence was kept, with the secrets masked.
	if !strings.Contains(sqlOut, "found [REDACTED] and [REDACTED] and [REDACTED]") {
		t.Errorf("sql output lacks the redacted stderr:\n%s", sqlOut)
	}
}

// TestTheModelAnAgentAsksForIsScrubbedLikeItsOtherText stops the model
// name an agent sends the provider (the request body's "model", which the
// metering proxy keeps as requests.requested_model) from carrying a key
// into the results file: the result's model was redacted, the request's
// was not.
func TestTheModelAnAgentAsksForIsScrubbedLikeItsOtherText(t *testing.T) {
	workspace, db := sessionFixture(t)
	secrets := []string{"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "ghp_0123456789abcdefABCDEF0123456789abcd"}
	post := func(model string) string {
		return `curl -s -o /dev/null -H 'content-type: application/json' -H "x-api-key: $ANTHROPIC_API_KEY" ` +
			`-d '{"model":"'"` + model + `"'","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}' "$ANTHROPIC_BASE_URL/v1/messages"` + "\n"
	}
	event := `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s",` +
		`"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`
	agent := filepath.Join(filepath.Dir(workspace), "leaky-agent")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\ncat >/dev/null\n" +
		post(secrets[0]) + post(secrets[1]) + "printf '%s\\n' '" + event + "'\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	mock := writeScript(t, "default: {text: hi, usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}}\n")
	s, out, errOut := testStreams("", nil)
	code := run(context.Background(), []string{"session", "--workspace", workspace, "--prompt", "p", "--agent", "claude",
		"--agent-bin", agent, "--mock-script", mock, "--db", db, "--timeout", "20s", "--format", "json",
		"--sandbox", "host-unsafe"}, s)
	if code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	models, raw := sqlAndBytes(t, db, "SELECT requested_model FROM requests ORDER BY seq")
	for name, text := range map[string]string{"results file": raw, "sql": models} {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds %s", name, secret)
			}
		}
	}
	// Control: both requests were metered, their model masked.
	if want := "requested_model\n[REDACTED]\n[REDACTED]\n"; models != want {
		t.Errorf("requested models:\n%s\nwant:\n%s", models, want)
	}
}

// TestTheSessionRecordForProgramsIsItsExportLine stops `wfb session
// --format json` (and csv) from showing fewer columns than `wfb export` of
// its run: it printed a hand-picked list that lacked usage_check, the
// metered_* tokens, cost_check and more. The record is now the export's,
// read back from the file: the same columns, in the same order (csv
// header), with the same values (json).
func TestTheSessionRecordForProgramsIsItsExportLine(t *testing.T) {
	script := writeScript(t, "default: {text: hi, usage: {input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 7000, cache_creation_input_tokens: 1000}}\n")
	workspace, db := sessionFixture(t)
	session := func(format string) string {
		out, errOut, code := wfbCmd(t, "session", "--workspace", workspace, "--prompt", "p", "--label", "s-"+format,
			"--mock-script", script, "--db", db, "--format", format, "--timeout", "30s")
		if code != 0 {
			t.Fatalf("session --format %s: exit %d: %s", format, code, errOut)
		}
		return out
	}
	export := func(label, format string) string {
		out, errOut, code := wfbCmd(t, "export", label, "--db", db, "--format", format)
		if code != 0 {
			t.Fatalf("export %s: exit %d: %s", label, code, errOut)
		}
		return out
	}

	var printed []map[string]any
	if out := session("json"); json.Unmarshal([]byte(out), &printed) != nil || len(printed) != 1 {
		t.Fatalf("session json is not one record:\n%s", out)
	}
	var exported map[string]any
	if err := json.Unmarshal([]byte(export("s-json", "jsonl")), &exported); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"usage_check", "metered_input_tokens", "cost_check", "usage_verdict", "cost_verdict", "usage_cost_usd", "usage_cost_source", "tool_calls"} {
		if _, ok := exported[col]; !ok {
			t.Errorf("the export has no %s: the test checks too little", col)
		}
	}
	for col, want := range exported {
		if got, ok := printed[0][col]; !ok || !cmp.Equal(want, got) {
			t.Errorf("session json %s = %#v (present %v), export %#v", col, got, ok, want)
		}
	}
	if len(printed[0]) != len(exported) {
		t.Errorf("session json has %d columns, export %d", len(printed[0]), len(exported))
	}

	header := func(csv string) string { return strings.SplitN(csv, "\n", 2)[0] }
	if got, want := header(session("csv")), header(export("s-csv", "csv")); got != want {
		t.Errorf("session csv header:\n%s\nexport csv header:\n%s", got, want)
	}
}

// TestSessionCommandTakesEveryAgentABenchTakes stops `wfb session
// --agent` from refusing an agent a bench may name (it took only the
// stand-in and claude): each is recorded as that agent's session, its
// binary looked up under its own name unless --agent-bin names one; and
// the refusal of an unknown one lists them all.
func TestSessionCommandTakesEveryAgentABenchTakes(t *testing.T) {
	good := writeScript(t, "default: {text: hi}\n")
	for _, name := range bench.Agents {
		if name == bench.AgentStandIn {
			continue
		}
		t.Run(name, func(t *testing.T) {
			workspace, db := sessionFixture(t)
			s, out, errOut := testStreams("", nil)
			args := []string{"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good,
				"--agent", name, "--agent-bin", filepath.Join(t.TempDir(), "no-"+name), "--model", "gpt-4.1", "--sandbox", "host-unsafe", "--timeout", "20s"}
			if code := run(context.Background(), args, s); code != exitFailed {
				t.Fatalf("exit %d, want %d (recorded, not ok)\nstdout: %s\nstderr: %s", code, exitFailed, out, errOut)
			}
			rows := storedRows(t, db)
			if len(rows) != 1 || rows[0].Agent != name || rows[0].ErrorKind != wfb.KindSpawnFailure {
				t.Fatalf("rows %+v, want one %s session that failed to spawn", rows, name)
			}
		})
	}
	workspace, db := sessionFixture(t)
	s, _, errOut := testStreams("", nil)
	run(context.Background(), []string{"session", "--workspace", workspace, "--prompt", "p", "--db", db, "--mock-script", good, "--agent", "gpt"}, s)
	if want := `--agent "gpt": want stand-in, claude, codex, gemini, opencode or qwen`; !strings.Contains(errOut.String(), want) {
		t.Errorf("refusal %q does not say %q", errOut, want)
	}
}
