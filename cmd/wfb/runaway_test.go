package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/store"
)

// TestARunawayAgentIsStoppedAtItsRequestCap stops the runaway: a
// mock script whose default reply calls a tool made the real Claude Code
// send ~1,400 requests per cell in 300 s, stopped only by the timeout
// (default 10 min), and the report showed $48.76 of priced usage. Loading
// such a bench for a real agent without max_turns warns; a session past
// its request cap is refused further requests and stopped, recorded with
// its own kind (runaway), its requests on the wire capped.
func TestARunawayAgentIsStoppedAtItsRequestCap(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("/usr/bin/python3 plays the runaway agent; not installed")
	}
	// An agent that answers every tool call with another request, forever.
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
exec `+python+` -c '
import os, urllib.request
url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
while True:
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b"{\"model\":\"m\",\"messages\":[]}", headers={"content-type": "application/json"})).read()
    except Exception:
        pass
'
`)
	script := `default:
  tools: [{name: Bash, input: {command: "ls"}}]
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`
	bench, db := runFixture(t, script, fmt.Sprintf(`sandbox: host-unsafe
timeout: 120s
max_requests: 5
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: loop, agent: claude, agent_bin: %s}]
`, agent))
	s, _, errOut := testStreams("", nil)
	run(context.Background(), []string{"run", bench, "--db", db}, s)
	if !strings.Contains(errOut.String(), "warning: arm loop (claude, no max_turns) on task t1") {
		t.Errorf("no warning of the runaway risk:\n%s", errOut)
	}
	_, rows := resultsOf(t, db)
	if len(rows) != 1 {
		t.Fatalf("%d rows\n%s", len(rows), errOut)
	}
	r := rows[0]
	if r.ErrorKind != wfb.KindRunaway || !strings.Contains(r.ErrorDetail, "cap of 5 requests") {
		t.Errorf("row %s: %s; want runaway naming the cap", r.ErrorKind, r.ErrorDetail)
	}
	d, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	reqs, err := d.Requests(context.Background(), r.AttemptID)
	if err != nil {
		t.Fatal(err)
	}
	// The first five reached the provider; every later one was refused
	// (or cut short as the session was stopped), none forwarded.
	forwarded, refused := 0, 0
	for _, q := range reqs {
		switch {
		case q.Seq <= 5 && q.ProxyError == "" && q.Status != nil && *q.Status == 200:
			forwarded++
		case q.Seq > 5 && q.ProxyError == meter.ErrRequestCap:
			refused++
		case q.Seq > 5:
			t.Errorf("request %d past the cap: proxy error %q", q.Seq, q.ProxyError)
		}
	}
	if forwarded != 5 || refused == 0 {
		t.Errorf("%d requests on the wire, %d forwarded, %d refused; want 5 forwarded and the rest refused", len(reqs), forwarded, refused)
	}
}
