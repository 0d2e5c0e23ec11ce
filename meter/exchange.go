package meter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/wfbench/wfb"
)

// DefaultMaxExchangeBytes bounds the bodies kept per attempt, uncompressed.
const DefaultMaxExchangeBytes = 64 << 20

// Exchange is one request and its response as the meter keeps them: the
// transcript of an attempt, and what a mock script can be recorded from.
type Exchange struct {
	// RequestHeader and ResponseHeader hold no credential header
	// (Authorization, x-api-key, x-goog-api-key, Cookie, anything whose
	// name says key, token or secret), and the attempt's secrets are
	// scrubbed from the rest.
	RequestHeader  http.Header
	ResponseHeader http.Header
	Request        Body
	Response       Body // for SSE, the whole stream as received; gzip decoded
}

// Body is one body, scrubbed of the attempt's secrets, then compressed.
type Body struct {
	Codec string // wfb.CodecZstd; "" when nothing was kept
	Data  []byte // compressed
	// Size is the length of the kept bytes, uncompressed; SHA256 (hex) is
	// their digest: decompress Data, hash it, and it matches.
	Size   int64
	SHA256 string
	// Truncated says only the first Size bytes were kept: the attempt's
	// budget ran out (or, for a request, the body was over the limit).
	Truncated bool
}

// Decode returns the kept bytes of b, uncompressed, checked against its
// digest.
func (b Body) Decode() ([]byte, error) {
	if b.Codec == "" {
		return nil, nil
	}
	if b.Codec != wfb.CodecZstd {
		return nil, fmt.Errorf("body codec %q: only %s is known", b.Codec, wfb.CodecZstd)
	}
	out, err := wfb.DecodeBody(b.Codec, b.Data, b.Size)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != b.SHA256 {
		return nil, fmt.Errorf("body digest mismatch: the kept bytes are not the ones recorded")
	}
	return out, nil
}

// keep scrubs raw, digests and compresses it.
func keep(raw []byte, truncated bool, s *scrubber) Body {
	clean := s.bytes(raw)
	sum := sha256.Sum256(clean)
	return Body{
		Codec:     wfb.CodecZstd,
		Data:      wfb.EncodeBody(clean),
		Size:      int64(len(clean)),
		SHA256:    hex.EncodeToString(sum[:]),
		Truncated: truncated,
	}
}

// budget is what an attempt may still keep, uncompressed, shared by all its
// requests.
type budget struct{ left atomic.Int64 }

// take reserves up to n bytes and returns how many it got.
func (b *budget) take(n int) int {
	for {
		left := b.left.Load()
		got := min(int64(n), max(left, 0))
		if got == 0 || b.left.CompareAndSwap(left, left-got) {
			return int(got)
		}
	}
}

// capture collects a body as it passes, up to what the budget allows, in
// pooled segments: a growing buffer would clear and copy the whole body
// again at every doubling, on the agent's path. bytes joins them once,
// after the answer was relayed.
type capture struct {
	b         *budget
	segs      []*[]byte // each relayBufferSize long; the last filled up to n
	n         int
	truncated bool
}

func (c *capture) write(p []byte) {
	if c.truncated {
		return
	}
	n := c.b.take(len(p))
	q := p[:n]
	for len(q) > 0 {
		off := c.n % relayBufferSize
		if off == 0 && c.n/relayBufferSize == len(c.segs) {
			c.segs = append(c.segs, relayBuffers.Get().(*[]byte))
		}
		k := copy((*c.segs[len(c.segs)-1])[off:], q)
		c.n += k
		q = q[k:]
	}
	if n < len(p) {
		c.truncated = true
	}
}

// bytes returns what was captured, in one slice, and gives the segments
// back to the pool: call it once.
func (c *capture) bytes() []byte {
	out := make([]byte, 0, c.n)
	for _, s := range c.segs {
		out = append(out, (*s)[:min(relayBufferSize, c.n-len(out))]...)
		relayBuffers.Put(s)
	}
	c.segs = nil
	return out
}
