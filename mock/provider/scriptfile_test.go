package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/internal/testkit/golden"
)

// TestLoadScriptReportsEveryProblemAtOnceWithFileLineAndField stops a script
// loader that gives up at the first problem (one edit-run cycle per typo) or
// that says what is wrong without saying where.
func TestLoadScriptReportsEveryProblemAtOnceWithFileLineAndField(t *testing.T) {
	path := filepath.Join("testdata", "provider", "bad-script.yaml")
	_, err := LoadScript(path)
	if err == nil {
		t.Fatal("LoadScript accepted a script with several problems")
	}
	var serr *ScriptError
	if !errors.As(err, &serr) {
		t.Fatalf("error is %T, want *ScriptError: %v", err, err)
	}
	got := err.Error() + "\n"
	golden.Check(t, filepath.Join("testdata", "provider", "bad-script.golden"), []byte(got))
	for _, p := range serr.Problems {
		if p.File != path || p.Line == 0 || p.Field == "" {
			t.Errorf("problem %q does not name the file, line and field", p)
		}
	}
}

// TestParseScriptRejects stops each validation rule from silently lapsing:
// every case is a script a careless author could write, and the error must
// say exactly where and what.
func TestParseScriptRejects(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "cut_cleanly without a cut",
			src:  "default:\n  text: hi\n  cut_cleanly: true\n",
			want: []string{"s.yaml:3:16: default.cut_cleanly: needs cut_after_events > 0 (it says how a cut stream ends)"},
		},
		{
			name: "status out of range",
			src:  "replies:\n  - text: hi\n  - status: 42\n",
			want: []string{"s.yaml:3:13: replies[1].status: must be an HTTP status 100-599, got 42"},
		},
		{
			name: "status as a string",
			src:  "default:\n  status: \"529\"\n",
			want: []string{`s.yaml:2:11: default.status: must be an integer, got string "529"`},
		},
		{
			name: "error without a status",
			src:  "default:\n  error: {type: overloaded_error}\n",
			want: []string{"s.yaml:2:11: default.error: needs a non-2xx status (e.g. status: 529); status is not set"},
		},
		{
			name: "error with a 2xx status",
			src:  "default:\n  status: 200\n  error: {type: overloaded_error}\n",
			want: []string{"s.yaml:3:11: default.error: needs a non-2xx status (e.g. status: 529); status is 200"},
		},
		{
			name: "error that is not an object",
			src:  "default:\n  status: 529\n  error: overloaded\n",
			want: []string{`s.yaml:3:10: default.error: must be an error object, e.g. {type: overloaded_error, message: Overloaded}, got string "overloaded"`},
		},
		{
			name: "text with an error status",
			src:  "default:\n  status: 529\n  text: sorry\n",
			want: []string{"s.yaml:3:9: default.text: is not served with error status 529 (an error reply has only the error object)"},
		},
		{
			name: "negative delay and cut",
			src:  "default:\n  delay_ms: -1\n  cut_after_events: -2\n",
			want: []string{
				"s.yaml:2:13: default.delay_ms: must be >= 0, got -1",
				"s.yaml:3:21: default.cut_after_events: must be >= 0, got -2",
			},
		},
		{
			name: "hang that is not a bool",
			src:  "default:\n  hang: yes\n",
			want: []string{`s.yaml:2:9: default.hang: must be true or false, got string "yes"`},
		},
		{
			name: "cut with hang",
			src:  "default:\n  hang: true\n  cut_after_events: 2\n",
			want: []string{"s.yaml:3:21: default.cut_after_events: has no effect with hang: true (a hung reply sends no events)"},
		},
		{
			name: "tool without a name, with an empty name, with a list input",
			src:  "default:\n  tools:\n    - input: {a: 1}\n    - name: \"\"\n    - name: Write\n      input: [1, 2]\n",
			want: []string{
				"s.yaml:3:7: default.tools[0].name: is required (the tool to call, e.g. Write)",
				"s.yaml:4:13: default.tools[1].name: must not be empty",
				"s.yaml:6:14: default.tools[2].input: must be an object (the tool's arguments), got a list",
			},
		},
		{
			name: "unknown fields at every level",
			src:  "reply:\n  text: x\ndefault:\n  txt: x\n  tools:\n    - name: Read\n      args: {}\n  usage:\n    input_token: 3\n",
			want: []string{
				"s.yaml:1:1: reply: unknown field (a script has: replies, default)",
				"s.yaml:4:3: default.txt: unknown field (a reply has: text, tools, stop_reason, usage, reasoning_tokens, status, error, retry_after_ms, delay_ms, hang, cut_after_events, cut_cleanly, match)",
				"s.yaml:7:7: default.tools[0].args: unknown field (a tool has: name, input)",
				"s.yaml:9:5: default.usage.input_token: unknown usage field (usage has: input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens)",
			},
		},
		{
			name: "duplicate field",
			src:  "default:\n  text: a\n  text: b\n",
			want: []string{`s.yaml:3:3: YAML syntax: mapping key "text" already defined at [2:3]`},
		},
		{
			name: "replies not a list",
			src:  "replies: {text: a}\n",
			want: []string{"s.yaml:1:11: replies: must be a list of replies, got a mapping"},
		},
		{
			name: "script not a mapping",
			src:  "- text: a\n",
			want: []string{"s.yaml:1:1: must be a mapping, got a list"},
		},
		{
			name: "alias to no anchor",
			src:  "default: *missing\n",
			want: []string{"s.yaml:1:10: default: alias *missing names no anchor defined before it"},
		},
		{
			name: "usage value JSON cannot carry",
			src:  "default:\n  usage: {input_tokens: .inf}\n",
			want: []string{"s.yaml:2:25: default.usage.input_tokens: .inf cannot be sent as JSON"},
		},
		{
			name: "reasoning tokens with an error status",
			src:  "default:\n  status: 529\n  reasoning_tokens: 80\n",
			want: []string{"s.yaml:3:21: default.reasoning_tokens: is not served with error status 529 (an error reply has only the error object)"},
		},
		{
			name: "reasoning tokens JSON cannot carry",
			src:  "default:\n  reasoning_tokens: .nan\n",
			want: []string{"s.yaml:2:21: default.reasoning_tokens: .nan cannot be sent as JSON"},
		},
		{
			name: "YAML syntax error",
			src:  "default: [\n",
			want: []string{"s.yaml:1:10: YAML syntax: sequence end token ']' not found"},
		},
		{
			name: "two documents",
			src:  "default: {text: a}\n---\ndefault: {text: b}\n",
			want: []string{"s.yaml:3:1: a script is one YAML document; found another"},
		},
		{
			name: "JSON with a bad field",
			src:  `{"replies": [{"text": "a", "statuss": 529}]}`,
			want: []string{"s.yaml:1:28: replies[0].statuss: unknown field (a reply has: text, tools, stop_reason, usage, reasoning_tokens, status, error, retry_after_ms, delay_ms, hang, cut_after_events, cut_cleanly, match)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseScript("s.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("ParseScript accepted it: %+v", s)
			}
			var serr *ScriptError
			if !errors.As(err, &serr) {
				t.Fatalf("error is %T, want *ScriptError: %v", err, err)
			}
			var got []string
			for _, p := range serr.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseScriptKeepsUsageValuesVerbatim stops the loader from "fixing"
// nonsense usage: a -5, a true, a "1200", a float must reach the wire as
// written, and a null must become an absent field, or the consumers'
// refusals could never be tested (the seed's zero-filling bug).
func TestParseScriptKeepsUsageValuesVerbatim(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Script
	}{
		{
			name: "empty file serves the built-in default",
			src:  "",
			want: Script{},
		},
		{
			name: "nonsense values kept, null dropped",
			src: "default:\n  usage:\n    input_tokens: -5\n    output_tokens: true\n" +
				"    cache_read_input_tokens: \"1200\"\n    cache_creation_input_tokens: null\n",
			want: Script{Default: &Reply{Usage: Usage{
				"input_tokens":            int64(-5),
				"output_tokens":           true,
				"cache_read_input_tokens": "1200",
			}}},
		},
		{
			name: "reasoning tokens kept verbatim, null dropped",
			src: "replies:\n  - reasoning_tokens: 80\n  - reasoning_tokens: -5\n  - reasoning_tokens: \"80\"\n" +
				"  - reasoning_tokens: 1.0\n  - reasoning_tokens: true\n  - reasoning_tokens: null\n",
			want: Script{Replies: []Reply{
				{ReasoningTokens: uint64(80)}, {ReasoningTokens: int64(-5)}, {ReasoningTokens: "80"},
				{ReasoningTokens: json.Number("1.0")}, {ReasoningTokens: true}, {},
			}},
		},
		{
			name: "floats keep their written form",
			src:  "default:\n  usage: {input_tokens: 1.5, output_tokens: 1.0}\n",
			want: Script{Default: &Reply{Usage: Usage{
				"input_tokens":  json.Number("1.5"),
				"output_tokens": json.Number("1.0"),
			}}},
		},
		{
			name: "a full reply",
			src: "replies:\n  - text: reviewing\n    tools:\n      - name: Write\n" +
				"        input: {file_path: /tmp/a.json, content: \"{}\", mode: 420}\n" +
				"    stop_reason: max_tokens\n    delay_ms: 5\n    cut_after_events: 3\n" +
				"  - status: 529\n    error: {type: overloaded_error, message: Overloaded}\n" +
				"  - hang: true\n",
			want: Script{Replies: []Reply{
				{
					Text: "reviewing",
					Tools: []Tool{{Name: "Write", Input: map[string]any{
						"file_path": "/tmp/a.json", "content": "{}", "mode": uint64(420),
					}}},
					StopReason:     "max_tokens",
					DelayMS:        5,
					CutAfterEvents: 3,
				},
				{Status: 529, Error: json.RawMessage(`{"message":"Overloaded","type":"overloaded_error"}`)},
				{Hang: true},
			}},
		},
		{
			name: "JSON is YAML",
			src:  `{"replies": [{"text": "a", "tools": [{"name": "Read", "input": {"file_path": "x"}}]}], "default": {"status": 500}}`,
			want: Script{
				Replies: []Reply{{Text: "a", Tools: []Tool{{Name: "Read", Input: map[string]any{"file_path": "x"}}}}},
				Default: &Reply{Status: 500},
			},
		},
		{
			name: "anchors and aliases",
			src:  "replies:\n  - &slow {text: a, delay_ms: 7}\n  - *slow\n",
			want: Script{Replies: []Reply{{Text: "a", DelayMS: 7}, {Text: "a", DelayMS: 7}}},
		},
		{
			name: "a tool without input gets an empty object",
			src:  "default:\n  tools: [{name: Bash}]\n",
			want: Script{Default: &Reply{Tools: []Tool{{Name: "Bash", Input: map[string]any{}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript("s.yaml", []byte(tt.src))
			if err != nil {
				t.Fatalf("ParseScript: %v", err)
			}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("script (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadScriptNamesAMissingFile stops a bare "no such file" with no path.
func TestLoadScriptNamesAMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadScript(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("LoadScript(%q) = %v, want an error naming the path", path, err)
	}
}

// TestScriptReasoningTokensReachTheResponsesWireVerbatim stops a script's
// reasoning_tokens from being dropped, "fixed" or leaked: the Responses API
// must serve it as written in output_tokens_details (absent when null), so
// that a consumer's handling of reasoning tokens can be tested from a
// script file, and the Messages API, which has no such field, must not.
func TestScriptReasoningTokensReachTheResponsesWireVerbatim(t *testing.T) {
	tests := []struct {
		yaml string // the reply's reasoning_tokens line
		want string // the Responses usage object
	}{
		{"reasoning_tokens: 80", `{"output_tokens":120,"output_tokens_details":{"reasoning_tokens":80}}`},
		{"reasoning_tokens: 0", `{"output_tokens":120,"output_tokens_details":{"reasoning_tokens":0}}`},
		{"reasoning_tokens: -5", `{"output_tokens":120,"output_tokens_details":{"reasoning_tokens":-5}}`},
		{`reasoning_tokens: "80"`, `{"output_tokens":120,"output_tokens_details":{"reasoning_tokens":"80"}}`},
		{"reasoning_tokens: 1.0", `{"output_tokens":120,"output_tokens_details":{"reasoning_tokens":1.0}}`},
		{"reasoning_tokens: null", `{"output_tokens":120}`},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			script, err := ParseScript("s.yaml", []byte("default:\n  text: thought\n  usage: {output_tokens: 120}\n  "+tt.yaml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			p := startProvider(t, script)
			_, body := post(t, p.URL()+"/v1/responses", respBody(false), nil)
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if diff := cmp.Diff(tt.want, respJSON(t, obj["usage"])); diff != "" {
				t.Errorf("responses usage (-want +got):\n%s", diff)
			}
			resp, body := post(t, p.URL()+"/v1/messages", map[string]any{
				"model": "m", "max_tokens": 10, "messages": []any{map[string]any{"role": "user", "content": "hi"}},
			}, nil)
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte("thought")) || bytes.Contains(body, []byte("reasoning")) {
				t.Errorf("the Messages API: status %d, body %s; want 200 with the text and no reasoning tokens", resp.StatusCode, body)
			}
		})
	}
}
