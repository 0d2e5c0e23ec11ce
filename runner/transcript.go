package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// DefaultMaxTranscriptBytes bounds the agent output kept per attempt,
// uncompressed, as the meter bounds its exchange bodies.
const DefaultMaxTranscriptBytes = 64 << 20

// transcriptCut is how long a line may grow before it is kept in pieces:
// a piece ends at a comma, so a secret (which holds none) is never split
// between two pieces and escapes redaction.
const transcriptCut = 1 << 20

// transcriptCapture keeps an agent's whole stdout for the transcripts
// table as it is read: each line is redacted (store.Redact, then the
// session's secret values) and kept, at most max bytes. Up to
// wfb.SmallBodyBytes are held as they are and compressed at the end by
// wfb.EncodeBody, as the meter compresses its bodies (one set of encoder
// tables for both, in the size most sessions print); past that they are
// streamed into a zstd encoder of their own, so memory holds the
// compressed stream and one line.
type transcriptCapture struct {
	mu        sync.Mutex
	max       int64
	secrets   *store.Scrubber // every encoding of the session's secret values
	head      bytes.Buffer    // the kept bytes, while they are few
	enc       *zstd.Encoder   // past wfb.SmallBodyBytes: the kept bytes' stream, into out
	out       bytes.Buffer
	sum       hash.Hash
	line      []byte // the line being read, not yet kept
	raw, kept int64
	truncated bool
}

// newTranscriptCapture keeps at most max bytes (DefaultMaxTranscriptBytes
// when max <= 0), scrubbing the secret values given.
func newTranscriptCapture(max int64, secrets []string) *transcriptCapture {
	if max <= 0 {
		max = DefaultMaxTranscriptBytes
	}
	return &transcriptCapture{max: max, sum: sha256.New(), secrets: store.NewScrubber(secrets...)}
}

// Write takes stdout as it is read. It never fails: what is over the bound
// is counted and dropped.
func (c *transcriptCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.raw += int64(n)
	if c.truncated {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			c.cutLongLine()
			break
		}
		c.line = append(c.line, p[:i+1]...)
		p = p[i+1:]
		c.keep(c.line)
		c.line = c.line[:0]
	}
	return n, nil
}

// cutLongLine keeps the head of a line that outgrew transcriptCut, up to
// its last comma, so the pending line stays small.
func (c *transcriptCapture) cutLongLine() {
	if len(c.line) < transcriptCut {
		return
	}
	at := bytes.LastIndexByte(c.line, ',')
	if at < 0 {
		at = len(c.line) - 1 // no safe place: keep it whole so far
	}
	c.keep(c.line[:at+1])
	c.line = append(c.line[:0], c.line[at+1:]...)
}

// keep redacts b and adds it to the kept bytes, up to the bound.
func (c *transcriptCapture) keep(b []byte) {
	if c.truncated || len(b) == 0 {
		return
	}
	s := store.Redact(string(b))
	s = c.secrets.Text(s)
	if room := c.max - c.kept; int64(len(s)) > room {
		s = s[:room]
		c.truncated = true
	}
	c.sum.Write([]byte(s))
	c.kept += int64(len(s))
	if c.enc == nil && c.head.Len()+len(s) <= wfb.SmallBodyBytes {
		c.head.WriteString(s)
		return
	}
	if c.enc == nil {
		// One goroutine and a small window: many sessions run at once,
		// each with its own stream, and a transcript compresses well
		// regardless.
		enc, err := zstd.NewWriter(&c.out, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic("runner: zstd encoder: " + err.Error()) // only bad options fail
		}
		enc.Write(c.head.Bytes())
		c.enc, c.head = enc, bytes.Buffer{}
	}
	c.enc.Write([]byte(s))
}

// finish keeps the last unterminated line and returns the transcript,
// with the prompt the agent was given, scrubbed.
func (c *transcriptCapture) finish(prompt string) *store.Transcript {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep(c.line)
	c.line = nil
	var data []byte
	if c.enc == nil {
		data = wfb.EncodeBody(c.head.Bytes())
	} else {
		c.enc.Close()
		data = bytes.Clone(c.out.Bytes())
	}
	prompt = c.secrets.Text(prompt)
	return &store.Transcript{
		Prompt:    prompt, // the store redacts it as it writes it (store.DB.clean)
		Codec:     wfb.CodecZstd,
		Data:      data,
		RawSize:   c.raw,
		KeptSize:  c.kept,
		Truncated: c.truncated,
		SHA256:    hex.EncodeToString(c.sum.Sum(nil)),
	}
}
