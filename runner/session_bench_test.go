package runner

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/wfbench/wfb/mock/provider"
)

// BenchmarkSessionEndToEnd is one offline session through the whole path:
// the mock provider over HTTP, the stand-in agent as a real process, the
// strict parse, and a row written to a real SQLite file.
func BenchmarkSessionEndToEnd(b *testing.B) {
	r := newRig(b)
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "ok", Usage: provider.FullUsage(2000, 300, 7000, 1000)}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	spec := r.spec(b, p)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		row, err := RecordSession(context.Background(), r.db, spec)
		if err != nil || !row.OK {
			b.Fatalf("session: %v %s %s", err, row.ErrorKind, row.ErrorDetail)
		}
	}
}

// BenchmarkStandInAgentAlone is the same agent process against the same
// provider with no runner and no store: the reference for the runner's
// own overhead.
func BenchmarkStandInAgentAlone(b *testing.B) {
	p, err := provider.Start(&provider.Script{Default: &provider.Reply{Text: "ok", Usage: provider.FullUsage(2000, 300, 7000, 1000)}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	bin := testBinary(b)
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "mock", "agent", "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence")
		cmd.Dir = dir
		cmd.Env = []string{"WFB_TEST_AGENT=1", "ANTHROPIC_BASE_URL=" + p.URL(), "ANTHROPIC_API_KEY=offline", "PATH=/usr/bin:/bin"}
		cmd.Stdin = strings.NewReader("review the change")
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"type":"result"`) {
			b.Fatalf("agent: %v\n%s", err, out)
		}
	}
}
