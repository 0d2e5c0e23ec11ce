package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// unwitnessedAgent is a fake Claude Code that prints a result with usage
// (2000/300/7000/1000, $0.0123) and asks no provider for it: the meter
// sees nothing.
func unwitnessedAgent(t *testing.T) string {
	t.Helper()
	return fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
cat >/dev/null
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"session_id":"s1","result":"done","total_cost_usd":0.0123,"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}}'
`)
}

// witnessSession runs wfb session with the unwitnessed agent, the mock
// provider and extra flags, and returns the exit code, stderr and the
// results file.
func witnessSession(t *testing.T, flags ...string) (code int, errOut, db string) {
	t.Helper()
	ws, db := sessionFixture(t)
	s, _, e := testStreams("", nil)
	code = run(context.Background(), append([]string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", unwitnessedAgent(t),
		"--sandbox", sandbox.HostUnsafe, "--db", db, "--timeout", "60s", "--mock-script", writeScript(t, runOKScript)}, flags...), s)
	return code, e.String(), db
}

// TestUnwitnessedUsageIsFlaggedInTheRowTheReportAndTheViewer stops usage
// an agent printed without making any request through the meter (it
// bypassed its base URL, or invented the figures) from passing as
// measured: the row says unwitnessed, wfb report counts it in a note, and
// the viewer's attempt page shows it.
func TestUnwitnessedUsageIsFlaggedInTheRowTheReportAndTheViewer(t *testing.T) {
	code, errOut, db := witnessSession(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := storedRows(t, db)[0]
	if !r.OK || r.UsageVerdict != wfb.VerdictUnwitnessed || r.UsageSource != wfb.UsageReported || r.InputTokens == nil || *r.InputTokens != 2000 ||
		!strings.HasPrefix(r.UsageCheck, "unwitnessed: the agent reported usage (input 2000, output 300, cache read 7000, cache write 1000, cost $0.0123) but no request reached the meter") {
		t.Fatalf("row ok %v verdict %q source %q input %v check %q", r.OK, r.UsageVerdict, r.UsageSource, r.InputTokens, r.UsageCheck)
	}
	out, errOut, code := runWFB(t, false, "report", "--db", db, "--format", "markdown")
	if code != 0 || !strings.Contains(out, "unwitnessed: 1 of 1 attempts reported usage but made no request through the meter") {
		t.Errorf("report (exit %d, %s) lacks the unwitnessed note:\n%s", code, errOut, out)
	}
	site := filepath.Join(t.TempDir(), "site")
	if _, errOut, code := runWFB(t, false, "view", "--db", db, "--export", site); code != 0 {
		t.Fatalf("view --export: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(site, "attempt", r.AttemptID+".html"))
	if err != nil || !strings.Contains(string(page), "Usage unwitnessed:") || !strings.Contains(string(page), "no request reached the meter") {
		t.Errorf("the attempt's page does not show the verdict (%v)", err)
	}
}

// TestARequiredWitnessRefusesTheSession: with --require-witness the same
// session is recorded failed (session-error, naming that no request
// reached the meter, its figures not recorded) and exits 1; with the meter
// off, requiring a witness is bad input, refused before anything is
// recorded.
func TestARequiredWitnessRefusesTheSession(t *testing.T) {
	code, errOut, db := witnessSession(t, "--require-witness")
	if code != exitFailed {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	r := storedRows(t, db)[0]
	if r.OK || r.ErrorKind != wfb.KindSessionError || !strings.Contains(r.ErrorDetail, "no request reached the meter") || r.InputTokens != nil {
		t.Errorf("row ok %v kind %q input %v: %s", r.OK, r.ErrorKind, r.InputTokens, r.ErrorDetail)
	}
	code, errOut, db = witnessSession(t, "--require-witness", "--meter=off")
	if code != exitBadInput || !strings.Contains(errOut, "--require-witness") || !strings.Contains(errOut, "--meter=off") {
		t.Errorf("--require-witness --meter=off: exit %d, %q; want 2 naming both", code, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		if n := countRows(db); n != 0 {
			t.Errorf("%d rows recorded for bad input", n)
		}
	}
}

// TestUsageRecordedWithTheMeterOffIsAgentReportedOnly stops a session run
// with --meter=off — whose figures may be a real CLI's zero-filled ones —
// from being reported without a word: wfb report notes it.
func TestUsageRecordedWithTheMeterOffIsAgentReportedOnly(t *testing.T) {
	code, errOut, db := witnessSession(t, "--meter=off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if r := storedRows(t, db)[0]; r.UsageVerdict != "" || r.UsageSource != wfb.UsageReported {
		t.Errorf("verdict %q source %q; want none, reported", r.UsageVerdict, r.UsageSource)
	}
	out, _, _ := runWFB(t, false, "report", "--db", db, "--format", "markdown")
	if !strings.Contains(out, "agent-reported only: 1 of 1 attempts' usage was not witnessed by the wire (meter off)") {
		t.Errorf("report lacks the agent-reported-only note:\n%s", out)
	}
}

// TestARunRequiresAWitnessPerArm: a bench arm with require_witness has
// its unwitnessed attempts refused, another arm's are recorded ok and
// flagged; with --meter=off the run is refused as bad input, naming the
// arm, before anything is recorded.
func TestARunRequiresAWitnessPerArm(t *testing.T) {
	agent := unwitnessedAgent(t)
	bench, db := runFixture(t, runOKScript, `sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms:
  - {id: strict, agent: claude, agent_bin: `+agent+`, require_witness: true}
  - {id: loose, agent: claude, agent_bin: `+agent+`}
`)
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db, "--format", "tsv"}, s); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, rows := resultsOf(t, db)
	byArm := map[string]store.Result{}
	for _, r := range rows {
		byArm[r.Arm] = r
	}
	if r := byArm["strict"]; r.OK || r.ErrorKind != wfb.KindSessionError || r.UsageVerdict != wfb.VerdictUnwitnessed {
		t.Errorf("strict: ok %v kind %q verdict %q: %s", r.OK, r.ErrorKind, r.UsageVerdict, r.ErrorDetail)
	}
	if r := byArm["loose"]; !r.OK || r.UsageVerdict != wfb.VerdictUnwitnessed {
		t.Errorf("loose: ok %v verdict %q: %s", r.OK, r.UsageVerdict, r.ErrorDetail)
	}
	off := filepath.Join(t.TempDir(), "off.db")
	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", off, "--meter=off"}, s); code != exitBadInput || !strings.Contains(errOut.String(), "arm strict's require_witness") {
		t.Errorf("--meter=off: exit %d, %q; want 2 naming arm strict's require_witness", code, errOut)
	}
	if n := countRows(off); n > 0 {
		t.Errorf("%d rows recorded for a refused run", n)
	}
	s, _, errOut = testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", off, "--meter=off", "--require-witness", "--arms", "loose"}, s); code != exitBadInput || !strings.Contains(errOut.String(), "--require-witness") {
		t.Errorf("--require-witness --meter=off: exit %d, %q; want 2", code, errOut)
	}
}
