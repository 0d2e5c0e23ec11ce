package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// geminiFloodAgent stands in for Gemini CLI: it prints results result
// events of 4 MiB each and errors error events, then exits 0.
func geminiFloodAgent(t *testing.T, results, errors int) string {
	return fakeAgent(t, fmt.Sprintf(`[ "$1" = "--version" ] && { echo 0.61.0; exit 0; }
echo '{"type":"init","session_id":"s1","model":"gemini-2.5-pro"}'
i=0; while [ $i -lt %d ]; do
  printf '{"type":"result","status":"success","pad":"'
  head -c 4194304 /dev/zero | tr '\0' a
  printf '"}\n'
  i=$((i+1))
done
yes '{"type":"error","message":"quota exceeded, retrying"}' | head -n %d
`, results, errors))
}

// TestAGeminiFloodOfEventsIsBoundedInMemoryAndDetail: Gemini's adapter
// kept every result event whole (up to 16 MiB each, without a bound on
// their number) and every error event's message, so an agent printing
// events without end grew wfb's memory without end, and a flood of error
// events became a detail of megabytes in the row and every report. It
// must keep what the strict parse needs — the count, the last event, a
// bounded head — as Claude's and Codex's adapters do, and say how many
// error messages it left out.
func TestAGeminiFloodOfEventsIsBoundedInMemoryAndDetail(t *testing.T) {
	slowPath(t, "a flood of Gemini events")
	wfbBin := buildWFB(t)
	const maxRSSMiB, maxDetail = 100, 16 << 10
	cases := []struct {
		name            string
		results, errors int
		wantIn          string
	}{
		{"40 result events of 4 MiB", 40, 0, "40 result events"},
		{"100,000 error events and no result", 0, 100_000, "(99980 more)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: %s
provider: {mock: replies.yaml}
timeout: 120s
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: gemini, agent_bin: %s}]
`, sandbox.HostUnsafe, geminiFloodAgent(t, c.results, c.errors)))
			code, stderr, rss := execWFB(t, wfbBin, "run", bench, "--db", db)
			t.Logf("exit %d, peak RSS %d MiB\n%s", code, rss, stderr)
			r := boundedFloodRow(t, db, code, stderr, rss, maxRSSMiB)
			if r.OK || r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, c.wantIn) {
				t.Errorf("row %s: %.300s; want a session-error naming %q", r.ErrorKind, r.ErrorDetail, c.wantIn)
			}
			if len(r.ErrorDetail) > maxDetail {
				t.Errorf("error_detail holds %d bytes, want at most %d", len(r.ErrorDetail), maxDetail)
			}
		})
	}
}

// TestAClaudeResultWithAMillionErrorsIsABoundedDetail: the errors of a
// failed result event became the row's detail entry by entry, so one line
// under the line limit holding a million of them made a detail of
// megabytes in the row and in every report. The detail names the first
// entries and how many more there were.
func TestAClaudeResultWithAMillionErrorsIsABoundedDetail(t *testing.T) {
	slowPath(t, "a result with a million errors")
	r := claudeSessionRow(t, `printf '{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s","errors":['
yes '"x",' | head -n 999999 | tr -d '\n'
echo '"x"]}'
`)
	if r.OK || !strings.Contains(r.ErrorDetail, "(999980 more)") {
		t.Errorf("row %s: %.300s; want a failure naming the 999980 errors left out", r.ErrorKind, r.ErrorDetail)
	}
	if len(r.ErrorDetail) > 16<<10 {
		t.Errorf("error_detail holds %d bytes, want at most %d", len(r.ErrorDetail), 16<<10)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// zstdBomb is a valid zstd frame of a few KiB that decodes to n zero bytes.
func zstdBomb(t *testing.T, n int64) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(enc, io.LimitReader(zeros{}, n)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAForgedBodyInAResultsFileIsDecodedOnlyToItsRecordedSize: a results
// file can come from anywhere (wfb merge takes shards from other
// machines), and its kept bodies are zstd, where a few KiB decode to GiBs.
// wfb decoded a stored transcript or exchange body whole, up to 1 GiB,
// before its digest could say it was not what was recorded: wfb view and
// wfb mock record took GiBs of memory for a forged row. A body is decoded
// only to the size its row records; one that decodes to more is named and
// refused — mock record exits 2, the view page says why — and the file's
// rows stay as they were.
func TestAForgedBodyInAResultsFileIsDecodedOnlyToItsRecordedSize(t *testing.T) {
	slowPath(t, "a forged body that decodes to GiBs")
	wfbBin := buildWFB(t)
	ws, db := sessionFixture(t)
	s, out, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p",
		"--mock-script", writeScript(t, runOKScript), "--db", db, "--timeout", "30s"}, s); code != 0 {
		t.Fatalf("session exit %d\n%s\n%s", code, out, errOut)
	}
	rows := storedRows(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	attempt := rows[0].AttemptID
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	bomb := zstdBomb(t, 512<<20)
	for _, f := range []struct{ table, update string }{
		{"transcripts", `UPDATE transcripts SET data = ? WHERE attempt_id = ?`},
		{"exchanges", `UPDATE exchanges SET response_body = ? WHERE attempt_id = ? AND seq = 1`},
	} {
		forgeRow(t, raw, f.table, f.update, bomb, attempt)
	}
	raw.Close()
	const maxRSSMiB = 200

	code, stderr, rss := execWFB(t, wfbBin, "mock", "record", attempt, "--db", db, "--out", filepath.Join(t.TempDir(), "s.yaml"))
	t.Logf("mock record: exit %d, peak RSS %d MiB: %s", code, rss, stderr)
	if code != exitBadInput || !strings.Contains(stderr, "request 1: response body") || !strings.Contains(stderr, "decodes to more than the") {
		t.Errorf("mock record: exit %d, stderr %q; want 2 naming the request, the body and what is wrong", code, stderr)
	}
	if rss > maxRSSMiB {
		t.Errorf("mock record peaked at %d MiB RSS, want at most %d: it decoded the forged body", rss, maxRSSMiB)
	}

	site := filepath.Join(t.TempDir(), "site")
	code, stderr, rss = execWFB(t, wfbBin, "view", "--db", db, "--export", site)
	t.Logf("view --export: exit %d, peak RSS %d MiB", code, rss)
	if code != 0 {
		t.Fatalf("view --export: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(site, "attempt", attempt+".html"))
	if err != nil || !strings.Contains(string(page), "The transcript cannot be read: the body decodes to more than the") {
		t.Errorf("the attempt page does not say why its transcript is not shown (%v)", err)
	}
	if rss > maxRSSMiB {
		t.Errorf("view peaked at %d MiB RSS, want at most %d: it decoded the forged transcript", rss, maxRSSMiB)
	}
	if after := storedRows(t, db); len(after) != 1 || after[0].AttemptID != attempt {
		t.Errorf("the results file changed: %d rows", len(after))
	}
}

// forgeRow runs update on table of an append-only results file as a forger
// would: its no-update trigger dropped for the update and put back.
func forgeRow(t *testing.T, raw *sql.DB, table, update string, args ...any) {
	t.Helper()
	trigger := table + "_no_update"
	var def string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`, trigger).Scan(&def); err != nil {
		t.Fatalf("trigger %s: %v", trigger, err)
	}
	for _, q := range []string{"DROP TRIGGER " + trigger, update, def} {
		qargs := args
		if q != update {
			qargs = nil
		}
		res, err := raw.Exec(q, qargs...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n, _ := res.RowsAffected(); q == update && n != 1 {
			t.Fatalf("%s: %d rows, want 1", q, n)
		}
	}
}

