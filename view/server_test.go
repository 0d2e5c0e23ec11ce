package view

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newTestServer(t *testing.T, f *fixture, opts Options) *httptest.Server {
	t.Helper()
	s, err := New(context.Background(), f.open(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Every page answers with what it is for, under the security headers; the
// injected markup in a transcript, an artifact, an error detail and a
// prompt arrives escaped, never as markup.
func TestPagesShowTheirContentEscapedUnderTheSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	ts := newTestServer(t, f, Options{})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{f.runA, f.runB, "100.0%", "$1.25", "nightly", "compare with previous"}},
		{"/?day=2026-11-30", []string{f.runB}},
		{"/?day=2026-11-29", []string{`href="run/` + f.runA, "<td class=\"num\">4</td><td class=\"num\">4</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">5</td>", "100.0%"}},
		{"/run/" + f.runA, []string{"task", "1/1 ok", "claude", "2.0.1", "sha256:fp", "strict %", `href="../attempt/` + f.failed + `"`}},
		{"/attempt/" + f.failed, []string{"provider-error", "&lt;script&gt;", "tool call: Bash", "ls -la", "tool result: Bash", "sum.js",
			"input 12 · output 5", `href="../attempt/` + f.retry + `"`, "Fix sum.js"}},
		{"/attempt/" + f.retry, []string{"retries", `href="../attempt/` + f.failed + `"`, "No transcript"}},
		{"/attempt/" + f.ok, []string{"Review artifact review.json", "&lt;script&gt;"}},
		// The estimate stays beside ~ (it used to be replaced by it).
		{"/compare?a=" + f.runA + "&b=" + f.runB, []string{"strict", f.runA, f.runB, "-6.7% ~</td>"}},
	} {
		resp, body := get(t, ts.Client(), ts.URL+tc.path)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, body)
			continue
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", tc.path, csp)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: page lacks %q", tc.path, w)
			}
		}
		if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: injected markup reached the page unescaped", tc.path)
		}
		if strings.Contains(tc.path, "day=2026-11-30") && strings.Contains(body, `href="run/`+f.runA) {
			t.Errorf("%s: the day filter kept run A", tc.path)
		}
	}
}

// The viewer writes nothing: every method but GET and HEAD is refused.
func TestTheViewerHasNoWriteEndpoints(t *testing.T) {
	ts := newTestServer(t, newFixture(t), Options{})
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(m, ts.URL+"/", strings.NewReader("x"))
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /: %d, want 405", m, resp.StatusCode)
		}
	}
}

// A token, when set, is needed: once in the query, then by cookie.
func TestATokenGuardsEveryPage(t *testing.T) {
	ts := newTestServer(t, newFixture(t), Options{Token: "s3cr3t-token"})
	c := ts.Client()
	if resp, _ := get(t, c, ts.URL+"/"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", resp.StatusCode)
	}
	if resp, _ := get(t, c, ts.URL+"/?token=wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", resp.StatusCode)
	}
	resp, _ := get(t, c, ts.URL+"/?token=s3cr3t-token")
	if resp.StatusCode != 200 || len(resp.Cookies()) != 1 {
		t.Fatalf("token: %d, %d cookies", resp.StatusCode, len(resp.Cookies()))
	}
	req, _ := http.NewRequest("GET", ts.URL+"/compare", nil)
	req.AddCookie(resp.Cookies()[0])
	r2, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 200 {
		t.Errorf("cookie: %d, want 200", r2.StatusCode)
	}
}

// Without a token only a loopback Host is answered: a page of another site
// rebinding its name to 127.0.0.1 is refused.
func TestAForeignHostNameIsRefusedWithoutAToken(t *testing.T) {
	ts := newTestServer(t, newFixture(t), Options{})
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Host = "attacker.example:80"
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign host: %d, want 421", resp.StatusCode)
	}
}

