package meter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wfbench/wfb"
)

// Redacted replaces a secret in whatever the meter keeps.
const Redacted = "[REDACTED]"

// minSecret is the shortest secret value scrubbed: a shorter one (a test's
// "x") would shred every body it occurs in, and is no credential.
const minSecret = 4

// scrubber replaces an attempt's secret values, in every form they can
// take on the wire, with Redacted.
type scrubber struct {
	forms [][]byte // longest first, so a form containing another goes first
	extra func(string) string
}

// newScrubber prepares the forms of each secret: as it is, URL-encoded
// (query and path style, upper- and lower-case hex), and JSON-escaped
// (with and without HTML escaping). extra, when set, runs afterwards over
// text (wfb passes wfb.Redact, which knows key and token shapes).
func newScrubber(secrets []string, extra func(string) string) *scrubber {
	seen := map[string]bool{}
	s := &scrubber{extra: extra}
	for _, v := range secrets {
		if len(v) < minSecret {
			continue
		}
		for _, f := range secretForms(v) {
			if f != "" && !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, []byte(f))
			}
		}
	}
	slices.SortFunc(s.forms, func(a, b []byte) int { return len(b) - len(a) })
	return s
}

func secretForms(v string) []string {
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v), lowerHex(url.QueryEscape(v)), lowerHex(url.PathEscape(v))}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) == nil {
			q := strings.TrimSpace(b.String())
			forms = append(forms, q[1:len(q)-1])
		}
	}
	return forms
}

// lowerHex lower-cases the hex digits of percent escapes.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerByte(b[i+1]), lowerByte(b[i+2])
		}
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + ('a' - 'A')
	}
	return c
}

// bytes scrubs b, returning b itself when nothing changed.
func (s *scrubber) bytes(b []byte) []byte {
	for _, f := range s.forms {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(Redacted))
		}
	}
	if s.extra != nil && len(b) > 0 {
		if r := s.extra(string(b)); r != string(b) {
			b = []byte(r)
		}
	}
	return b
}

func (s *scrubber) text(v string) string { return string(s.bytes([]byte(v))) }

// MaxKeptHeaderBytes bounds what the meter keeps of one header set (a
// request's or a response's), names and values together; MaxKeptHeaderValue
// bounds one value. The headers are relayed whole; only what is kept is cut.
const (
	MaxKeptHeaderBytes = 64 << 10
	MaxKeptHeaderValue = 8 << 10
)

// HeadersNotKept is the header the meter adds to a kept header set it cut
// at MaxKeptHeaderBytes, saying what was left out.
const HeadersNotKept = "Wfb-Headers-Not-Kept"

// keptHeader is the header as the meter keeps it: credential headers
// dropped, the rest scrubbed, each value cut at MaxKeptHeaderValue (saying
// how much more there was) and the set at MaxKeptHeaderBytes (the headers
// past it left out, counted in HeadersNotKept): an upstream's 8 MiB header
// would otherwise be kept whole, outside the attempt's budget for bodies.
func (s *scrubber) keptHeader(h http.Header) http.Header {
	out := http.Header{}
	names := slices.Sorted(maps.Keys(h))
	total, dropped, droppedBytes := 0, 0, 0
	for _, k := range names {
		// A credential header is forwarded, never kept.
		if wfb.IsSecretName(k) {
			continue
		}
		for _, raw := range h[k] {
			v := s.text(raw) // whole, then cut: a secret across the cut goes too
			if len(v) > MaxKeptHeaderValue {
				v = wfb.Clip(v, MaxKeptHeaderValue) + fmt.Sprintf(" [%d bytes more not kept]", len(v)-MaxKeptHeaderValue)
			}
			if total+len(k)+len(v) > MaxKeptHeaderBytes {
				dropped++
				droppedBytes += len(k) + len(raw)
				continue
			}
			total += len(k) + len(v)
			out.Add(k, v)
		}
	}
	if dropped > 0 {
		out.Set(HeadersNotKept, fmt.Sprintf("%d header values (%d bytes) past the %d KiB kept of a header set", dropped, droppedBytes, MaxKeptHeaderBytes>>10))
	}
	return out
}

// keptPath is a request path and query as the meter keeps it: query
// parameters whose names say key, token or secret have their values
// replaced, and the attempt's secrets are scrubbed.
func (s *scrubber) keptPath(path, rawQuery string) string {
	if rawQuery == "" {
		return s.text(path)
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil && hasValue && wfb.IsSecretName(n) {
			parts[i] = name + "=" + Redacted
		}
	}
	return s.text(path + "?" + strings.Join(parts, "&"))
}