// TestAResultNamingTooManyModelsIsRefusedInOneLine: a result event's
// per-model usage was read model by model, each bad one adding four
// problems to the row's detail, so one line under the line limit naming
// 200,000 models made a detail of tens of MB (and, valid, as many
// model_usage rows). More than the model limit is refused in one line;
// the session's own usage is still recorded.
func TestAResultNamingTooManyModelsIsRefusedInOneLine(t *testing.T) {
	r := claudeSessionRow(t, `printf '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"modelUsage":{'
seq 1 199999 | sed 's/.*/"m&":{},/' | tr -d '\n'
echo '"m0":{}}}'
`)
	if want := "modelUsage names 200000 models, more than the 64"; !strings.Contains(r.ErrorDetail, want) {
		t.Errorf("detail %.300q; want it to name %q", r.ErrorDetail, want)
	}
	if len(r.ErrorDetail) > 16<<10 {
		t.Errorf("error_detail holds %d bytes, want at most %d", len(r.ErrorDetail), 16<<10)
	}
	if r.InputTokens == nil || *r.InputTokens != 1 || len(r.ModelUsage) != 0 {
		t.Errorf("input_tokens %v, %d model_usage rows; want the session's usage kept and no per-model rows", r.InputTokens, len(r.ModelUsage))
	}
}

