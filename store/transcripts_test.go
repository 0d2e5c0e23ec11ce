package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wfbench/wfb"
)

// TestAStoredTranscriptIsKeptOnlyAsItsDigestSays stops a reader (the
// viewer) showing kept bytes that are not the ones recorded: Kept decodes
// a stored transcript and checks it against its digest, and a transcript
// whose digest does not match is refused, said in words.
func TestAStoredTranscriptIsKeptOnlyAsItsDigestSays(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := `{"type":"result","result":"done"}` + "\n"
	sum := sha256.Sum256([]byte(kept))
	for _, tc := range []struct {
		id, sha, want string
	}{
		{"att-good", hex.EncodeToString(sum[:]), ""},
		{"att-bad", strings.Repeat("0", 64), "the kept bytes do not match their sha256"},
	} {
		r := okResult(tc.id)
		r.Transcript = &Transcript{Codec: wfb.CodecZstd, Data: enc.EncodeAll([]byte(kept), nil),
			RawSize: int64(len(kept)), KeptSize: int64(len(kept)), SHA256: tc.sha}
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		tr, err := d.Transcript(ctx, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Kept()
		switch {
		case tc.want == "" && (err != nil || string(got) != kept):
			t.Errorf("%s: Kept = %q, %v; want the transcript back", tc.id, got, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: Kept = %q, %v; want %q", tc.id, got, err, tc.want)
		}
	}
}
