package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// serveLockedBuffer is a buffer the provider's handlers and the test share.
type serveLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *serveLockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *serveLockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func serveWriteScript(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMockServePrintsItsURLFirstAndExitsZeroWhenInterrupted stops a serve
// command that a script cannot drive: the URL must be the first line of
// stdout (scripts read it with `head -1`), requests must be served and
// logged without their keys, and an interrupt is the normal way to stop it,
// so it exits 0.
func TestMockServePrintsItsURLFirstAndExitsZeroWhenInterrupted(t *testing.T) {
	script := serveWriteScript(t, "replies.yaml", "replies:\n  - text: scripted\n    usage: {input_tokens: 7}\n")
	for _, via := range []string{"wfb mock serve", "newMockServeCmd"} {
		t.Run(via, func(t *testing.T) {
			pr, pw := io.Pipe()
			errOut := &serveLockedBuffer{}
			s := &Streams{In: strings.NewReader(""), Out: pw, ErrOut: errOut,
				Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			code := make(chan int, 1)
			go func() {
				defer pw.Close()
				if via == "newMockServeCmd" {
					cmd := newMockServeCmd(s)
					cmd.SetArgs([]string{"--script", script})
					cmd.SetOut(s.Out)
					cmd.SetErr(s.ErrOut)
					code <- exitCode(cmd.ExecuteContext(ctx))
					return
				}
				code <- run(ctx, []string{"mock", "serve", "--script", script, "--addr", "127.0.0.1:0"}, s)
			}()
			out := bufio.NewReader(pr)
			first, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("no first line on stdout: %v; stderr:\n%s", err, errOut)
			}
			url := strings.TrimSuffix(first, "\n")
			if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+$`).MatchString(url) {
				t.Fatalf("first line %q is not a loopback base URL", first)
			}
			rest := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(out)
				rest <- string(b)
			}()

			req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("X-Api-Key", "sk-ant-do-not-log-me")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var msg struct {
				Content []struct{ Text string }
				Usage   map[string]any
			}
			err = json.NewDecoder(resp.Body).Decode(&msg)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || len(msg.Content) != 1 || msg.Content[0].Text != "scripted" {
				t.Fatalf("reply: status %d, %+v, %v; want the scripted text", resp.StatusCode, msg, err)
			}
			if diff := cmp.Diff(map[string]any{"input_tokens": float64(7)}, msg.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}

			cancel()
			if got := <-code; got != exitOK {
				t.Errorf("exit code %d after cancel, want 0; stderr:\n%s", got, errOut)
			}
			if r := <-rest; r != "" {
				t.Errorf("stdout after the URL line: %q, want nothing", r)
			}
			log := errOut.String()
			if !strings.Contains(log, "POST /v1/messages 200") {
				t.Errorf("stderr lacks the request line:\n%s", log)
			}
			if strings.Contains(log, "do-not-log-me") {
				t.Errorf("the API key reached the log:\n%s", log)
			}
		})
	}
}

// TestMockServeRefusesBadInputWithExitTwo stops a bad script or a public
// address from starting a server (or failing as exit 1, which reads as a
// measured failure), and an error that does not say where the script is
// wrong.
func TestMockServeRefusesBadInputWithExitTwo(t *testing.T) {
	bad := serveWriteScript(t, "bad.yaml", "replies:\n  - status: 42\n    txt: hi\n")
	good := serveWriteScript(t, "good.yaml", "default: {text: ok}\n")
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"bad script", []string{"--script", bad}, []string{
			bad + ":2:13: replies[0].status: must be an HTTP status 100-599, got 42",
			bad + ":3:5: replies[0].txt: unknown field",
		}},
		{"missing script file", []string{"--script", bad + ".missing"}, []string{bad + ".missing"}},
		{"no script", nil, []string{"--script FILE is required"}},
		{"all interfaces", []string{"--script", good, "--addr", "0.0.0.0:0"}, []string{"not a loopback address"}},
		{"empty host", []string{"--script", good, "--addr", ":8080"}, []string{"not a loopback address"}},
		{"not host:port", []string{"--script", good, "--addr", "127.0.0.1"}, []string{"--addr"}},
		{"an argument", []string{"--script", good, "extra"}, []string{"takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, out, errOut := testStreams("", nil)
			code := run(context.Background(), append([]string{"mock", "serve"}, tt.args...), s)
			if code != exitBadInput {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitBadInput, errOut)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing (no URL for a server that did not start)", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}