// TestTheMockProviderOfASessionKeepsNoRequestBodies: the scripted provider
// that wfb session and wfb run start for a cell kept every request it was
// sent, raw and parsed, for the cell's life, though nothing reads them
// back: an agent sending 24 requests of 8 MiB held 384 MiB of wfb.
func TestTheMockProviderOfASessionKeepsNoRequestBodies(t *testing.T) {
	slowPath(t, "a flood of 24 requests of 8 MiB")
	wfbBin := buildWFB(t)
	ws, db := sessionFixture(t)
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
i=0; while [ $i -lt 24 ]; do
  { printf '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"'; head -c 8388608 /dev/zero | tr '\0' a; printf '"}]}'; } |
    curl -sS -o /dev/null -H 'content-type: application/json' --data-binary @- "$ANTHROPIC_BASE_URL/v1/messages" || exit 3
  i=$((i+1))
done
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`)
	for _, meter := range []string{"on", "off"} {
		t.Run("meter "+meter, func(t *testing.T) {
			code, stderr, rss := execWFB(t, wfbBin, "session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
				"--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", "120s", "--meter", meter, "--mock-script", writeScript(t, runOKScript))
			t.Logf("exit %d, peak RSS %d MiB", code, rss)
			if code == exitBadInput {
				t.Fatalf("exit 2: %s", stderr)
			}
			// Kept, the bodies took 384 MiB or more, on top of wfb's own
			// ~50; passed on, the meter's copies of one 8 MiB request and
			// the garbage the collector has yet to take come to 230-260
			// (~55 without the meter), and past 300 on a loaded machine,
			// where the collector runs late.
			if rss > 360 {
				t.Errorf("wfb peaked at %d MiB RSS, want at most 360: it kept the request bodies", rss)
			}
		})
	}
}

// TestManyHugeRequestsAtOnceWaitForRoomInsteadOfGrowingWfb: the meter and
// the mock provider each read a request body whole (up to 32 MiB), and the
// agent decides how many it sends at once, so 24 requests of 24 MiB sent
// together took 2.7 GiB of wfb (this test sends 16) — any process in the
// sandbox can reach both.
// Past a bound on the bodies held at once a request now waits for room:
// every request is still answered and recorded, in bounded memory.
func TestManyHugeRequestsAtOnceWaitForRoomInsteadOfGrowingWfb(t *testing.T) {
	slowPath(t, "a flood of 16 requests of 24 MiB")
	wfbBin := buildWFB(t)
	ws, db := sessionFixture(t)
	const n = 16
	agent := fakeAgent(t, fmt.Sprintf(`[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
i=0; while [ $i -lt %d ]; do
  { printf '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"'; head -c 25165824 /dev/zero | tr '\0' a; printf '"}]}'; } |
    curl -sS -o /dev/null -w '%%{http_code}\n' -H 'content-type: application/json' --data-binary @- "$ANTHROPIC_BASE_URL/v1/messages" >&2 &
  i=$((i+1))
done
wait
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s","total_cost_usd":0.1,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`, n))
	code, stderr, rss := execWFB(t, wfbBin, "session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
		"--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", "300s", "--mock-script", writeScript(t, runOKScript))
	t.Logf("exit %d, peak RSS %d MiB", code, rss)
	if code == exitBadInput {
		t.Fatalf("exit 2: %s", stderr)
	}
	rows := storedRows(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	reqs, err := d.Requests(context.Background(), rows[0].AttemptID)
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, r := range reqs {
		if r.Status != nil && *r.Status == 200 && r.ProxyError == "" && r.RequestBytes == 25165824+70 {
			answered++
		}
	}
	if answered != n {
		t.Errorf("%d of %d requests recorded answered whole (of %d recorded); want every one: waiting must not lose a request", answered, n, len(reqs))
	}
	if rss > 700 {
		t.Errorf("wfb peaked at %d MiB RSS, want at most 700: the bodies held at once are not bounded", rss)
	}
}

// TestTheStandInAgentReadsABoundedReply: wfb mock agent read a provider's
// reply whole however large — a non-streamed one into one JSON value, a
// stream's events and text without a bound on their sum — so a provider
// (any server at ANTHROPIC_BASE_URL) sending 100 MiB grew the agent by
// that much and more. Past 16 MiB the reply is refused, naming the limit,
// streamed or not; a prompt on stdin past 64 MiB is refused (exit 2).
func TestTheStandInAgentReadsABoundedReply(t *testing.T) {
	slowPath(t, "replies of 100 MiB")
	wfbBin := buildWFB(t)
	const size = 100 << 20
	mib := strings.Repeat("a", 1<<20)
	replies := map[string]func(w http.ResponseWriter){
		"json": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"`)
			for range size >> 20 {
				io.WriteString(w, mib)
			}
			io.WriteString(w, `"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`)
		},
		"stream": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{}}}\n\n"+
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
			for range size >> 20 {
				io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+mib+"\"}}\n\n")
			}
		},
	}
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				reply(w)
			}))
			defer srv.Close()
			cmd, peakRSS := measuredCommand(t, wfbBin, "mock", "agent", "-p", "--output-format", "json", "hello")
			cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=offline")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			rss := peakRSS()
			t.Logf("exit %v, peak RSS %d MiB: %.300s", err, rss, out.String())
			if err == nil || !strings.Contains(out.String(), "exceeds 16 MiB") {
				t.Errorf("the agent did not refuse the 100 MiB reply naming the limit (%v)", err)
			}
			if rss > 150 {
				t.Errorf("the agent peaked at %d MiB RSS, want at most 150", rss)
			}
		})
	}
	t.Run("prompt", func(t *testing.T) {
		cmd := exec.Command(wfbBin, "mock", "agent", "-p")
		cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=offline")
		cmd.Stdin = io.LimitReader(repeatA{}, 65<<20)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "the prompt on stdin exceeds 64 MiB") {
			t.Errorf("exit %d (%v): %.300s; want 2 naming the limit", code, err, out)
		}
	})
}

// repeatA reads as an endless run of the letter a.
type repeatA struct{}

func (repeatA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// claudeSessionRow runs wfb session (host-unsafe, the mock provider) with a
// fake Claude Code whose run is script (its --version is answered), and
// returns the one row it recorded.
func claudeSessionRow(t *testing.T, script string) store.Result {
	t.Helper()
	ws, db := sessionFixture(t)
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
`+script)
	s, out, errOut := testStreams("", nil)
	run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
		"--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", "60s", "--mock-script", writeScript(t, runOKScript)}, s)
	rows := storedRows(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows\n%s\n%s", len(rows), out, errOut)
	}
	return rows[0]
}
