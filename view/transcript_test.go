package view

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// Gemini CLI's stream-json, as a real session printed it (recorded from
// TestARealGeminiTranscriptReadsAsAConversation in runner/conformance,
// Gemini CLI 0.61.0 against the mock provider):
// the assistant's deltas joined into one turn each, the tool call with
// its input, its result named by the call, the usage from the result's
// stats.
func TestAGeminiTranscriptReadsAsAConversation(t *testing.T) {
	b, err := os.ReadFile("testdata/gemini-stream.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []turn
	for _, tr := range parseTranscript(b) {
		tr.JSON = strings.Join(strings.Fields(tr.JSON), " ")
		if tr.Kind == "system" {
			tr.JSON = "" // the init event, shown whole
		}
		got = append(got, tr)
	}
	want := []turn{
		{Kind: "system", Title: "init gemini-2.5-pro"},
		{Kind: "prompt", Title: "user", Text: "Find the TypeScript files."},
		{Kind: "assistant", Title: "assistant", Text: "Let me look around."},
		{Kind: "tool-call", Title: "tool call: glob", JSON: `{ "pattern": "*.ts" }`},
		{Kind: "tool-result", Title: "tool result: glob (success)", Text: "Found 1 matching file(s)"},
		{Kind: "assistant", Title: "assistant", Text: "Found source.ts <b>bold</b>; all done."},
		{Kind: "result", Title: "result success", Usage: "input 700 · cached 0 · output 35 · total 735 · tool_calls 1 · duration_ms 383"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// A failed Gemini tool call and a failed session (the shapes its
// stream-json ends with on an API error) are marked as errors, with the
// error's type and message.
func TestAGeminiTranscriptMarksItsErrors(t *testing.T) {
	in := `{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"false"}}
{"type":"tool_result","tool_id":"t1","status":"error","output":"","error":{"type":"execution_failed","message":"exit 1"}}
{"type":"result","status":"error","error":{"type":"API_ERROR","message":"529 overloaded"},"stats":{"input_tokens":10}}
`
	got := parseTranscript([]byte(in))
	if len(got) != 3 {
		t.Fatalf("%d turns: %+v", len(got), got)
	}
	if r := got[1]; !r.Error || r.Title != "tool result: run_shell_command (error)" || r.Text != "execution_failed: exit 1" {
		t.Errorf("tool result %+v", r)
	}
	if r := got[2]; !r.Error || r.Title != "result error" || r.Text != "API_ERROR: 529 overloaded" || r.Usage != "input 10" {
		t.Errorf("result %+v", r)
	}
}

// TestAHugeTranscriptLineIsShownBounded stops a 15 MB transcript line from
// rendering a 35 MB page (318 MB of the viewer's memory): the page shows
// the first 64 KiB of a line, saying how much more there was, reads the
// lines after it as usual, and stops after about 4 MiB of text, saying how
// much of the transcript it left out.
func TestAHugeTranscriptLineIsShownBounded(t *testing.T) {
	huge := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", 15<<20) + `"}]}}`
	tr := strings.Replace(claudeTranscript("hello"), "\n", "\n"+huge+"\n", 1)
	f := newFixture(t)
	db := f.openWritable(t)
	r := &store.Result{RunID: f.runA, Task: "t9", Arm: "a", Attempt: 1, StartedAt: time.Now(), OK: true,
		ProcessState: wfb.StateExited, Transcript: compressed(t, tr)}
	if err := db.InsertResult(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ts := newTestServer(t, f, Options{})
	resp, body := get(t, ts.Client(), ts.URL+"/attempt/"+r.AttemptID)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, wfb.Clip(body, 300))
	}
	if len(body) > 256<<10 {
		t.Errorf("the page is %d bytes; want at most about the 64 KiB shown of the line", len(body))
	}
	for _, want := range []string{fmt.Sprintf("a line of %d bytes", len(huge)), fmt.Sprintf("%d bytes more of this line not shown", len(huge)-maxLineShown), "tool call: Bash", "Fixed it."} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q", want)
		}
	}

	// Many ordinary lines: the page stops after about maxPageShown.
	line := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("y", 60<<10) + `"}]}}` + "\n"
	turns := parseTranscript([]byte(strings.Repeat(line, 200)))
	text := 0
	for _, tn := range turns {
		text += len(tn.Text) + len(tn.JSON)
	}
	last := turns[len(turns)-1]
	if text > maxPageShown+2*maxLineShown || !strings.Contains(last.Text, "more bytes of the transcript") || !strings.Contains(last.Text, "lines) not shown") {
		t.Errorf("%d turns, %d bytes of text, the last %q", len(turns), text, wfb.Clip(last.Text, 200))
	}
}
