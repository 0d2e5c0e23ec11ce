package meter

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Sink receives every record the proxy finishes, attributed or not, as it
// finishes (after its response was relayed), from the proxy's goroutines:
// it must be safe for concurrent use, and should be quick. Attributed
// records also come back from Attempt.End; a caller that takes them there
// writes only the unattributed ones (AttemptID "") from here. A record's
// retry and fallback markers are set against the attempt's requests that
// had finished before it; End's are set against all earlier ones.
type Sink interface {
	Record(Record)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Record)

// Record calls f(r).
func (f SinkFunc) Record(r Record) { f(r) }

// Defaults for Options.
const (
	DefaultMaxRequestBytes = 32 << 20
	// DefaultMaxRequestBytesInFlight is four requests of the largest size,
	// or hundreds of an agent's usual ones.
	DefaultMaxRequestBytesInFlight = 4 * DefaultMaxRequestBytes
	DefaultConnectTimeout          = 10 * time.Second
)

// Options configure a Proxy. The zero value is usable but for Upstream,
// which either Options or each Begin must name.
type Options struct {
	// Addr is the loopback host:port to listen on; "" is 127.0.0.1 on a
	// free port. A non-loopback address is refused.
	Addr string
	// Upstream is the default provider base URL (http or https, possibly
	// with a path prefix) for attempts that name none.
	Upstream string
	// Sink, when set, receives every record (see Sink). Without one,
	// unattributed requests are answered 404 and forgotten.
	Sink Sink
	// Redact, when set, runs over every kept text after the attempt's
	// secrets are scrubbed (wfb passes wfb.Redact).
	Redact func(string) string
	// MaxRequestBytes bounds a request body (default 32 MiB); a larger one
	// is answered 413 and not forwarded.
	MaxRequestBytes int64
	// MaxRequestBytesInFlight bounds the request bodies one attempt's
	// requests hold at once (default 128 MiB): each is held whole until it
	// is recorded, and the agent decides how many it sends at once; past
	// the bound a request waits for room before its body is read.
	MaxRequestBytesInFlight int64
	// MaxExchangeBytes bounds the bodies kept per attempt, uncompressed
	// (default 64 MiB); past it, bodies are kept truncated.
	MaxExchangeBytes int64
	// ConnectTimeout bounds connecting to the upstream, TLS included
	// (default 10 s). Nothing else is timed: a model may think for minutes,
	// and the agent's own timeout (or its going away) ends a request.
	ConnectTimeout time.Duration
	// Transport replaces the upstream transport (tests; custom TLS roots).
	Transport http.RoundTripper
}

// Proxy is the metering proxy: one loopback listener that forwards each
// attempt's requests to its upstream and records them. Safe for
// concurrent use.
type Proxy struct {
	opts      Options
	transport http.RoundTripper
	srv       *http.Server
	url       string
	served    chan struct{}

	mu       sync.RWMutex
	attempts map[string]*Attempt // by token

	unattributedSeq atomic.Int64
}

// ErrNotLoopback is returned (wrapped) for a listen address that is not on
// the loopback interface: the proxy forwards the provider credentials it
// is given, so it never listens beyond this machine.
var ErrNotLoopback = errors.New("not a loopback address")

// Start listens on opts.Addr (loopback only) and serves until Close.
func Start(opts Options) (*Proxy, error) {
	opts = withDefaults(opts)
	if opts.Upstream != "" {
		if _, err := parseUpstream(opts.Upstream); err != nil {
			return nil, err
		}
	}
	ln, err := listenLoopback(opts.Addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		opts:      opts,
		transport: opts.Transport,
		url:       "http://" + ln.Addr().String(),
		served:    make(chan struct{}),
		attempts:  map[string]*Attempt{},
	}
	if p.transport == nil {
		p.transport = newTransport(opts.ConnectTimeout)
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(p.served)
		p.srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	}()
	return p, nil
}

func withDefaults(o Options) Options {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxRequestBytesInFlight <= 0 {
		o.MaxRequestBytesInFlight = max(DefaultMaxRequestBytesInFlight, o.MaxRequestBytes)
	}
	if o.MaxExchangeBytes <= 0 {
		o.MaxExchangeBytes = DefaultMaxExchangeBytes
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	return o
}

func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("meter: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("meter: listen address %q: %w (use 127.0.0.1, ::1 or localhost)", addr, ErrNotLoopback)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("meter: listen: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("meter: listen address %q bound %s: %w", addr, ln.Addr(), ErrNotLoopback)
	}
	return ln, nil
}

// newTransport is the upstream transport: environment proxies honoured (a
// loopback upstream never goes through one), connect and TLS handshake
// bounded, no other timeout.
func newTransport(connect time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connect,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Larger buffers than the 4 KiB default: fewer syscalls for a
		// long stream, and for the large request bodies agents send.
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 64 << 10,
	}
}

func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("meter: upstream %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("meter: upstream %q: want an http or https base URL", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("meter: upstream %q: a base URL has no query, fragment or user info", s)
	}
	return u, nil
}

// URL is the proxy's own address, e.g. http://127.0.0.1:41234.
func (p *Proxy) URL() string { return p.url }

// Close stops the listener and drops open connections; in-flight requests
// end as if the agent had gone away. Attempts not yet ended can still be
// ended, to collect what they recorded.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	<-p.served
	return err
}

// newToken returns an unguessable path token.
func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// route finds the live attempt a path names, and the rest of the path
// after its prefix ("" or starting with "/").
func (p *Proxy) route(path string) (*Attempt, string) {
	rest, ok := strings.CutPrefix(path, "/m/")
	if !ok {
		return nil, path
	}
	token, tail, _ := strings.Cut(rest, "/")
	p.mu.RLock()
	a := p.attempts[token]
	p.mu.RUnlock()
	if a == nil {
		return nil, path
	}
	if tail != "" || strings.HasSuffix(rest, "/") {
		tail = "/" + tail
	}
	return a, tail
}

// ServeHTTP meters one request: forwarded for a live attempt, 404 for
// anything else.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	a, rest := p.route(r.URL.Path)
	if a == nil {
		p.serveUnattributed(w, r, start)
		return
	}
	seq, ok, overCap, notify := a.enter()
	if !ok {
		p.serveUnattributed(w, r, start)
		return
	}
	f := newFlight(a, seq, r, rest, start)
	if overCap {
		f.refuseOverCap(w, r)
		if notify {
			go a.onCap()
		}
		return
	}
	f.serve(w, r)
}
