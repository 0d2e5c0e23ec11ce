package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wfbench/wfb/internal/inflight"
	"github.com/wfbench/wfb/internal/termtext"
)

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

// serveHTTP records the request, then answers it: a probe or a wrong path
// directly, a bad body with a 4xx, a model turn with the next reply.
func (p *Provider) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &statusWriter{ResponseWriter: rw}
	// Each body is read whole; the agent decides how many come at once.
	need := r.ContentLength
	if need < 0 || need > maxBody {
		need = maxBody
	}
	share, err := p.bodies.Take(r.Context(), need)
	if err != nil {
		p.logf(r.Method, r.URL.Path, 0, "client gone while waiting for room among the request bodies in flight")
		return
	}
	defer share.Release()
	in, n := p.record(w, r)
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
	api := apiOf(r.Method, r.URL.Path)
	if api == "" {
		serveOther(w, r)
		return
	}
	if note = badBody(w, in); note != "" {
		return
	}
	p.serveTurn(w, r, in, api, &note)
}

// The APIs the provider speaks, as apiOf names them.
const (
	apiMessages  = "messages"
	apiResponses = "responses"
	apiGemini    = "gemini"
	apiChat      = "chat"
)

// apiOf names the API a model request is for; "" for anything else.
func apiOf(method, path string) string {
	switch {
	case isMessages(method, path):
		return apiMessages
	case isResponses(method, path):
		return apiResponses
	case isGemini(method, path):
		return apiGemini
	case isChat(method, path):
		return apiChat
	}
	return ""
}

// incoming is a request's body as read.
type incoming struct {
	seq     int // the request's number, for ids
	raw     []byte
	body    map[string]any // nil unless the body is a JSON object
	readErr error          // the body could not be read (too large)
	bodyErr error          // the body is not a JSON object (or readErr)
}

// record reads the request's body and records the request. n is its index
// in p.requests, -1 when requests are discarded.
func (p *Provider) record(w http.ResponseWriter, r *http.Request) (in incoming, n int) {
	at := time.Now() // arrival, before a large body is read
	raw, readErr := inflight.ReadBody(http.MaxBytesReader(w, r.Body, maxBody), r.ContentLength, maxBody)
	in = incoming{raw: raw, readErr: readErr, bodyErr: readErr}
	if readErr == nil && len(raw) > 0 {
		in.bodyErr = json.Unmarshal(raw, &in.body)
		if in.bodyErr == nil && in.body == nil {
			in.bodyErr = errors.New("the body is null, not an object")
		}
	}
	rec := Request{
		Method:  r.Method,
		Path:    r.URL.Path,
		Query:   r.URL.Query(),
		Header:  redactHeader(r.Header),
		Body:    in.body,
		RawBody: raw,
		At:      at,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	in.seq = p.seq
	n = -1
	if !p.DiscardRequests {
		n = len(p.requests)
		p.requests = append(p.requests, rec)
	}
	return in, n
}

// serveOther answers a request that is not a model turn: a probe of the
// base URL, or 404.
func serveOther(w http.ResponseWriter, r *http.Request) {
	probe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if !probe || strings.Contains(r.URL.Path, "/v1/") || strings.Contains(r.URL.Path, "/v1beta/") {
		writeError(w, http.StatusNotFound, errorObject("not_found_error", "the mock provider serves POST /v1/messages, POST /v1/responses, POST /v1/chat/completions and POST /v1beta/models/{model}:generateContent or :streamGenerateContent only"))
		return
	}
	// Clients probe the base URL before their first request.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		io.WriteString(w, "wfb mock provider\n")
	}
}

// badBody answers a model request whose body is unusable, and returns a note
// for the log; "" when the body is a JSON object. A malformed request is not
// a model turn: no reply is consumed.
func badBody(w http.ResponseWriter, in incoming) string {
	if in.readErr != nil {
		writeError(w, http.StatusRequestEntityTooLarge, errorObject("request_too_large", in.readErr.Error()))
		return "body too large"
	}
	if in.bodyErr != nil || len(in.raw) == 0 {
		msg := "the request body is empty"
		if in.bodyErr != nil {
			msg = "the request body is not a JSON object: " + in.bodyErr.Error()
		}
		writeError(w, http.StatusBadRequest, errorObject("invalid_request_error", msg))
		return "bad body"
	}
	return ""
}

