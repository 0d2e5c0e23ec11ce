package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/store"
)

// wfbProc is wfb (this test binary, see TestMain) running as a process of
// its own, its stdout read line by line.
type wfbProc struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stdout bytes.Buffer // what was read from out
	stderr *serveLockedBuffer
	done   chan struct{}
	err    error
}

// startWfb runs wfb with args and env (added to this process's).
func startWfb(t *testing.T, env []string, args ...string) *wfbProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asWfbEnv+"=1"), env...)
	p := &wfbProc{cmd: cmd, stderr: &serveLockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(pipe)
	t.Cleanup(func() {
		cmd.Process.Kill()
		p.wait()
	})
	return p
}

// line reads the next stdout line, failing the test at EOF.
func (p *wfbProc) line(t *testing.T) string {
	t.Helper()
	l, err := p.out.ReadString('\n')
	p.stdout.WriteString(l)
	if err != nil {
		t.Fatalf("wfb %s: no line on stdout (%v); stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), err, p.stderr)
	}
	return strings.TrimSuffix(l, "\n")
}

var waitMu sync.Mutex

// wait reads the rest of stdout and waits for the process; it returns its
// exit code.
func (p *wfbProc) wait() int {
	waitMu.Lock()
	defer waitMu.Unlock()
	select {
	case <-p.done:
	default:
		rest, _ := io.ReadAll(p.out)
		p.stdout.Write(rest)
		p.err = p.cmd.Wait()
		close(p.done)
	}
	return p.cmd.ProcessState.ExitCode()
}

// stop signals the process and returns its exit code.
func (p *wfbProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return p.wait()
}

// proxySecret is the API key the tests' agents send through wfb proxy; it
// must never reach the results file or the proxy's output.
const proxySecret = "sk-ant-api03-proxytestsecret0123456789abcdefABCDEF"

func postMessages(t *testing.T, base, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", proxySecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProxyRecordsEveryRequestUntilASignal stops a standalone proxy that
// loses what it saw when told to stop (each of the three signals), mixes
// its attempts up with a run's, or keeps the agent's key: every request,
// attributed or not, is in the results file after a clean exit 0, under
// an attempt id of its own.
func TestProxyRecordsEveryRequestUntilASignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			up, err := provider.Start(&provider.Script{Replies: []provider.Reply{
				{Text: "first", Usage: provider.FullUsage(120, 8, 300, 40)},
				{Text: "second", Usage: provider.Usage{"input_tokens": 50, "output_tokens": -5}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			dbPath := filepath.Join(t.TempDir(), "wfb.db")
			p := startWfb(t, []string{"ANTHROPIC_API_KEY=" + proxySecret}, "proxy", "--upstream", up.URL(), "--db", dbPath, "--attempts", "2")
			var bases, ids []string
			for range 2 {
				base, id, ok := strings.Cut(p.line(t), "\t")
				if !ok || !strings.HasPrefix(id, "proxy-") || !strings.Contains(base, "/m/") {
					t.Fatalf("stdout line %q, want BASE_URL<TAB>proxy-...", base)
				}
				bases, ids = append(bases, base), append(ids, id)
			}
			if st, _ := postMessages(t, bases[1], `{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"key `+proxySecret+`"}]}`); st != 200 {
				t.Fatalf("status %d through the proxy", st)
			}
			if st, _ := postMessages(t, bases[0], `{"model":"claude-sonnet-4-5","messages":[]}`); st != 200 {
				t.Fatalf("status %d through the proxy", st)
			}
			root, _, _ := strings.Cut(bases[0], "/m/")
			if st, _ := postMessages(t, root+"/m/nobody", `{}`); st != 404 {
				t.Fatalf("an unknown attempt's request answered %d, want 404", st)
			}
			if code := p.stop(t, sig); code != 0 {
				t.Fatalf("exit %d after %v, want 0; stderr:\n%s", code, sig, p.stderr)
			}
			checkProxyRows(t, dbPath, ids)
			for name, text := range map[string]string{"stdout": p.stdout.String(), "stderr": p.stderr.String()} {
				if strings.Contains(text, proxySecret) {
					t.Errorf("the key is in the proxy's %s", name)
				}
			}
			requireNoSecretInFiles(t, filepath.Dir(dbPath), proxySecret)
		})
	}
}

func checkProxyRows(t *testing.T, dbPath string, ids []string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, err := db.Requests(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || !first[0].Billed || !first[0].Streamed || *first[0].InputTokens != 120 || *first[0].CacheReadInputTokens != 300 {
		t.Fatalf("attempt %s rows %+v, want one billed stream with input 120, cache read 300", ids[1], first)
	}
	second, err := db.Requests(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 1 || second[0].OutputTokens != nil || second[0].UsageRaw["usage.output_tokens"] != "-5" {
		t.Fatalf("attempt %s rows %+v, want output NULL with its raw -5 kept", ids[0], second)
	}
	x, err := db.Exchange(ctx, first[0].RequestID)
	if err != nil || x.ResponseSize == 0 || x.RequestSize == 0 {
		t.Fatalf("exchange %+v, %v: bodies not kept", x, err)
	}
	stray, err := db.Requests(ctx, "")
	if err != nil || len(stray) != 1 || stray[0].Status == nil || *stray[0].Status != 404 {
		t.Fatalf("unattributed rows %+v, %v: want the 404", stray, err)
	}
}

// requireNoSecretInFiles fails when any file under dir holds secret.
func requireNoSecretInFiles(t *testing.T, dir, secret string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the key", e.Name())
		}
	}
}

// TestProxyScrubsWhatASessionScrubs stops wfb proxy from keeping a value
// a session would scrub: the proxy picked its secrets by a rule of its own
// (names saying KEY, TOKEN, SECRET or PASSWORD), so the value of DB_PASSWD,
// CLOUD_CREDENTIALS or GH_AUTH — secret to a session, which follows
// wfb.IsSecretName — went into the results file when an agent sent it.
func TestProxyScrubsWhatASessionScrubs(t *testing.T) {
	secrets := map[string]string{
		"DB_PASSWD":         "correct-horse-battery-staple",
		"CLOUD_CREDENTIALS": "f00dfeedcafe4b1d9e8a7c6b5a4f3e2d",
		"GH_AUTH":           "plain-words-but-secret-all-the-same",
	}
	up, err := provider.Start(&provider.Script{Replies: []provider.Reply{{Text: "ok", Usage: provider.FullUsage(10, 2, 0, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "wfb.db")
	env := []string{"ANTHROPIC_API_KEY=" + proxySecret}
	var said []string
	for name, value := range secrets {
		if !wfb.IsSecretName(name) {
			t.Fatalf("%s is not secret to a session: the test shows nothing", name)
		}
		env = append(env, name+"="+value)
		said = append(said, value)
	}
	p := startWfb(t, env, "proxy", "--upstream", up.URL(), "--db", dbPath, "--attempts", "1")
	base, id, _ := strings.Cut(p.line(t), "\t")
	if st, _ := postMessages(t, base, `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"`+strings.Join(said, " ")+`"}]}`); st != 200 {
		t.Fatalf("status %d through the proxy", st)
	}
	if code := p.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr)
	}
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reqs, err := db.Requests(ctx, id)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("attempt %s: requests %+v, %v; want one", id, reqs, err)
	}
	x, err := db.Exchange(ctx, reqs[0].RequestID)
	if err != nil {
		t.Fatal(err)
	}
	body, err := meterstore.Body(x.Codec, x.RequestBody, x.RequestSize, x.RequestSHA256)
	if err != nil || !strings.Contains(string(body), "claude-sonnet-4-5") {
		t.Fatalf("request body %q, %v: not kept", body, err)
	}
	for name, value := range secrets {
		if strings.Contains(string(body), value) {
			t.Errorf("the value of %s is in the kept request body: %s", name, body)
		}
		requireNoSecretInFiles(t, filepath.Dir(dbPath), value)
	}
}

// TestProxyRefusesBadInputWithExit2 stops a proxy that listens beyond
// loopback, forwards to something that is no provider URL, or takes a key
// in its upstream URL (which it would print).
func TestProxyRefusesBadInputWithExit2(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "wfb.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--upstream", "http://127.0.0.1:1", "--addr", "0.0.0.0:0"}, "loopback"},
		{[]string{"--upstream", "ftp://example.com"}, "http or https"},
		{[]string{"--upstream", "https://user:" + proxySecret + "@example.com"}, "credentials"},
		{[]string{}, "--upstream URL is required"},
		{[]string{"--upstream", "http://127.0.0.1:1", "--attempts", "0"}, "--attempts"},
	} {
		var out, errOut bytes.Buffer
		s := &Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := run(ctx, append([]string{"proxy", "--db", dbPath}, tc.args...), s)
		cancel()
		if code != exitBadInput || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, errOut.String(), tc.want)
		}
		if strings.Contains(errOut.String()+out.String(), proxySecret) {
			t.Errorf("%v: the key was printed", tc.args)
		}
	}
}
