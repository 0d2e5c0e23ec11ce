package wfb

// CodecZstd names the compression of every body wfb keeps (a transcript,
// an exchange's request and response bodies): Zstandard, one frame. It is
// the value of transcripts.codec and exchanges.codec in the results file.
const CodecZstd = "zstd"
