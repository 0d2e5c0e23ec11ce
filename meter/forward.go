package meter

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wfbench/wfb/internal/inflight"
)

// flight is one attributed request on its way through the proxy.
type flight struct {
	a        *Attempt
	rec      Record
	rest     string // escaped path after the attempt prefix
	rawQuery string
	target   *url.URL
	proto    protocol // nil: not a model request
	start    time.Time

	reqHeader  http.Header
	body       []byte
	bodyCut    bool           // the body was over the limit: only its head was read
	bodyShare  inflight.Share // the body's room in the attempt's bodies in flight
	respHeader http.Header
	reader     *bodyReader
	inflate    *inflater // a gzip body being decoded for the reader and the capture
	resp       capture
	complete   bool // the upstream body ended cleanly
}

func newFlight(a *Attempt, seq int, r *http.Request, rest string, start time.Time) *flight {
	f := &flight{a: a, rest: rest, rawQuery: r.URL.RawQuery, start: start, reqHeader: r.Header}
	f.rec = Record{ID: newRecordID(), AttemptID: a.id, Seq: seq, Method: r.Method, StartedAt: start.UTC()}
	f.target = a.target(rest, r.URL.RawQuery)
	f.proto = detect(r.Method, f.target.Path)
	f.resp.b = &a.budget
	return f
}

func newRecordID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "req-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// target is the upstream URL for a request: the base's path, then the
// rest of the request's path, query kept.
func (a *Attempt) target(rest, rawQuery string) *url.URL {
	u := *a.upstream
	raw := strings.TrimSuffix(u.EscapedPath(), "/") + rest
	u.RawPath = raw
	if p, err := url.PathUnescape(raw); err == nil {
		u.Path = p
	} else {
		u.Path, u.RawPath = raw, ""
	}
	u.RawQuery = rawQuery
	return &u
}

// errCut says the upstream response broke off: the agent's connection must
// be dropped, not ended cleanly.
var errCut = errors.New("response cut")

// serve forwards the request and relays the answer. Whatever happens, the
// deferred finish records it, on the abort panic too.
func (f *flight) serve(w http.ResponseWriter, r *http.Request) {
	defer f.finish()
	if !f.readBody(w, r) {
		return
	}
	resp, ok := f.roundTrip(w, r)
	if !ok {
		return
	}
	if f.relay(w, r, resp) == errCut {
		panic(http.ErrAbortHandler)
	}
}

// refuseOverCap answers a request past the attempt's cap: recorded,
// answered 429 in the protocol's error shape, never forwarded. Its body is
// not read: the session is being stopped, and a runaway's bodies are what
// the cap is there to stop keeping.
func (f *flight) refuseOverCap(w http.ResponseWriter, r *http.Request) {
	defer f.finish()
	f.rec.ProxyError = ErrRequestCap
	f.answer(w, http.StatusTooManyRequests, ErrRequestCap,
		fmt.Sprintf("wfb: this attempt reached its cap of %d requests to the provider (a runaway session); the request was not forwarded", f.a.maxRequests))
}

func (f *flight) readBody(w http.ResponseWriter, r *http.Request) bool {
	limit := f.a.p.opts.MaxRequestBytes
	if !f.takeRoom(w, r, limit) {
		return false
	}
	body, err := inflight.ReadBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit)
	f.body = body
	f.rec.RequestBytes = int64(len(body))
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooLarge):
		f.bodyCut = true
		f.rec.ProxyError = ErrRequestTooLarge
		f.answer(w, http.StatusRequestEntityTooLarge, ErrRequestTooLarge, "the request body exceeds "+byteCount(limit)+"; it was not forwarded")
	case r.Context().Err() != nil:
		f.rec.ProxyError, f.rec.ErrorDetail = ErrClientGone, err.Error()
	default:
		f.rec.ProxyError = ErrRequestUnreadable
		f.answer(w, http.StatusBadRequest, ErrRequestUnreadable, err.Error())
	}
	return false
}

