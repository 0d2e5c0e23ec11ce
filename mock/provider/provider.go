package provider

import (
	"bytes"
	"context"
	"encoding/json"
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
)

// DefaultReply returns the reply served when a script has no default: the
// text "ok" with a complete usage report (10 input, 5 output, 0 and 0
// cache tokens).
func DefaultReply() Reply {
	return Reply{Text: "ok", Usage: FullUsage(10, 5, 0, 0)}
}

// Request is one request the provider received. Secret headers (x-api-key,
// Authorization, Proxy-Authorization) are recorded as "[REDACTED]": a test
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
var secretHeaders = []string{"X-Api-Key", "Authorization", "Proxy-Authorization"}

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
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	next     int // index of the next scripted reply
	seq      int // requests received, for ids
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
	return &Provider{script: script, closing: make(chan struct{})}
}

// Start starts a provider for script on a free loopback port. Close
// it when done.
func Start(script *Script) (*Provider, error) {
	p := New(script)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock provider: listen: %w", err)
	}
	srv := p.listening(ln)
	go srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	return p, nil
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
func (p *Provider) MessageRequests() []Request {
	var out []Request
	for _, r := range p.Requests() {
		if isMessages(r.Method, r.Path) {
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

// statusWriter remembers the status written, for the record and the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (p *Provider) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &statusWriter{ResponseWriter: rw}
	at := time.Now() // arrival, before a large body is read
	raw, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec := Request{
		Method:  r.Method,
		Path:    r.URL.Path,
		Query:   r.URL.Query(),
		Header:  redactHeader(r.Header),
		RawBody: raw,
		At:      at,
	}
	var body map[string]any
	bodyErr := readErr
	if readErr == nil && len(raw) > 0 {
		bodyErr = json.Unmarshal(raw, &body)
		if bodyErr == nil && body == nil {
			bodyErr = errors.New("the body is null, not an object")
		}
	}
	rec.Body = body
	p.mu.Lock()
	p.seq++
	seq := p.seq
	n := -1 // index in p.requests
	if !p.DiscardRequests {
		n = len(p.requests)
		p.requests = append(p.requests, rec)
	}
	p.mu.Unlock()

	// The deferred record and log run on the abort panics below too.
	note := ""
	defer func() {
		if n >= 0 {
			p.mu.Lock()
			p.requests[n].Status = w.status
			p.mu.Unlock()
		}
		p.logf(r.Method, r.URL.Path, w.status, note)
	}()

	responses := isResponses(r.Method, r.URL.Path)
	switch {
	case isMessages(r.Method, r.URL.Path), responses:
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if strings.Contains(r.URL.Path, "/v1/") {
			writeError(w, http.StatusNotFound, errorObject("not_found_error", "the mock provider serves POST /v1/messages and POST /v1/responses only"))
			return
		}
		// Clients probe the base URL before their first request.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			io.WriteString(w, "wfb mock provider\n")
		}
		return
	default:
		writeError(w, http.StatusNotFound, errorObject("not_found_error", "the mock provider serves POST /v1/messages and POST /v1/responses only"))
		return
	}

	if readErr != nil {
		note = "body too large"
		writeError(w, http.StatusRequestEntityTooLarge, errorObject("request_too_large", readErr.Error()))
		return
	}
	if bodyErr != nil || len(raw) == 0 {
		// A malformed request is not a model turn: no reply is consumed.
		note = "bad body"
		msg := "the request body is empty"
		if bodyErr != nil {
			msg = "the request body is not a JSON object: " + bodyErr.Error()
		}
		writeError(w, http.StatusBadRequest, errorObject("invalid_request_error", msg))
		return
	}

	reply, label := p.nextReply()
	// Placeholders such as {{review_output}} take their value from this request.
	reply = expandTemplates(reply, body)
	note = label
	stream, _ := body["stream"].(bool)
	if stream {
		note += " stream"
	}
	ctx := r.Context()
	if reply.DelayMS > 0 {
		t := time.NewTimer(time.Duration(reply.DelayMS) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			note += " client gone"
			return
		case <-p.closing:
			t.Stop()
			note += " closed"
			panic(http.ErrAbortHandler)
		}
	}
	if reply.Hang {
		select {
		case <-ctx.Done():
			note += " hung, client gone"
		case <-p.closing:
			note += " hung, closed"
		}
		panic(http.ErrAbortHandler)
	}

	id := fmt.Sprintf("%06d", seq)
	w.Header().Set("Request-Id", "req_mock_"+id)
	if responses {
		note += " " + p.serveResponses(w, reply, id, body, stream)
		return
	}
	if reply.Status != 0 && (reply.Status < 200 || reply.Status > 299) {
		obj := reply.Error
		if len(obj) == 0 {
			obj = defaultError(reply.Status)
		}
		writeError(w, reply.Status, obj)
		return
	}
	status := http.StatusOK
	if reply.Status != 0 {
		status = reply.Status
	}
	model, _ := body["model"].(string)
	if model == "" {
		model = "claude-mock"
	}
	msg := buildMessage(reply, id, model)
	// Encoding first also proves a stream's events will encode: a Go-built
	// script can hold values JSON cannot carry.
	out, err := json.Marshal(msg)
	if err != nil {
		note += " unencodable reply"
		writeError(w, http.StatusInternalServerError, errorObject("api_error", "mock provider: "+err.Error()))
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
		return
	}
	sent, err := sseWriteMessage(w, status, msg, reply.CutAfterEvents)
	if errors.Is(err, errSSECut) {
		note += fmt.Sprintf(" cut after %d events", sent)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		note += " " + err.Error()
	}
}

// nextReply takes the next scripted reply, or the default.
func (p *Provider) nextReply() (Reply, string) {
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()
	if i < len(p.script.Replies) {
		return p.script.Replies[i], fmt.Sprintf("reply %d/%d", i+1, len(p.script.Replies))
	}
	if p.script.Default != nil {
		return *p.script.Default, "default"
	}
	return DefaultReply(), "built-in default"
}

func (p *Provider) logf(method, path string, status int, note string) {
	if p.Log == nil {
		return
	}
	line := fmt.Sprintf("%s %s %d", method, path, status)
	if note != "" {
		line += " " + strings.TrimSpace(note)
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintln(p.Log, line)
}

// defaultError is the error object for a scripted failure status that
// has none, named the way the Anthropic API names them.
func defaultError(status int) json.RawMessage {
	kind, msg := "api_error", "Internal server error"
	switch {
	case status == 400:
		kind, msg = "invalid_request_error", "Invalid request"
	case status == 401:
		kind, msg = "authentication_error", "Invalid API key"
	case status == 402:
		kind, msg = "billing_error", "Billing error"
	case status == 403:
		kind, msg = "permission_error", "Permission denied"
	case status == 404:
		kind, msg = "not_found_error", "Not found"
	case status == 413:
		kind, msg = "request_too_large", "Request too large"
	case status == 429:
		kind, msg = "rate_limit_error", "Rate limited"
	case status == 529:
		kind, msg = "overloaded_error", "Overloaded"
	case status >= 400 && status < 500:
		kind, msg = "invalid_request_error", http.StatusText(status)
	case status >= 500:
		kind, msg = "api_error", http.StatusText(status)
	default:
		msg = fmt.Sprintf("scripted status %d", status)
	}
	return errorObject(kind, msg)
}

func errorObject(kind, message string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"type": kind, "message": message})
	return out
}

