package view

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestPagesShowToolUse stops the viewer from hiding whether an arm's tools
// were used: the run page has the report's tool-use table, an attempt page
// its tool calls by name, "not measured" for NULL (never 0), and a tool
// name an agent filled with escapes and markup shows as text.
func TestPagesShowToolUse(t *testing.T) {
	ctx := context.Background()
	f := &fixture{path: filepath.Join(t.TempDir(), "wfb.db")}
	db := f.openWritable(t)
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "r1", Kind: "run", StartedAt: start, Status: wfb.RunComplete, Harness: "test", Config: "{}"}); err != nil {
		t.Fatal(err)
	}
	three := int64(3)
	hostile := "mcp__x__y\x1b]52;c;aGk=\x07" + injection
	used := &store.Result{RunID: "r1", Task: "t", Arm: "with-mcp", Attempt: 1, StartedAt: start, OK: true, ProcessState: wfb.StateExited,
		ToolCalls: &three, ToolUses: []store.ToolUse{{Tool: "mcp__docs__search", Calls: 2}, {Tool: hostile, Calls: 1}}}
	unread := &store.Result{RunID: "r1", Task: "t", Arm: "with-mcp", Rep: 1, Attempt: 1, StartedAt: start, OK: false,
		ErrorKind: wfb.KindSessionError, ProcessState: wfb.StateExited}
	for _, r := range []*store.Result{used, unread} {
		if err := db.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ts := newTestServer(t, f, Options{})
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/run/r1", []string{"tool use per arm", "mcp__docs__search", "1/1", "not measured for 1 of 2 attempts"}},
		{"/attempt/" + used.AttemptID, []string{"Tool calls", "3 tool calls", "mcp__docs__search", "␛]52;c;aGk=␇&lt;script&gt;"}},
		{"/attempt/" + unread.AttemptID, []string{`<span class="null">not measured</span>`}},
	} {
		_, body := get(t, ts.Client(), ts.URL+c.path)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in the page", c.path, w)
			}
		}
		if strings.Contains(body, "<script>document") || strings.ContainsAny(body, "\x1b\x07") {
			t.Errorf("%s: the hostile tool name acts on the page", c.path)
		}
	}
}
