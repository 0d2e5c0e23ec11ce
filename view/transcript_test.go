package view

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
