package wfb

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// CodecZstd names the compression of every body wfb keeps (a transcript,
// an exchange's request and response bodies): Zstandard, one frame. It is
// the value of transcripts.codec and exchanges.codec in the results file.
const CodecZstd = "zstd"

// MaxDecodedBytes bounds a kept body as DecodeBody decodes it: four times
// the default bound on what an attempt keeps (the meter's exchanges and the
// runner's transcripts, 64 MiB each).
const MaxDecodedBytes = 256 << 20

// SmallBodyBytes is the size up to which EncodeBody compresses a body at
// zstd's fastest level; a larger one is compressed at the default level.
// What costs a small body is the encoder's match tables, not the matching:
// the default level's are 1.25 MiB, written at random by even a 2 KiB
// body, so a process pays ~320 page faults to compress its first one (and
// again for each of the encoder's concurrent encodes it alternates
// between); the fastest level's are 256 KiB, and keep such a body within a
// few percent of the default's size (2 KiB: 3%, 64 KiB: 6%), where a
// large body loses 10%.
const SmallBodyBytes = 128 << 10

// smallBodies compresses bodies of up to SmallBodyBytes, one at a time:
// each takes well under a millisecond, and a second encoder would be a
// second set of tables to fault in. largeBodies compresses the rest, two
// at a time, their tables allocated as needed.
var (
	smallBodies = sync.OnceValue(func() *zstd.Encoder {
		return newBodyEncoder(zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	})
	largeBodies = sync.OnceValue(func() *zstd.Encoder {
		return newBodyEncoder(zstd.WithEncoderConcurrency(2), zstd.WithEncoderLevel(zstd.SpeedDefault))
	})
)

func newBodyEncoder(opts ...zstd.EOption) *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, append(opts, zstd.WithLowerEncoderMem(true))...)
	if err != nil {
		panic(fmt.Sprintf("wfb: zstd encoder: %v", err)) // only bad options fail
	}
	return enc
}

// EncodeBody compresses a body wfb keeps (an exchange's body, a short
// transcript) into one zstd frame, the form DecodeBody reads: the one
// encoder of kept bodies, safe for concurrent use, each encoder built on
// first use. Its level depends on the size (see SmallBodyBytes).
func EncodeBody(src []byte) []byte {
	enc := smallBodies
	if len(src) > SmallBodyBytes {
		enc = largeBodies
	}
	return enc().EncodeAll(src, make([]byte, 0, len(src)/4+64))
}

// zstdDecoders are stream decoders (concurrency 1: no goroutines of their
// own), one per DecodeBody in flight, made as DecodeBody needs them.
var zstdDecoders sync.Pool

// DecodeBody decompresses a kept body of size bytes, as its row records
// them: the one decoder of stored transcripts and exchange bodies, for the
// meter, the store and every reader. The data comes from a results file,
// which may have been merged from anywhere: a few KiB of zstd can stand for
// GiBs, so it is decoded as a stream that stops one byte past size, and a
// size over MaxDecodedBytes is refused undecoded.
func DecodeBody(codec string, data []byte, size int64) ([]byte, error) {
	if codec != CodecZstd {
		return nil, fmt.Errorf("body codec %q: only %s is known", codec, CodecZstd)
	}
	if size < 0 || size > MaxDecodedBytes {
		return nil, fmt.Errorf("the body is recorded as %d bytes; wfb decodes at most %d (%d MiB)", size, MaxDecodedBytes, MaxDecodedBytes>>20)
	}
	dec, _ := zstdDecoders.Get().(*zstd.Decoder)
	if dec == nil {
		var err error
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(MaxDecodedBytes))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
	}
	defer zstdDecoders.Put(dec)
	// A bytes.Reader, not a bytes.Buffer: the decoder decodes a small
	// Buffer whole at once, however large it decodes to.
	if err := dec.Reset(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("decode %s body: %w", codec, err)
	}
	defer dec.Reset(nil) //nolint:errcheck // lets go of data
	// One byte more than recorded tells a body that is longer.
	out := make([]byte, size+1)
	n, err := io.ReadFull(dec, out)
	switch {
	case err == nil:
		return nil, fmt.Errorf("the body decodes to more than the %d bytes recorded for it (damaged or forged)", size)
	case err != io.EOF && err != io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("decode %s body: %w", codec, err)
	case int64(n) < size:
		return nil, fmt.Errorf("the body decodes to %d bytes, not the %d recorded for it (damaged or forged)", n, size)
	}
	return out[:n], nil
}
