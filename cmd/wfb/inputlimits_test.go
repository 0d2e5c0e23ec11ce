package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
	wfb := buildWFB(t)
	const maxRSSMiB, maxDetail = 100, 16 << 10
	cases := []struct {
		name            string
		results, errors int
		wantIn          string
	}{
		{"60 result events of 4 MiB", 60, 0, "60 result events"},
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
			code, stderr, rss := execWFB(t, wfb, "run", bench, "--db", db)
			t.Logf("exit %d, peak RSS %d MiB\n%s", code, rss, stderr)
			rows := storedRows(t, db)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1 (exit %d)\n%s", len(rows), code, stderr)
			}
			r := rows[0]
			if r.OK || r.ErrorKind != store.KindSessionError || !strings.Contains(r.ErrorDetail, c.wantIn) {
				t.Errorf("row %s: %.300s; want a session-error naming %q", r.ErrorKind, r.ErrorDetail, c.wantIn)
			}
			if len(r.ErrorDetail) > maxDetail {
				t.Errorf("error_detail holds %d bytes, want at most %d", len(r.ErrorDetail), maxDetail)
			}
			if len(r.ResultEvent) > store.MaxEvidenceBytes+100 {
				t.Errorf("result_event holds %d bytes, want at most the evidence bound %d", len(r.ResultEvent), store.MaxEvidenceBytes)
			}
			if rss > maxRSSMiB {
				t.Errorf("wfb peaked at %d MiB RSS, want at most %d: it kept the agent's output", rss, maxRSSMiB)
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
	ws, db := sessionFixture(t)
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
printf '{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s","errors":['
yes '"x",' | head -n 999999 | tr -d '\n'
echo '"x"]}'
`)
	s, out, errOut := testStreams("", nil)
	run(context.Background(), []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
		"--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", "60s", "--mock-script", writeScript(t, runOKScript)}, s)
	rows := storedRows(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows\n%s\n%s", len(rows), out, errOut)
	}
	r := rows[0]
	if r.OK || !strings.Contains(r.ErrorDetail, "(999980 more)") {
		t.Errorf("row %s: %.300s; want a failure naming the 999980 errors left out", r.ErrorKind, r.ErrorDetail)
	}
	if len(r.ErrorDetail) > 16<<10 {
		t.Errorf("error_detail holds %d bytes, want at most %d", len(r.ErrorDetail), 16<<10)
	}
}
