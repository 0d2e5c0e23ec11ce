// Package inflight bounds the memory that request bodies held at once may
// take: a server that reads each body whole (to forward it, to record it)
// bounds one body, and a client that sends many at once must wait for room
// instead of growing the server without end.
package inflight

import (
	"bytes"
	"context"
	"io"
)

// unit is the grain of a Budget: a body takes whole MiBs of it.
const unit = 1 << 20

// Budget is a number of bytes shared by the bodies in flight. A body takes
// its share before it is read and gives it back once it is let go. The
// zero value is not usable; see New.
type Budget struct {
	tokens chan struct{} // one per unit taken
	turn   chan struct{} // held by the one taker filling its share
}

// New returns a budget of n bytes (at least one unit).
func New(n int64) *Budget {
	return &Budget{tokens: make(chan struct{}, max(n/unit, 1)), turn: make(chan struct{}, 1)}
}

// Size is the budget's capacity in bytes.
func (b *Budget) Size() int64 { return int64(cap(b.tokens)) * unit }

// Share is what one body took; give it back with Release.
type Share struct {
	b     *Budget
	units int
}

// Take waits until n bytes (rounded up to whole MiBs, at most the whole
// budget) are free and takes them, or returns ctx's error having taken
// nothing. Takers are served one at a time, so two that each hold part of
// what they need never wait on each other; holders never wait on takers.
func (b *Budget) Take(ctx context.Context, n int64) (Share, error) {
	units := int(min(max((n+unit-1)/unit, 1), int64(cap(b.tokens))))
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		return Share{}, ctx.Err()
	}
	defer func() { <-b.turn }()
	for i := range units {
		select {
		case b.tokens <- struct{}{}:
		case <-ctx.Done():
			Share{b, i}.Release()
			return Share{}, ctx.Err()
		}
	}
	return Share{b, units}, nil
}

// Release gives the share back. The zero Share releases nothing.
func (s Share) Release() {
	for range s.units {
		<-s.b.tokens
	}
}

// ReadBody reads r whole into a buffer of the declared length when there
// is one (contentLength from 0 to limit): a body of known size costs that
// size, where io.ReadAll's doublings cost up to twice as much. The caller
// bounds r itself (http.MaxBytesReader).
func ReadBody(r io.Reader, contentLength, limit int64) ([]byte, error) {
	if contentLength < 0 || contentLength > limit {
		return io.ReadAll(r)
	}
	// bytes.MinRead spare: the read that finds EOF needs no growth.
	buf := bytes.NewBuffer(make([]byte, 0, contentLength+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