// takeRoom waits for room for the body among the attempt's bodies in
// flight: its declared length, or the limit when it declares none (or more,
// to be cut). It says false, recorded, when the agent went away or the
// attempt ended first.
func (f *flight) takeRoom(w http.ResponseWriter, r *http.Request, limit int64) bool {
	need := r.ContentLength
	if need < 0 || need > limit {
		need = limit
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(f.a.ctx, cancel)
	defer stop()
	share, err := f.a.bodies.Take(ctx, need)
	if err == nil {
		f.bodyShare = share
		return true
	}
	if r.Context().Err() != nil {
		f.rec.ProxyError, f.rec.ErrorDetail = ErrClientGone, "gone while waiting for room among the attempt's request bodies in flight"
		return false
	}
	f.rec.ProxyError = ErrAttemptEnded
	f.answer(w, http.StatusBadGateway, ErrAttemptEnded, "the attempt ended while the request waited for room among its request bodies in flight")
	return false
}

// answer is the meter's own answer to the agent, in the protocol's shape.
func (f *flight) answer(w http.ResponseWriter, status int, kind, msg string) {
	shape := f.proto
	if shape == nil {
		shape = guessShape(f.target.Path)
	}
	body := shape.errorBody(status, kind, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	n, _ := w.Write(body)
	f.rec.Status, f.rec.ResponseBytes = status, int64(n)
	f.respHeader = w.Header().Clone()
	f.resp.write(body)
	if f.rec.ErrorDetail == "" {
		f.rec.ErrorDetail = msg
	}
}

func (f *flight) roundTrip(w http.ResponseWriter, r *http.Request) (*http.Response, bool) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(f.a.ctx, cancel)
	out, err := http.NewRequestWithContext(ctx, r.Method, f.target.String(), bytes.NewReader(f.body))
	if err != nil {
		stop()
		cancel()
		f.rec.ProxyError = ErrUpstreamFailed
		f.answer(w, http.StatusBadGateway, ErrUpstreamFailed, err.Error())
		return nil, false
	}
	out.Header = forwardHeader(r.Header)
	resp, err := f.a.p.transport.RoundTrip(out)
	if err != nil {
		stop()
		cancel()
		f.upstreamError(w, r, err)
		return nil, false
	}
	// The body's reads end with the request's context: keep it until the
	// body is closed.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { stop(); cancel() }}
	return resp, true
}

type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

func (f *flight) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	f.rec.ErrorDetail = err.Error()
	switch {
	case r.Context().Err() != nil:
		// Nobody to answer.
		f.rec.ProxyError = ErrClientGone
	case f.a.ctx.Err() != nil:
		f.rec.ProxyError = ErrAttemptEnded
		f.answer(w, http.StatusBadGateway, ErrAttemptEnded, "the attempt ended with the request in flight")
	case unreachable(err):
		f.rec.ProxyError = ErrUpstreamUnreachable
		f.answer(w, http.StatusBadGateway, ErrUpstreamUnreachable, err.Error())
	default:
		f.rec.ProxyError = ErrUpstreamFailed
		f.answer(w, http.StatusBadGateway, ErrUpstreamFailed, err.Error())
	}
}

// unreachable says the error happened before a connection to the upstream
// was usable: dialing, name resolution, or the TLS handshake.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &op) && op.Op == "dial",
		errors.As(err, &dns),
		errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert):
		return true
	}
	s := err.Error()
	return strings.Contains(s, "TLS handshake") || strings.Contains(s, "tls: ")
}

// hopHeaders are meaningful for one connection only, never forwarded.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// stripHop removes hop-by-hop headers, and those the Connection header
// names, from h.
func stripHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// forwardHeader is the agent's header as sent upstream: credentials and
// all, but no hop-by-hop header, and an Accept-Encoding of gzip when the
// agent accepts gzip, identity otherwise — the encodings the meter can
// read. Being set, it keeps the transport from decoding the body itself:
// the agent is relayed the bytes the upstream sent (a gzip bomb stays a
// few MiB of gzip), and the meter decodes its own copy, bounded (see
// inflater).
func forwardHeader(in http.Header) http.Header {
	h := in.Clone()
	stripHop(h)
	h.Set("Accept-Encoding", "identity")
	if acceptsGzip(in.Values("Accept-Encoding")) {
		h.Set("Accept-Encoding", "gzip")
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = nil // no Go default in the agent's name
	}
	return h
}

// acceptsGzip says whether an Accept-Encoding lists gzip (or *) with a
// weight above zero.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			if q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000" {
				return true
			}
		}
	}
	return false
}

// relayBufferSize is each relay buffer: the transport's read buffer, so
// that one read can take all it holds.
const relayBufferSize = 64 << 10

var relayBuffers = sync.Pool{New: func() any { b := make([]byte, relayBufferSize); return &b }}

