package meter

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxInflatedBytes bounds how much of a gzip-encoded response the meter
// decodes to read its usage and keep its exchange. Past it the meter stops
// decoding: the response's usage is not measured (a count's Why says so)
// and its kept body is cut. The agent is relayed the encoded bytes
// whatever their size decoded.
const MaxInflatedBytes = 64 << 20

// decodeAs prepares the reading of a body with header h's
// Content-Encoding: none (or identity) is read as it passes; gzip through
// an inflater; another encoding (the meter asked for none other) is kept
// as relayed and its usage is not read.
func (f *flight) decodeAs(h http.Header) {
	enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	switch enc {
	case "", "identity":
	case "gzip", "x-gzip":
		f.inflate = newInflater(MaxInflatedBytes, f.read)
	default:
		if f.reader != nil {
			f.reader.overflow = fmt.Sprintf("the response is %s-encoded, which the meter does not decode; its usage was not read", enc)
		}
	}
}

// endDecode waits for the inflater, if any, to have handed on all it
// decoded, and records why it stopped early.
func (f *flight) endDecode() {
	if f.inflate == nil {
		return
	}
	why := f.inflate.close()
	f.inflate = nil
	if why == "" {
		return
	}
	f.resp.truncated = true
	if f.reader != nil && f.reader.overflow == "" {
		f.reader.overflow = why
	}
}

// inflater decodes a gzip body written to it on a goroutine of its own,
// handing the decoded bytes to sink, up to a bound. Writes never fail:
// once decoding stopped they are dropped.
type inflater struct {
	pw   *io.PipeWriter
	done chan struct{}
	why  string // set before done closes when decoding stopped early
}

func newInflater(limit int64, sink func([]byte)) *inflater {
	pr, pw := io.Pipe()
	z := &inflater{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(z.done)
		defer pr.Close() // later writes return at once
		zr, err := gzip.NewReader(pr)
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				z.why = "the response's gzip encoding does not decode (" + err.Error() + "); its usage was not read"
			}
			return
		}
		zr.Multistream(true)
		buf := make([]byte, 32<<10)
		var n int64
		for {
			k, err := zr.Read(buf)
			if n += int64(k); n > limit {
				sink(buf[:int64(k)-(n-limit)])
				z.why = fmt.Sprintf("the response decodes to more than %d MiB, the meter's bound; it stopped decoding and the usage was not read", limit>>20)
				return
			}
			sink(buf[:k])
			switch {
			case err == io.EOF, err == io.ErrUnexpectedEOF:
				return // a cut body: the flight says it was not complete
			case err != nil:
				z.why = "the response's gzip encoding does not decode (" + err.Error() + "); its usage was not read"
				return
			}
		}
	}()
	return z
}

func (z *inflater) write(p []byte) { z.pw.Write(p) } //nolint:errcheck // decoding stopped: dropped

// close ends the input and waits for the decoder; it returns why decoding
// stopped early, or "".
func (z *inflater) close() string {
	z.pw.Close()
	<-z.done
	return z.why
}
