package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/store"
)

// decodeTranscript decompresses t and checks it against its digest.
func decodeTranscript(t *testing.T, tr *store.Transcript) string {
	t.Helper()
	out, err := wfb.DecodeBody(tr.Codec, tr.Data, tr.KeptSize)
	if err != nil {
		t.Fatalf("decode transcript: %v", err)
	}
	if int64(len(out)) != tr.KeptSize {
		t.Errorf("decoded %d bytes, kept_size says %d", len(out), tr.KeptSize)
	}
	if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != tr.SHA256 {
		t.Errorf("digest of the decoded transcript does not match sha256")
	}
	return string(out)
}

// The evidence tails keep 64 KiB; the transcript keeps the agent's whole
// output, from its first event, with a secret the agent echoed scrubbed
// before it was compressed (so it is in neither the blob nor the file).
func TestTheWholeAgentOutputIsKeptRedactedAndDigestBound(t *testing.T) {
	r := newRig(t)
	const key = "plainproxykey0123456789"
	echo := provider.Tool{Name: "Bash", Input: map[string]any{"command": "echo the key is $ANTHROPIC_API_KEY"}}
	long := strings.Repeat("a long answer. ", 10_000) // ~150 KB, over the 64 KiB tail
	p := startProvider(t, defaultReply(provider.Reply{Text: long + " key: " + key, Tools: []provider.Tool{echo}, Usage: provider.FullUsage(1, 1, 0, 0)}))
	row := r.session(t, p, func(s *SessionSpec) { s.Env["ANTHROPIC_API_KEY"] = key })
	requireOK(t, row)
	tr, err := r.db.Transcript(context.Background(), row.AttemptID)
	if err != nil {
		t.Fatalf("read the transcript: %v", err)
	}
	if tr.Truncated || tr.KeptSize < int64(len(long)) || tr.RawSize < int64(len(long)) {
		t.Errorf("transcript raw %d kept %d truncated %v, want the whole output (> %d bytes)", tr.RawSize, tr.KeptSize, tr.Truncated, len(long))
	}
	text := decodeTranscript(t, &tr)
	if tr.Prompt != "review the change" {
		t.Errorf("transcript prompt %q, want the session's", tr.Prompt)
	}
	first, _, _ := strings.Cut(text, "\n")
	if !strings.Contains(row.StdoutTail, "earlier bytes dropped") || strings.Contains(row.StdoutTail, first) {
		t.Errorf("the stdout tail was expected to lose the first line %q", wfb.Clip(first, 100))
	}
	if !strings.Contains(text, `"type":"result"`) || !strings.HasPrefix(first, "{") {
		t.Errorf("transcript does not hold the agent's events: %q", wfb.Clip(text, 300))
	}
	if strings.Contains(text, key) || !strings.Contains(text, store.Redacted) {
		t.Errorf("the echoed key was not scrubbed from the transcript")
	}
	if bytes.Contains(tr.Data, []byte(key)) {
		t.Error("the key is in the compressed transcript")
	}
}

// An agent that never started has no transcript: not measured, not empty.
func TestAnAgentThatNeverStartedHasNoTranscript(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, &provider.Script{})
	row := r.session(t, p, func(s *SessionSpec) { s.AgentBin = filepath.Join(r.tmp, "no-such-agent") })
	if _, err := r.db.Transcript(context.Background(), row.AttemptID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("transcript of a spawn failure: err %v, want not found", err)
	}
}

// Output over the bound is counted, not kept, and the row says so.
func TestAnOverlongTranscriptIsCutAtTheBoundAndSaysSo(t *testing.T) {
	c := newTranscriptCapture(1000, nil)
	line := strings.Repeat("x", 99) + "\n"
	for range 50 {
		c.Write([]byte(line))
	}
	tr := c.finish("")
	if !tr.Truncated || tr.KeptSize != 1000 || tr.RawSize != 5000 {
		t.Fatalf("raw %d kept %d truncated %v, want 5000, 1000, true", tr.RawSize, tr.KeptSize, tr.Truncated)
	}
	if got := decodeTranscript(t, tr); got != strings.Repeat(line, 10) {
		t.Errorf("kept bytes are not the first 1000 printed")
	}
}

// A transcript that outgrows what is held before it is compressed
// (wfb.SmallBodyBytes) is the same bytes whichever way it was compressed:
// the held head goes into the stream first, nothing lost or doubled at
// the switch, and its digest still matches.
func TestATranscriptPastTheSmallBoundKeepsEveryByteInOrder(t *testing.T) {
	for _, lines := range []int{10, wfb.SmallBodyBytes/100 - 1, wfb.SmallBodyBytes/100 + 1, 3 * wfb.SmallBodyBytes / 100} {
		c := newTranscriptCapture(0, nil)
		var want strings.Builder
		for i := range lines {
			line := fmt.Sprintf("%07d %s\n", i, strings.Repeat("y", 91))
			c.Write([]byte(line))
			want.WriteString(line)
		}
		tr := c.finish("")
		if got := decodeTranscript(t, tr); got != want.String() {
			t.Errorf("%d lines: the transcript decodes to %d bytes, not the %d printed", lines, len(got), want.Len())
		}
	}
}

// A secret split across two reads, or inside a line long enough to be
// kept in pieces, is still scrubbed: redaction runs on whole lines, and a
// long line is cut only at a comma.
func TestASecretSplitAcrossReadsOrInALongLineIsScrubbed(t *testing.T) {
	const key = "plainproxykey0123456789"
	c := newTranscriptCapture(0, []string{key})
	c.Write([]byte(`{"text":"the key is plainproxy`))
	c.Write([]byte("key0123456789 and sk-ant-api03-abcdefghijklmnopqrstuvwxyz\"}\n"))
	filler := strings.Repeat(`"word",`, transcriptCut/7+10)
	for i := 0; i < 3; i++ {
		c.Write([]byte(filler + `"` + key + `",`))
	}
	c.Write([]byte("\n"))
	text := decodeTranscript(t, c.finish(""))
	if strings.Contains(text, key) || strings.Contains(text, "sk-ant-api03") {
		t.Errorf("a secret survived in the transcript")
	}
	if n := strings.Count(text, store.Redacted); n != 5 {
		t.Errorf("%d redactions, want 5 (two in the first line, three in the long one)", n)
	}
}