func writeError(w http.ResponseWriter, status int, obj json.RawMessage) {
	var b bytes.Buffer
	b.WriteString(`{"type":"error","error":`)
	b.Write(obj)
	b.WriteString("}")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// anthropicMessage is an Anthropic Message; the struct fixes the field order.
type anthropicMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []contentBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

// contentBlock is a content block: text or tool_use.
type contentBlock struct {
	Type  string  `json:"type"`
	Text  *string `json:"text,omitempty"`
	ID    string  `json:"id,omitempty"`
	Name  string  `json:"name,omitempty"`
	Input any     `json:"input,omitempty"`
}

func buildMessage(reply Reply, id, model string) anthropicMessage {
	msg := anthropicMessage{
		ID:    "msg_mock_" + id,
		Type:  "message",
		Role:  "assistant",
		Model: model,
		Usage: wireUsage(reply.Usage, nil),
	}
	// A turn always has a block: a reply with neither text nor tools is an
	// empty text block, as the API sends for an empty answer.
	if reply.Text != "" || len(reply.Tools) == 0 {
		text := reply.Text
		msg.Content = append(msg.Content, contentBlock{Type: "text", Text: &text})
	}
	for i, t := range reply.Tools {
		input := t.Input
		if input == nil {
			input = map[string]any{}
		}
		msg.Content = append(msg.Content, contentBlock{
			Type:  "tool_use",
			ID:    fmt.Sprintf("toolu_mock_%s_%d", id, i+1),
			Name:  t.Name,
			Input: input,
		})
	}
	stop := reply.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(reply.Tools) > 0 {
			stop = "tool_use"
		}
	}
	msg.StopReason = &stop
	return msg
}

// wireUsage copies the usage fields that are present (non-nil), keeping
// only the names in keep when keep is non-nil. Never nil: the wire always
// has a usage object, possibly empty.
func wireUsage(u Usage, keep []string) Usage {
	out := Usage{}
	for k, v := range u {
		if v == nil || (keep != nil && !slices.Contains(keep, k)) {
			continue
		}
		out[k] = v
	}
	return out
}