func TestUnknownPagesAndBadSidesSayWhat(t *testing.T) {
	ts := newTestServer(t, newFixture(t), Options{})
	for path, want := range map[string]int{"/attempt/nope": 404, "/run/nope": 404, "/compare?a=nope&b=run-a": 400, "/compare?a=run-a&b=run-b&alpha=2": 400} {
		if resp, body := get(t, ts.Client(), ts.URL+path); resp.StatusCode != want {
			t.Errorf("%s: %d (%s), want %d", path, resp.StatusCode, body, want)
		}
	}
}

func TestListeningBeyondLoopbackNeedsAToken(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:0", "", true}, {"[::1]:8080", "", true}, {"localhost:0", "", true},
		{"0.0.0.0:8080", "", false}, {":8080", "", false}, {"192.0.2.1:80", "", false},
		{"0.0.0.0:8080", "t", true}, {"nonsense", "", false},
	} {
		if err := CheckAddr(tc.addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q, %q) = %v, want ok %v", tc.addr, tc.token, err, tc.ok)
		}
	}
}

// Serve listens, gives its URL before answering, serves it, and stops
// cleanly when its context ends.
func TestServePrintsItsURLAndStopsWithItsContext(t *testing.T) {
	s, err := New(context.Background(), newFixture(t).open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, "127.0.0.1:0", func(u string) { urls <- u }) }()
	u := <-urls
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("url %q", u)
	}
	if resp, body := get(t, http.DefaultClient, u); resp.StatusCode != 200 || !strings.Contains(body, "run-a") {
		t.Errorf("GET %s: %d", u, resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

// The compare page picks each side from a list of the runs, newest first,
// each "RUN-ID — label — started — cells", preselected with the sides
// compared (it was two free-text boxes); a label or a filter still goes
// in a text box, which wins over the list, and links with a= and b= keep
// working.
func TestTheComparePagePicksRunsFromLists(t *testing.T) {
	f := newFixture(t)
	addSessionAndWeekly(t, f)
	ts := newTestServer(t, f, Options{})
	option := func(id, text string, selected bool) string {
		sel := ""
		if selected {
			sel = " selected"
		}
		return `<option value="` + id + `"` + sel + `>` + text + `</option>`
	}
	picker := func(side, a string, typed bool) string {
		sel := ""
		if a == "" || typed {
			sel = " selected"
		}
		return `<select name="` + side + `"><option value=""` + sel + `>— pick a run —</option>` +
			option("run-w", "run-w — weekly — 2026-12-02 10:00 UTC — 4 cells", a == "run-w") +
			option("run-s", "run-s — no label (session) — 2026-12-01 10:00 UTC — 1 cell", a == "run-s") +
			option(f.runB, f.runB+" — nightly — 2026-11-30 10:00 UTC — 4 cells", a == f.runB) +
			option(f.runA, f.runA+" — nightly — 2026-11-29 10:00 UTC — 4 cells", a == f.runA) + `</select>`
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{picker("a", "", false), picker("b", "", false), `<input name="fa" value=""`}},
		{"?a=" + f.runA + "&b=" + f.runB, []string{"Compare " + f.runA + " with " + f.runB, picker("a", f.runA, false), picker("b", f.runB, false),
			`<input name="fa" value=""`, `<input name="fb" value=""`, "strict pass rate"}},
		// A link naming a label: the list has no such run, the text box has it.
		{"?a=nightly&b=run-w", []string{"Compare nightly with run-w", picker("a", "nightly", true), `<input name="fa" value="nightly"`, picker("b", "run-w", false)}},
		// Typed over a pick: the filter is compared.
		{"?a=" + f.runA + "&fa=arm%3Da&b=" + f.runA + "&fb=arm%3Db", []string{"Compare arm=a with arm=b", `<input name="fa" value="arm=a"`, `<input name="fb" value="arm=b"`}},
	} {
		resp, body := get(t, ts.Client(), ts.URL+"/compare"+tc.query)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", tc.query, resp.StatusCode, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("compare%s: page lacks %q", tc.query, w)
			}
		}
		if strings.Contains(body, `<input name="a"`) || strings.Contains(body, `<input name="b"`) {
			t.Errorf("compare%s: a side is still a free-text box", tc.query)
		}
	}
}
