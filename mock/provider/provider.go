package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wfbench/wfb/internal/inflight"
)

// DefaultReply returns the reply served when a script has no default: the
// text "ok" with a complete usage report (10 input, 5 output, 0 and 0
// cache tokens).
func DefaultReply() Reply {
	return Reply{Text: "ok", Usage: FullUsage(10, 5, 0, 0)}
}

// Request is one request the provider received. Secret headers (x-api-key,
// x-goog-api-key, Authorization, Proxy-Authorization) are recorded as "[REDACTED]": a test
// can assert that one was sent, and nothing downstream can leak its value.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	// Body is the request body parsed as a JSON object; nil when it is not
	// one (RawBody then holds what was sent).
	Body    map[string]any
	RawBody []byte
	At      time.Time
	// Status is the HTTP status answered; 0 while the request is pending,
	// and for a hung request that was never answered.
	Status int
}

// String describes the request for logs and failure messages. It prints no
// secret: they were redacted when the request was recorded.
func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Method, r.Path)
	if len(r.Query) > 0 {
		b.WriteString("?" + r.Query.Encode())
	}
	fmt.Fprintf(&b, " status=%d", r.Status)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, strings.Join(r.Header[k], ","))
	}
	fmt.Fprintf(&b, " body=%dB", len(r.RawBody))
	return b.String()
}

// redacted is what a secret header's value is recorded as.
const redacted = "[REDACTED]"

// secretHeaders are the headers that carry credentials.
var secretHeaders = []string{"X-Api-Key", "X-Goog-Api-Key", "Authorization", "Proxy-Authorization"}

func redactHeader(h http.Header) http.Header {
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	for _, k := range secretHeaders {
		if vs, ok := c[k]; ok {
			for i := range vs {
				vs[i] = redacted
			}
		}
	}
	return c
}

// maxBody bounds a request body; Claude Code's requests, with their
// tool definitions, are a few hundred KB.
const maxBody = 32 << 20

// maxBodiesInFlight bounds the request bodies the provider holds at once:
// past it, a request waits for room before its body is read.
const maxBodiesInFlight = 4 * maxBody

// Provider is a scripted stand-in for the Anthropic Messages API. It serves
// its script's replies in order, one per POST .../v1/messages, then the
// default for every later one, and records every request. It is safe for
// concurrent use.
type Provider struct {
	// Log, when set before serving starts, receives one line per request:
	// method, path, status and which reply was served. It never receives a
	// header value or a body.
	Log io.Writer
	// DiscardRequests, when set before serving starts, keeps no recording
	// (Requests stays empty): a long-running server would otherwise hold
	// every request body an agent ever sent.
	DiscardRequests bool

	script  *Script
	bodies  *inflight.Budget // request bodies held at once
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	next     int    // index of the first scripted reply not yet served
	served   []bool // which replies were served (nil: none yet)
	seq      int    // requests received, for ids
	requests []Request
	srv      *http.Server
	url      string

	logMu sync.Mutex
}

// New returns a provider for script (nil: the built-in default for
// every request) that is not listening yet: use Handler to embed it, or
// Serve.
func New(script *Script) *Provider {
	if script == nil {
		script = &Script{}
	}
	return &Provider{script: script, bodies: inflight.New(maxBodiesInFlight), closing: make(chan struct{})}
}

// Start starts a provider for script on a free loopback port. Close
// it when done.
func Start(script *Script) (*Provider, error) {
	return New(script).start()
}

// start serves p on a free loopback port.
func (p *Provider) start() (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock provider: listen: %w", err)
	}
	srv := p.listening(ln)
	go srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	return p, nil
}

// Serving starts a provider for script on a free loopback port and
// returns its base URL and the function that closes it (the shape of
// runner.SweepOptions.StartMock, with a script loaded).
func Serving(script *Script) (url string, stop func(), err error) {
	p := New(script)
	// Nobody reads a session's requests back, and the agent decides how
	// many it sends and how large: keeping them grew wfb by every body.
	p.DiscardRequests = true
	if _, err := p.start(); err != nil {
		return "", nil, err
	}
	return p.URL(), func() { p.Close() }, nil
}

// ErrNotLoopback is returned (wrapped) for an address that is not on the
// loopback interface: the provider answers anyone who can reach it, so it
// never listens beyond this machine.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckLoopback reports whether addr (host:port) names a loopback host:
// 127.0.0.0/8, ::1 or localhost.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q: %w (use 127.0.0.1, ::1 or localhost)", addr, ErrNotLoopback)
}

// Serve listens on addr, which must be a loopback address, calls ready with
// the base URL once it accepts connections, and serves until ctx is done or
// Close is called. Either way it returns nil; an error means it could not
// serve.
func (p *Provider) Serve(ctx context.Context, addr string, ready func(url string)) error {
	if err := CheckLoopback(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mock provider: listen: %w", err)
	}
	// localhost might resolve to something unexpected; check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("address %q bound %s: %w", addr, ln.Addr(), ErrNotLoopback)
	}
	srv := p.listening(ln)
	if ready != nil {
		ready(p.URL())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		p.once.Do(func() { close(p.closing) })
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			srv.Close()
		}
		<-served
		return nil
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("mock provider: %w", err)
	}
}

func (p *Provider) listening(ln net.Listener) *http.Server {
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	p.mu.Lock()
	p.srv = srv
	p.url = "http://" + ln.Addr().String()
	p.mu.Unlock()
	return srv
}

// URL returns the base URL, e.g. http://127.0.0.1:41234 (no trailing
// slash), or "" when the provider is not listening itself.
func (p *Provider) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// Requests returns a copy of every request received so far, in arrival
// order, including HEAD probes and bad requests.
func (p *Provider) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// MessageRequests returns the recorded POST .../v1/messages requests only:
// the model turns, without the probes a client sends before them.
func (p *Provider) MessageRequests() []Request { return p.requestsTo(isMessages) }

// requestsTo returns the recorded requests api accepts.
func (p *Provider) requestsTo(api func(method, path string) bool) []Request {
	var out []Request
	for _, r := range p.Requests() {
		if api(r.Method, r.Path) {
			out = append(out, r)
		}
	}
	return out
}

// Close stops the provider and unblocks hung requests (their clients see the
// connection drop). It is safe to call more than once. An embedder using
// Handler should call Close before closing its own server.
func (p *Provider) Close() error {
	p.once.Do(func() { close(p.closing) })
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// Handler returns the provider as an http.Handler. A hung request, a
// cut stream or Close aborts the response with http.ErrAbortHandler, which
// net/http turns into a dropped connection.
func (p *Provider) Handler() http.Handler {
	return http.HandlerFunc(p.serveHTTP)
}

func isMessages(method, path string) bool {
	return method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(path, "/"), "/v1/messages")
}
