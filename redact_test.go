package wfb

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedact stops API keys, tokens and auth headers in free text (error
// details, agent output, configs) from being stored, without mangling
// measurements such as "input_tokens".
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"anthropic key bare", "key sk-ant-api03-abcDEF123456789_-xyz used", "key [REDACTED] used"},
		{"openai key", "sk-abcdefghijklmnop1234", "[REDACTED]"},
		{"openai project key", "using sk-proj-AbCdEfGhIjKlMnOp_123", "using [REDACTED]"},
		{"bearer", "sending Bearer abc.def-ghi_jkl~", "sending Bearer [REDACTED]"},
		{"authorization header line", "> Authorization: Bearer abc123\n> Host: x", "> Authorization: [REDACTED]\n> Host: x"},
		{"authorization json", `{"authorization":"Basic dXNlcjpwYXNz","x":1}`, `{"authorization":"[REDACTED]","x":1}`},
		{"x-api-key header", "x-api-key: abc123\naccept: */*", "x-api-key: [REDACTED]\naccept: */*"},
		{"x-api-key json", `{"x-api-key":"abc123","y":2}`, `{"x-api-key":"[REDACTED]","y":2}`},
		{"X-Api-Key json spaced", `{"X-Api-Key": "abc123"}`, `{"X-Api-Key": "[REDACTED]"}`},
		{"env assignment", "ANTHROPIC_API_KEY=offline PATH=/usr/bin", "ANTHROPIC_API_KEY=[REDACTED] PATH=/usr/bin"},
		{"token env", "GITHUB_TOKEN=ghp_123 next", "GITHUB_TOKEN=[REDACTED] next"},
		{"bare api_key", `API_KEY=abc {"api_key": "def"}`, `API_KEY=[REDACTED] {"api_key": "[REDACTED]"}`},
		{"secret env quoted", `AWS_SECRET="a b c"`, `AWS_SECRET="[REDACTED]"`},
		{"password", "DB_PASSWORD=hunter2;", "DB_PASSWORD=[REDACTED];"},
		{"json env", `{"env":{"OPENAI_API_KEY": "abc", "HOME":"/root"}}`, `{"env":{"OPENAI_API_KEY": "[REDACTED]", "HOME":"/root"}}`},
		{"json in a json string", `{"msg":"{\"ANTHROPIC_API_KEY\":\"abc\"}"}`, `{"msg":"{\"ANTHROPIC_API_KEY\":\"[REDACTED]\"}"}`},
		{"stderr line", "Error: 401 invalid x-api-key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA", "Error: 401 invalid x-api-key [REDACTED]"},
		{"python dict", `{'ANTHROPIC_API_KEY': 'abc'}`, `{'ANTHROPIC_API_KEY': '[REDACTED]'}`},
		{"url userinfo", "POST https://user:s3cret@proxy.example/v1/messages failed", "POST https://[REDACTED]@proxy.example/v1/messages failed"},
		{"url key as user", `{"base_url":"http://abc123@127.0.0.1:8080"}`, `{"base_url":"http://[REDACTED]@127.0.0.1:8080"}`},
		{"url without userinfo untouched", "https://api.example/v1?q=a@b", "https://api.example/v1?q=a@b"},
		{"email untouched", "mail ops@example.com", "mail ops@example.com"},
		// Measurements that merely contain "token" stay.
		{"usage untouched", `{"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000}}`,
			`{"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000}}`},
		{"max_tokens untouched", "max_tokens=4096", "max_tokens=4096"},
		// Names in any case and spacing (the single-scan pre-check folds case
		// and skips an escaped quote and spaces before the separator), and
		// Unicode letters (?i) folds to ASCII: K (Kelvin sign) and ſ (long s).
		{"escaped quote spaced mixed case", `{\"My_Api_Key\"  : \"abc\"}`, `{\"My_Api_Key\"  : \"[REDACTED]\"}`},
		{"kelvin sign in name", "API_\u212aEY=abc123 x", "API_\u212aEY=[REDACTED] x"},
		{"long s in name", "DB_PA\u017f\u017fWORD=hunter22 x", "DB_PA\u017f\u017fWORD=[REDACTED] x"},
		{"token suffix then separator far away untouched", "input_tokens are counted; ratio=3", "input_tokens are counted; ratio=3"},
		{"google key bare", "key=AIzaSyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU_v in config", "key=[REDACTED] in config"},
		{"github classic token bare", "remote https://ghp_0123456789abcdefABCDEF0123456789abcd.example", "remote https://[REDACTED].example"},
		{"github fine-grained token bare", "token github_pat_11ABCDEFG0abcdefghij_KLMNOPQRSTUVWXYZ0123456789 used", "token [REDACTED] used"},
		{"github app token", "ghs_abcdefghijklmnopqrstuvwx", "[REDACTED]"},
		{"short gh word untouched", "ghp_x and AIza", "ghp_x and AIza"},
		{"short sk- word untouched", "task sk-learn", "task sk-learn"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Redact(%q) (-want +got):\n%s", tc.in, diff)
			}
			// Redacting twice (runner, then store) changes nothing more.
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

// TestRedactJSONKeepsADocumentJSON stops redaction from breaking the JSON
// it redacts: Redact over {"X-Api-Key":["k"]} stopped at the bracket,
// leaving {"X-Api-Key":[REDACTED]"k"]} — not JSON, so a merge refused the
// source, and the key still there.
func TestRedactJSONKeepsADocumentJSON(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
	for _, tc := range []struct{ in, want string }{
		{`{"X-Api-Key":["k-0123456789"]}`, `{"X-Api-Key":["[REDACTED]"]}`},
		{`{"Authorization":["Bearer abc","Basic xyz"],"Accept":["*/*"]}`, `{"Authorization":["[REDACTED]","[REDACTED]"],"Accept":["*/*"]}`},
		{`{"env":{"ANTHROPIC_API_KEY":12345678,"HOME":"/h"}}`, `{"env":{"ANTHROPIC_API_KEY":"[REDACTED]","HOME":"/h"}}`},
		{`[{"note":"said ` + key + `"}, 1.5e3, true, null]`, `[{"note":"said [REDACTED]"},1.5e3,true,null]`},
		{`{"a<b":"x&y", "input_tokens": 12, "max_tokens": [1, 2]}`, `{"a<b":"x&y", "input_tokens": 12, "max_tokens": [1, 2]}`}, // unchanged: byte for byte
	} {
		got, ok := RedactJSON(tc.in)
		if !ok || got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("RedactJSON(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`{"a":`, `{} {}`, `not json`} {
		if _, ok := RedactJSON(in); ok {
			t.Errorf("RedactJSON(%s) took it for a document", in)
		}
	}
}
