package wfb

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestCodecZstdIsTheNameInResultsFiles stops a rename of the codec from
// orphaning every body already stored: results files written so far hold
// "zstd" in transcripts.codec and exchanges.codec, and a reader decodes
// only the codec it names.
func TestCodecZstdIsTheNameInResultsFiles(t *testing.T) {
	if CodecZstd != "zstd" {
		t.Errorf("CodecZstd = %q; stored bodies say \"zstd\"", CodecZstd)
	}
}

// TestDecodeBodyDecodesOnlyToTheRecordedSize stops a reader of a results
// file (which may come from anywhere) from decoding a forged body past the
// size its row records: a longer or shorter body is named, an unknown codec
// or a size over MaxDecodedBytes is refused before decoding, and a body of
// the recorded size comes back whole.
func TestDecodeBodyDecodesOnlyToTheRecordedSize(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat(`{"type":"message"}`+"\n", 100))
	data := enc.EncodeAll(body, nil)
	tests := []struct {
		name  string
		codec string
		size  int64
		want  string // "" for the body back whole
	}{
		{"the recorded size", CodecZstd, int64(len(body)), ""},
		{"longer than recorded", CodecZstd, int64(len(body)) - 1, "decodes to more than the 1899 bytes recorded"},
		{"shorter than recorded", CodecZstd, int64(len(body)) + 1, "decodes to 1900 bytes, not the 1901 recorded"},
		{"an unknown codec", "gzip", int64(len(body)), `body codec "gzip": only zstd is known`},
		{"over the bound", CodecZstd, MaxDecodedBytes + 1, "wfb decodes at most 268435456 (256 MiB)"},
		{"a negative size", CodecZstd, -1, "recorded as -1 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeBody(tc.codec, data, tc.size)
			switch {
			case tc.want == "" && (err != nil || !bytes.Equal(got, body)):
				t.Errorf("DecodeBody = %d bytes, %v; want the %d bytes back", len(got), err, len(body))
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("DecodeBody = %d bytes, %v; want an error saying %q", len(got), err, tc.want)
			}
		})
	}
}

// TestEncodeBodyRoundTripsOnEitherSideOfTheSmallBound stops the two
// encoders of EncodeBody (the fastest level up to SmallBodyBytes, the
// default past it) from writing anything DecodeBody does not read back
// byte for byte, empty bodies included, or from storing a body that does
// not compress.
func TestEncodeBodyRoundTripsOnEitherSideOfTheSmallBound(t *testing.T) {
	line := `{"type":"assistant","message":{"content":[{"type":"text","text":"reviewing auth.go"}]}}` + "\n"
	long := strings.Repeat(line, 3*SmallBodyBytes/len(line))
	for _, size := range []int{0, 1, 2 << 10, SmallBodyBytes, SmallBodyBytes + 1, len(long)} {
		body := []byte(long[:size])
		data := EncodeBody(body)
		got, err := DecodeBody(CodecZstd, data, int64(size))
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%d bytes: DecodeBody(EncodeBody) = %d bytes, %v; want the body back", size, len(got), err)
		}
		if size >= 2<<10 && len(data) > size/4 {
			t.Errorf("%d bytes: compressed to %d bytes, want a quarter or less of a repetitive body", size, len(data))
		}
	}
}
