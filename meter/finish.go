package meter

import (
	"io"
	"net/http"
	"time"

	"github.com/wfbench/wfb"
)

// finish hands the flight to a goroutine that reads its usage, keeps its
// bodies and files its record: the agent's connection is free at once.
func (f *flight) finish() {
	if f.rec.Latency == 0 {
		f.rec.Latency = time.Since(f.start)
	}
	go f.settle()
}

// settle turns the flight into its record and files it.
func (f *flight) settle() {
	a := f.a
	defer a.inflight.Done()
	rec := f.rec
	facts := analyseRequest(rec.Method, f.rest+"?"+f.rawQuery, f.body)
	rec.RequestedModel, rec.streamAsked = facts.model, facts.streamAsked
	rec.bodyDigest, rec.canonDigest = facts.digest, facts.canon
	if f.bodyCut {
		// Only the head was read: no retry or fallback can be told.
		rec.bodyDigest, rec.canonDigest = "", ""
	}
	if f.proto != nil {
		rec.Protocol = f.proto.name()
	}
	if f.reader != nil {
		o := f.reader.finish(rec.Status, f.complete)
		rec.Billed, rec.Usage, rec.ResponseModel, rec.ErrorType = o.billed, o.usage, o.model, o.errorType
		rec.Surcharges = o.surcharges
		if o.detail != "" && rec.ErrorDetail == "" {
			rec.ErrorDetail = o.detail
		}
	}
	rec.Path = a.scrub.keptPath(f.rest, f.rawQuery)
	rec.ErrorDetail = wfb.Clip(a.scrub.text(rec.ErrorDetail), 1000)
	got := a.budget.take(len(f.body))
	rec.Exchange = Exchange{
		RequestHeader:  a.scrub.keptHeader(f.reqHeader),
		ResponseHeader: a.scrub.keptHeader(f.respHeader),
		Request:        keep(f.body[:got], f.bodyCut || got < len(f.body), a.scrub),
		Response:       keep(f.resp.bytes(), f.resp.truncated, a.scrub),
	}
	f.body = nil
	f.bodyShare.Release()
	rec = a.add(rec)
	if s := a.p.opts.Sink; s != nil {
		s.Record(rec)
	}
}

// serveUnattributed answers a request whose path names no live attempt:
// 404, nothing forwarded, recorded without an attempt. Its body is read
// (bounded) to be counted, not kept: without an attempt there are no
// secrets to scrub it of.
func (p *Proxy) serveUnattributed(w http.ResponseWriter, r *http.Request, start time.Time) {
	n, _ := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, p.opts.MaxRequestBytes))
	scrub := newScrubber(nil, p.opts.Redact)
	rec := Record{
		ID: newRecordID(), Seq: int(p.unattributedSeq.Add(1)), Method: r.Method,
		Path: scrub.keptPath(r.URL.EscapedPath(), r.URL.RawQuery), StartedAt: start.UTC(),
		Status: http.StatusNotFound, RequestBytes: n, ProxyError: ErrUnattributed,
		ErrorDetail: "no live attempt has this base URL",
	}
	if proto := detect(r.Method, r.URL.Path); proto != nil {
		rec.Protocol = proto.name()
	}
	body := guessShape(r.URL.Path).errorBody(http.StatusNotFound, ErrUnattributed, rec.ErrorDetail)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	m, _ := w.Write(body)
	rec.ResponseBytes = int64(m)
	rec.Latency = time.Since(start)
	rec.Exchange = Exchange{
		RequestHeader:  scrub.keptHeader(r.Header),
		ResponseHeader: scrub.keptHeader(w.Header()),
		Request:        Body{Truncated: n > 0},
		Response:       keep(body, false, scrub),
	}
	if p.opts.Sink != nil {
		p.opts.Sink.Record(rec)
	}
}
