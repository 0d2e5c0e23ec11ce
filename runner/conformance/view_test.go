package conformance

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
	"github.com/wfbench/wfb/view"
)

// TestARealGeminiTranscriptReadsAsAConversation runs real Gemini CLI
// against the mock (a tool call, then a text answer) and opens the
// attempt in wfb view: its stream-json is a conversation — the prompt, the
// tool call with its input, the tool's result, the assistant's text (its
// deltas joined) and the result's usage — never a list of raw events.
// WFB_DUMP_TRANSCRIPT=FILE writes the session's raw output to FILE: that is
// how view/testdata/gemini-stream.jsonl was recorded.
func TestARealGeminiTranscriptReadsAsAConversation(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		if c.agent != bench.AgentGemini {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			c := require(t, c)
			replies := []provider.Reply{
				{Text: "Let me look around.", Tools: []provider.Tool{c.harmless}, Usage: provider.FullUsage(300, 20, 0, 0)},
				{Text: "Found source.ts <b>bold</b>; all done.", Usage: provider.FullUsage(400, 15, 0, 0)},
			}
			r := newRig(t, &provider.Script{Replies: replies})
			row := r.run(t, r.cell(c, func(cell *runner.Cell) { cell.Prompt = "Find the TypeScript files." }))
			requireOK(t, row)
			ctx := context.Background()
			if dump := os.Getenv("WFB_DUMP_TRANSCRIPT"); dump != "" {
				tr, err := r.db.Transcript(ctx, row.AttemptID)
				if err != nil {
					t.Fatal(err)
				}
				raw, err := tr.Kept()
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(dump, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			db, err := store.OpenReadOnly(ctx, r.dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			srv, err := view.New(ctx, db, view.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			resp, err := ts.Client().Get(ts.URL + "/attempt/" + row.AttemptID)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page := string(b)
			for _, want := range []string{
				`<li class="turn prompt"><h3>prompt</h3><pre>Find the TypeScript files.`,
				`<li class="turn tool-call"><h3>tool call: glob</h3>`, `&#34;pattern&#34;: &#34;*.ts&#34;`,
				`<li class="turn tool-result"><h3>tool result: glob (success)</h3>`,
				`<li class="turn assistant"><h3>assistant</h3><pre>Let me look around.</pre>`,
				`<li class="turn assistant"><h3>assistant</h3><pre>Found source.ts &lt;b&gt;bold&lt;/b&gt;; all done.</pre>`,
				`<li class="turn result"><h3>result success</h3>`, "input 700",
			} {
				if !strings.Contains(page, want) {
					t.Errorf("the attempt page lacks %q", want)
				}
			}
			if strings.Contains(page, `<li class="turn event">`) {
				t.Errorf("some of Gemini's events were shown raw, not as a conversation")
			}
		})
	}
}
