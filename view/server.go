package view

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"

	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ContentSecurityPolicy is sent with every page: nothing loads from
// anywhere but the viewer's origin, and no inline script or style runs, so
// markup smuggled into a transcript, an artifact or an error detail (which
// html/template escapes anyway) could not execute even if it got through.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// tokenCookie carries the access token after the first request that
// presented it in the query.
const tokenCookie = "wfb_view_token"

// Server serves the viewer's pages over one results file, opened
// read-only by the caller.
type Server struct {
	db    *store.DB
	cols  report.Columns
	pages map[string]*template.Template
	token string
	mux   *http.ServeMux
	cache resultCache
}

// Options configure a Server.
type Options struct {
	// Token, when set, must be presented by every request: once as
	// ?token=, after which a cookie carries it.
	Token string
}

// New builds the viewer over db, which should be opened with
// store.OpenReadOnly: the server never writes, and the engine then refuses
// to as well.
func New(ctx context.Context, db *store.DB, opts Options) (*Server, error) {
	cols, err := report.LoadColumns(ctx, db)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{db: db, cols: cols, pages: pages, token: opts.Token, mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.page(s.runsPage))
	s.mux.HandleFunc("GET /run/{id}", s.page(s.runPage))
	s.mux.HandleFunc("GET /attempt/{id}", s.page(s.attemptPage))
	s.mux.HandleFunc("GET /compare", s.page(s.comparePage))
	s.mux.HandleFunc("GET /trend", s.page(s.trendPage))
	return s, nil
}

// ServeHTTP answers GET and HEAD only, with the security headers on every
// response, after checking the token when there is one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the viewer is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if s.token == "" && !isLoopback(hostOnly(r.Host)) {
		// A page of another site that rebinds its name to 127.0.0.1 would
		// otherwise read this one: without a token, only loopback names.
		http.Error(w, "the viewer answers only to a loopback host name (127.0.0.1, [::1], localhost)", http.StatusMisdirectedRequest)
		return
	}
	if !s.authorized(w, r) {
		http.Error(w, "this viewer needs its token: open the URL it printed", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized checks the token, from the query (which then sets the cookie)
// or the cookie.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.token == "" {
		return true
	}
	same := func(v string) bool { return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1 }
	if q := r.URL.Query().Get("token"); q != "" && same(q) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	c, err := r.Cookie(tokenCookie)
	return err == nil && same(c.Value)
}

// errNotFound makes a page answer 404; errBadRequest 400.
var (
	errNotFound   = errors.New("not found")
	errBadRequest = errors.New("bad request")
)

// pageFunc builds one page: its template name and data.
type pageFunc func(r *http.Request, l links) (string, any, error)

// page renders what fn builds, as a server page (links without .html).
func (s *Server) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		depth := strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/")
		name, data, err := fn(r, links{root: strings.Repeat("../", depth)})
		if err != nil {
			code := http.StatusInternalServerError
			switch {
			case errors.Is(err, errNotFound), errors.Is(err, store.ErrNotFound):
				code = http.StatusNotFound
			case errors.Is(err, errBadRequest), errors.Is(err, report.ErrSelection):
				code = http.StatusBadRequest
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := s.render(w, name, data); err != nil {
			fmt.Fprintf(w, "\n<p>render: %s</p>", template.HTMLEscapeString(err.Error()))
		}
	}
}

// render writes the page name shows data as, with every control and
// bidirectional override in it shown (see termtext.Show) rather than left
// to the browser: html/template escapes markup but leaves them, and a
// U+202E in a transcript or an error detail reorders what the page shows
// after it. The templates hold none, so only the data's are changed.
func (s *Server) render(w io.Writer, name string, data any) error {
	return renderPage(w, s.pages[name], data, s.db.Tampered())
}

// renderPage executes a page's layout with data and writes it, a banner on
// top when the file's schema was tampered with, every control character
// shown as a box shows it.
func renderPage(w io.Writer, page *template.Template, data any, tampered []string) error {
	var buf bytes.Buffer
	err := page.ExecuteTemplate(&buf, "layout", data)
	out := buf.String()
	if len(tampered) > 0 {
		// Read with --allow-tampered: every page says the file's
		// guarantees are gone.
		banner := `<p class="tampered"><strong>This results file's schema was changed outside wfb</strong> (` +
			html.EscapeString(strings.Join(tampered, "; ")) + `): its guarantees — append-only rows, CHECKs, one row per cell attempt — no longer hold, and any figure here may be wrong.</p>`
		out = strings.Replace(out, "<main>\n", "<main>\n"+banner+"\n", 1)
	}
	if _, werr := io.WriteString(w, termtext.Show(out, "\t\n\r")); err == nil {
		err = werr
	}
	return err
}

// CheckAddr refuses to listen beyond loopback without a token: an --addr
// naming another interface (or every interface) must come with one.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: want host:port, e.g. 127.0.0.1:0: %v", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("--addr %q listens beyond loopback: give --token too (anyone who can reach it could read every transcript)", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
