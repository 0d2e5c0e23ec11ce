package wfb

import "testing"

// TestCodecZstdIsTheNameInResultsFiles stops a rename of the codec from
// orphaning every body already stored: results files written so far hold
// "zstd" in transcripts.codec and exchanges.codec, and a reader decodes
// only the codec it names.
func TestCodecZstdIsTheNameInResultsFiles(t *testing.T) {
	if CodecZstd != "zstd" {
		t.Errorf("CodecZstd = %q; stored bodies say \"zstd\"", CodecZstd)
	}
}
