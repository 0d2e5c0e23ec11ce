package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// One script serves every review cell of a bench: the artifact path of each
// session comes from the prompt the harness sent, not from the script. This
// stops a shared script from writing every cell's review to one path (the
// later cells would then find an artifact that is not theirs, or none).
func TestReviewOutputPlaceholderIsTheArtifactPathOfEachRequest(t *testing.T) {
	script := &Script{Default: &Reply{Tools: []Tool{{Name: "Write", Input: map[string]any{
		"file_path": ReviewOutputPlaceholder,
		"content":   "{}",
		"nested":    []any{"at " + ReviewOutputPlaceholder},
	}}}}}
	p, err := Start(script)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	tests := []struct {
		name   string
		prompt any
		want   map[string]any
	}{
		{
			name:   "prompt as a string",
			prompt: "review the change\n\nWrite your review as JSON to /tmp/cell-1/artifacts/review-output.json (schema_version 1, verdict, findings).",
			want:   map[string]any{"file_path": "/tmp/cell-1/artifacts/review-output.json", "content": "{}", "nested": []any{"at /tmp/cell-1/artifacts/review-output.json"}},
		},
		{
			name:   "prompt as text blocks, path at the end",
			prompt: []any{map[string]any{"type": "text", "text": "Write your review as JSON to /tmp/cell-2/review-output.json"}},
			want:   map[string]any{"file_path": "/tmp/cell-2/review-output.json", "content": "{}", "nested": []any{"at /tmp/cell-2/review-output.json"}},
		},
		{
			// Left as written, so the mistake shows in the tool call.
			name:   "no path in the request",
			prompt: "fix the bug",
			want:   map[string]any{"file_path": ReviewOutputPlaceholder, "content": "{}", "nested": []any{"at " + ReviewOutputPlaceholder}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{
				"model": "m", "max_tokens": 10,
				"messages": []any{map[string]any{"role": "user", "content": tt.prompt}},
			})
			resp, err := http.Post(p.URL()+"/v1/messages", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var msg struct {
				Content []struct {
					Type  string         `json:"type"`
					Input map[string]any `json:"input"`
				} `json:"content"`
			}
			if err := json.Unmarshal(raw, &msg); err != nil {
				t.Fatalf("response %s: %v", raw, err)
			}
			var got map[string]any
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					got = b.Input
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tool input (-want +got):\n%s", diff)
			}
		})
	}
	// The script itself is shared by every request and must not change.
	if got := script.Default.Tools[0].Input["file_path"]; got != ReviewOutputPlaceholder {
		t.Errorf("the script was modified: file_path is now %v", got)
	}
}