// serveTurn answers a model turn with the next reply, adding to note what
// the log should say. A scripted hang or cut aborts the handler.
func (p *Provider) serveTurn(w http.ResponseWriter, r *http.Request, in incoming, api string, note *string) {
	model, _ := in.body["model"].(string)
	if api == apiGemini {
		model = geminiModel(r.URL.Path)
	}
	reply, label := p.nextReply(model, requestTurn(in.body, api), func(tool string) bool { return requestOffers(in.body, api, tool) })
	// Placeholders such as {{review_output}} take their value from this request.
	reply = expandTemplates(reply, in.body)
	*note = label
	stream, _ := in.body["stream"].(bool)
	if stream {
		*note += " stream"
	}
	if !p.wait(r.Context(), reply, note) {
		return
	}
	id := fmt.Sprintf("%06d", in.seq)
	w.Header().Set("Request-Id", "req_mock_"+id)
	retryAfter(w.Header(), reply)
	switch api {
	case apiResponses:
		*note += " " + p.serveResponses(w, reply, id, in.body, stream)
		return
	case apiGemini:
		*note += " " + serveGemini(w, r, reply, id)
		return
	case apiChat:
		*note += " " + serveChat(w, reply, id, in.body, stream)
		return
	}
	serveMessages(w, reply, id, in.body, stream, note)
}

// retryAfter sets a failure's retry hint (Reply.RetryAfterMS): retry-after-ms,
// which the OpenAI and Anthropic SDKs read first, and retry-after in whole
// seconds (rounded up), the standard header, for clients that read only it.
func retryAfter(h http.Header, reply Reply) {
	if reply.RetryAfterMS <= 0 || !reply.failure() {
		return
	}
	h.Set("Retry-After-Ms", strconv.Itoa(reply.RetryAfterMS))
	h.Set("Retry-After", strconv.Itoa((reply.RetryAfterMS+999)/1000))
}

// wait applies the reply's delay and hang. It returns false when the client
// went away during the delay; a hang, or Close during the delay, aborts the
// handler.
func (p *Provider) wait(ctx context.Context, reply Reply, note *string) bool {
	if reply.DelayMS > 0 {
		t := time.NewTimer(time.Duration(reply.DelayMS) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			*note += " client gone"
			return false
		case <-p.closing:
			t.Stop()
			*note += " closed"
			panic(http.ErrAbortHandler)
		}
	}
	if reply.Hang {
		select {
		case <-ctx.Done():
			*note += " hung, client gone"
		case <-p.closing:
			*note += " hung, closed"
		}
		panic(http.ErrAbortHandler)
	}
	return true
}

// nextReply takes the first reply not yet served that fits a request for
// model at turn, offering what offers says (see Match), or the default.
func (p *Provider) nextReply(model string, turn int, offers func(string) bool) (Reply, string) {
	p.mu.Lock()
	if p.served == nil {
		p.served = make([]bool, len(p.script.Replies))
	}
	i := p.next
	for ; i < len(p.script.Replies); i++ {
		if !p.served[i] && p.script.Replies[i].Match.fits(model, turn, offers) {
			break
		}
	}
	if i < len(p.script.Replies) {
		p.served[i] = true
		for p.next < len(p.script.Replies) && p.served[p.next] {
			p.next++
		}
	}
	p.mu.Unlock()
	if i < len(p.script.Replies) {
		return p.script.Replies[i], fmt.Sprintf("reply %d/%d", i+1, len(p.script.Replies))
	}
	label := "default"
	if p.script.Default == nil {
		label = "built-in default"
	}
	if p.next < len(p.script.Replies) {
		label += fmt.Sprintf(" (no reply left fits turn %d, model %q)", turn, model)
	}
	if p.script.Default != nil {
		return *p.script.Default, label
	}
	return DefaultReply(), label
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
	// The path is the agent's, percent-decoded: its controls are shown on
	// the terminal `wfb mock serve` logs to, never obeyed.
	fmt.Fprintln(p.Log, termtext.Show(line, ""))
}
