package provider

import (
	"testing"

	"github.com/wfbench/wfb/internal/strictyaml"
)

// FuzzParseScript feeds the mock script loader any bytes. It must never
// panic, and must refuse only with a *ScriptError whose every problem
// names the file.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte("default: {text: hi, usage: {input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}}\n"))
	f.Add([]byte("replies:\n  - status: 529\n    error: {type: overloaded_error, message: busy}\n  - text: &a x\n    tools: [{name: Write, input: {file_path: '{{review_output}}', content: *a}}]\n"))
	f.Add([]byte("replies: [{text: !!str 123, hang: true}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseScript("script.yaml", data); err != nil {
			if bad := strictyaml.CheckRefusal(err); bad != nil {
				t.Fatal(bad)
			}
		}
	})
}
