package main

import "bytes"

// testStreams returns streams backed by buffers, with an empty environment
// unless env is given.
func testStreams(stdin string, env map[string]string) (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	s := &Streams{
		In:     bytes.NewBufferString(stdin),
		Out:    out,
		ErrOut: errOut,
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
	}
	return s, out, errOut
}