// relay passes the upstream response to the agent as it comes and feeds
// the reader and the capture after each write (see pump).
func (f *flight) relay(w http.ResponseWriter, r *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	f.respHeader = resp.Header.Clone()
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	stripHop(h)
	f.rec.Status = resp.StatusCode
	f.rec.Streamed = isSSE(resp.Header)
	if f.proto != nil {
		f.reader = newBodyReader(f.proto.decoder(f.body), f.rec.Streamed)
	}
	f.decodeAs(resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if f.rec.Streamed {
		rc.Flush() //nolint:errcheck // a gone agent shows at the first write
	}
	// A blocked write to an agent that stopped reading must not outlive
	// the attempt.
	stop := context.AfterFunc(f.a.ctx, func() { rc.SetWriteDeadline(time.Now()) }) //nolint:errcheck
	defer stop()
	err := f.pump(w, r, rc, resp.Body)
	f.endDecode()
	if err == nil && !f.rec.Streamed {
		rc.Flush() //nolint:errcheck // the whole answer reaches the agent now
	}
	f.rec.Latency = time.Since(f.start)
	return err
}

// chunk is one read of the upstream body, handed from the reading
// goroutine to the writing one.
type chunk struct {
	buf *[]byte
	n   int
	err error
}

// readAhead reads body into pooled buffers on its own goroutine, up to two
// reads ahead of the writer, until an error or EOF (sent as the last
// chunk) or until quit is closed. done is closed when it has stopped
// touching its buffers.
func readAhead(body io.Reader, out chan<- chunk, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		bp := relayBuffers.Get().(*[]byte)
		n, err := body.Read(*bp)
		select {
		case out <- chunk{bp, n, err}:
		case <-quit:
			relayBuffers.Put(bp)
			return
		}
		if err != nil {
			return
		}
	}
}

// pump copies the body, read on a goroutine of its own so that reading
// the upstream and writing the agent overlap. A stream is flushed whenever
// no further read is waiting — the upstream has paused, so each event
// reaches the agent as soon as it is whole — and not between reads that
// follow each other at once, which would cost a write per read. It returns
// errCut when the upstream broke off.
func (f *flight) pump(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, body io.ReadCloser) error {
	chunks := make(chan chunk, 2)
	quit, done := make(chan struct{}), make(chan struct{})
	go readAhead(body, chunks, quit, done)
	defer func() {
		close(quit)
		body.Close() // unblocks a read in flight
		<-done
		for {
			select {
			case c := <-chunks:
				relayBuffers.Put(c.buf)
			default:
				return
			}
		}
	}()
	for c := range chunks {
		err := f.relayChunk(w, r, rc, chunks, c)
		relayBuffers.Put(c.buf)
		if err != nil || c.err != nil {
			return f.ended(r, err, c.err)
		}
	}
	return nil
}

// errAgentGone stops the pump after the agent could not be written to.
var errAgentGone = errors.New("agent gone")

// relayChunk writes one read to the agent, flushing a stream when no other
// read is waiting, then feeds the reader and the capture.
func (f *flight) relayChunk(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, chunks chan chunk, c chunk) error {
	if c.n == 0 {
		return nil
	}
	if f.rec.TTFB == nil {
		d := time.Since(f.start)
		f.rec.TTFB = &d
	}
	p := (*c.buf)[:c.n]
	_, werr := w.Write(p)
	if werr == nil && f.rec.Streamed && len(chunks) == 0 {
		werr = rc.Flush()
	}
	if werr != nil {
		f.gone(r, werr)
		return errAgentGone
	}
	f.rec.ResponseBytes += int64(c.n)
	if f.inflate != nil {
		f.inflate.write(p)
		return nil
	}
	f.read(p)
	return nil
}

// read feeds the body as the upstream meant it (decoded) to the reader
// and the capture.
func (f *flight) read(p []byte) {
	if f.reader != nil {
		f.reader.write(p)
	}
	f.resp.write(p)
}

// ended records how the pump ended: the agent gone (already recorded),
// the body's end, or the upstream's failure.
func (f *flight) ended(r *http.Request, werr, rerr error) error {
	switch {
	case werr != nil:
		return nil
	case rerr == io.EOF:
		f.complete = true
		return nil
	case r.Context().Err() != nil:
		f.gone(r, rerr)
		return nil
	}
	f.rec.ProxyError, f.rec.ErrorDetail = ErrUpstreamCut, rerr.Error()
	if f.a.ctx.Err() != nil {
		f.rec.ProxyError = ErrAttemptEnded
	}
	return errCut
}

// gone records that the agent could not be written to.
func (f *flight) gone(r *http.Request, err error) {
	f.rec.ProxyError, f.rec.ErrorDetail = ErrClientGone, err.Error()
	if r.Context().Err() == nil && f.a.ctx.Err() != nil {
		f.rec.ProxyError = ErrAttemptEnded
	}
}

func isSSE(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

func byteCount(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
