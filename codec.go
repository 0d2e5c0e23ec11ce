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
