package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFindSymbolFindsDefinitionsNotUses stops find_symbol from answering
// with every line that mentions the name: a model fixing a bug asks where it
// is defined, and calls and comments are noise.
func TestFindSymbolFindsDefinitionsNotUses(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"sum.js":                    "// sum adds\nexport function sum(a, b) {\n  return a - b;\n}\nconsole.log(sum(1, 2));\n",
		"lib/arrow.ts":              "export const sum = (a: number, b: number) => a + b;\nconst summary = 1;\n",
		"calc.py":                   "class Sum:\n    pass\n\ndef sum(xs):\n    return 0\n\nprint(sum([1]))\n",
		"calc.go":                   "package calc\n\nfunc (c *Calc) sum(a, b int) int { return a + b }\nfunc sumAll() {}\n",
		"node_modules/dep/index.js": "function sum() {}\n",
		".git/x.js":                 "function sum() {}\n",
		"bin.dat":                   "function sum() {}\x00",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		want string
	}{
		{"sum", "calc.go:3: func (c *Calc) sum(a, b int) int { return a + b }\ncalc.py:4: def sum(xs):\nlib/arrow.ts:1: export const sum = (a: number, b: number) => a + b;\nsum.js:2: export function sum(a, b) {"},
		{"Sum", "calc.py:1: class Sum:"},
		{"product", "no definition of product found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findSymbol(t.Context(), dir, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("find_symbol %s (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	if _, err := findSymbol(t.Context(), dir, "a.*"); err == nil {
		t.Error("a name that is not an identifier was searched, want an error")
	}
}

// TestServerSpeaksMCPOverStdio runs Main on pipes and talks to it with the
// SDK's client: the tools are listed with their schemas, a call answers, a
// bad call is a tool error, and --log records each call.
func TestServerSpeaksMCPOverStdio(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("sum.js", []byte("export function sum(a, b) {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"--log", logPath}, serverR, serverW, io.Discard, os.Getenv)
		serverW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if schema, _ := json.Marshal(tool.InputSchema); !strings.Contains(string(schema), `"required"`) {
			t.Errorf("%s's input schema has no required property: %s", tool.Name, schema)
		}
	}
	if diff := cmp.Diff([]string{"echo", "find_symbol"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	call := func(name string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if text, isErr := call("echo", map[string]any{"text": "hi"}); text != "Echo: hi" || isErr {
		t.Errorf("echo = %q, error %v; want Echo: hi", text, isErr)
	}
	if text, isErr := call("find_symbol", map[string]any{"name": "sum"}); text != "sum.js:1: export function sum(a, b) {" || isErr {
		t.Errorf("find_symbol = %q, error %v", text, isErr)
	}
	if text, isErr := call("find_symbol", map[string]any{"name": "no such"}); !isErr {
		t.Errorf("find_symbol of a non-identifier = %q, not a tool error", text)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("Main = %d after the client closed, want 0", code)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
			PID       int            `json:"pid"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.PID != os.Getpid() {
			t.Errorf("log line %q: %v, pid %d", line, err, rec.PID)
		}
		tools = append(tools, rec.Tool)
	}
	if diff := cmp.Diff([]string{"echo", "find_symbol", "find_symbol"}, tools); diff != "" {
		t.Errorf("logged calls (-want +got):\n%s", diff)
	}
}
