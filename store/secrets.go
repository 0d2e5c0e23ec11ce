package store

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MinSecretBytes is the shortest value scrubbed by value: a shorter one (the
// mock provider's "offline") would shred ordinary words, and is no
// credential.
const MinSecretBytes = 8

// Scrubber replaces known secret values in text with Redacted, in every
// form an agent can print them: as they are, in any letter case,
// base64-encoded (standard and URL alphabets, padded or not, alone or
// inside a longer base64 text at any of its three alignments), and each
// of those percent-encoded (any byte, hex digits in either case, e.g. %2D
// or %2d, '+' for a space) and JSON-escaped (\u002d, \/, \"), in any mix.
// Other transformations (a reversed value, hex, another encoding) are not
// recognised. Pattern-based Redact catches values shaped like keys; a
// Scrubber catches the environment's own values whatever their shape. The
// zero value and nil scrub nothing.
type Scrubber struct {
	values []string  // with their base64 forms, longest first, so a secret containing another goes whole
	starts [256]bool // the bytes a match can start with
}

// NewScrubber returns a Scrubber for values; values shorter than
// MinSecretBytes are ignored.
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range values {
		if len(v) < MinSecretBytes {
			continue
		}
		for _, f := range append([]string{v}, base64Forms(v)...) {
			if slices.Contains(s.values, f) {
				continue
			}
			s.values = append(s.values, f)
			s.starts[lower(f[0])], s.starts[upper(f[0])] = true, true
			s.starts['%'], s.starts['\\'] = true, true
			if f[0] == ' ' {
				s.starts['+'] = true
			}
		}
	}
	slices.SortFunc(s.values, func(a, b string) int { return len(b) - len(a) })
	return s
}

// base64Forms are the base64 texts that carry v: its whole encoding in
// both alphabets, padded and not, and, for v inside a longer encoded text,
// the characters that depend on v's bytes alone at each of the three
// alignments v can start at (the one or two characters at either end that
// share bits with the neighbouring bytes stay; they carry at most 10 bits
// of v between them).
func base64Forms(v string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
		raw := enc.WithPadding(base64.NoPadding)
		for k := range 3 { // k bytes of the longer text before v in v's first group
			e := raw.EncodeToString(append(make([]byte, k), v...))
			n := k + len(v)
			stable := n/3*4 + n%3 // a group's last 1 or 2 bytes fix that many characters
			drop := []int{0, 2, 3}[k]
			out = append(out, e[drop:stable])
		}
	}
	return out
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// sameLetter is whether a and b are one byte up to ASCII letter case.
func sameLetter(a, b byte) bool { return lower(a) == lower(b) }

// Text returns t with every form of every secret replaced by Redacted.
func (s *Scrubber) Text(t string) string {
	if s == nil || len(s.values) == 0 || t == "" {
		return t
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(t); {
		n := 0
		if s.starts[t[i]] {
			n = s.matchAt(t, i)
		}
		if n == 0 {
			i++
			continue
		}
		b.WriteString(t[last:i])
		b.WriteString(Redacted)
		i += n
		last = i
	}
	if last == 0 {
		return t
	}
	b.WriteString(t[last:])
	return b.String()
}

// matchAt is the length of the secret (any encoding) at t[i:], or 0.
func (s *Scrubber) matchAt(t string, i int) int {
	for _, v := range s.values {
		if n := encodedAt(t, i, v); n > 0 {
			return n
		}
	}
	return 0
}

// encodedAt is the length of v, each byte in any of its forms, at t[i:];
// 0 when v is not there. A byte with more than one form that fits (rare:
// a backslash) tries each.
func encodedAt(t string, i int, v string) int {
	if v == "" {
		return 0
	}
	want := v[0]
	for _, w := range byteForms(t, i, want) {
		if len(v) == 1 {
			return w
		}
		if n := encodedAt(t, i+w, v[1:]); n > 0 {
			return w + n
		}
	}
	return 0
}

// byteForms are the lengths of the forms of byte want (a letter in either
// case) found at t[i:]: literal (1), '+' for a space (1), JSON \/ \" \\
// (2), %HH (3), \u00HH (6).
func byteForms(t string, i int, want byte) []int {
	if i >= len(t) {
		return nil
	}
	var out []int
	c := t[i]
	if sameLetter(c, want) || (c == '+' && want == ' ') {
		out = append(out, 1)
	}
	switch c {
	case '%':
		if i+2 < len(t) && sameHex(t[i+1], t[i+2], want) {
			out = append(out, 3)
		}
	case '\\':
		if i+1 < len(t) && t[i+1] == want && (want == '/' || want == '"' || want == '\\') {
			out = append(out, 2)
		}
		if want < 0x80 && i+5 < len(t) && t[i+1] == 'u' && t[i+2] == '0' && t[i+3] == '0' && sameHex(t[i+4], t[i+5], want) {
			out = append(out, 6)
		}
	}
	return out
}

// sameHex is whether two hex digits spell want, up to letter case.
func sameHex(hi, lo, want byte) bool {
	h := hexByte(hi, lo)
	return h >= 0 && sameLetter(byte(h), want)
}

// hexByte is the byte two hex digits (either case) spell, or -1.
func hexByte(hi, lo byte) int {
	h, l := hexDigit(hi), hexDigit(lo)
	if h < 0 || l < 0 {
		return -1
	}
	return h<<4 | l
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Result scrubs, in r, every text field an agent's output or artifact can
// fill (see Result.scrubText).
func (s *Scrubber) Result(r *Result) { r.scrubText(s.Text) }

// scrubText passes every text field of r that the agent controls — what it
// printed, what it named itself, its session id, its models, its verdict,
// its error — through f. A model name f changes into one already listed
// gets a suffix: model_usage keeps one row per model, and the attempt's
// row must still be written.
func (r *Result) scrubText(f func(string) string) {
	for _, p := range []*string{&r.AgentVersion, &r.Model, &r.ErrorDetail, &r.SessionID, &r.Verdict,
		&r.ResultEvent, &r.StdoutTail, &r.StderrTail, &r.UsageCheck} {
		*p = f(*p)
	}
	seen := map[string]bool{}
	for _, u := range r.ModelUsage {
		seen[u.Model] = true
	}
	for i, u := range r.ModelUsage {
		m := f(u.Model)
		if m == u.Model {
			continue // a name listed twice by the agent stays refused
		}
		for n := 2; seen[m]; n++ {
			m = fmt.Sprintf("%s #%d", f(u.Model), n)
		}
		seen[m] = true
		r.ModelUsage[i].Model = m
	}
	r.ToolUses = scrubToolNames(r.ToolUses, f)
}

// scrubToolNames passes each tool name through f (which may lengthen it:
// [REDACTED] is longer than many a secret); names that become one are
// counted as one, each clipped to its bound (normalToolUses).
func scrubToolNames(uses []ToolUse, f func(string) string) []ToolUse {
	if len(uses) == 0 {
		return uses
	}
	out := make([]ToolUse, len(uses))
	for i, u := range uses {
		out[i] = ToolUse{Tool: f(u.Tool), Calls: u.Calls}
	}
	return normalToolUses(out)
}

// secretSet is the secrets a DB scrubs from everything it writes.
type secretSet struct {
	mu       sync.Mutex
	values   []string
	scrubber *Scrubber
}

// ScrubSecrets adds values (the environment's secrets an agent was given)
// to those this handle scrubs, in every form (see Scrubber), from every
// text it writes from then on: a result's agent-controlled columns, its
// per-model usage, its evidence, an artifact, a score's matches, a
// request's text. Safe for concurrent use.
func (d *DB) ScrubSecrets(values ...string) {
	d.secrets.mu.Lock()
	defer d.secrets.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) >= MinSecretBytes && !slices.Contains(d.secrets.values, v) {
			d.secrets.values = append(d.secrets.values, v)
			added = true
		}
	}
	if added {
		d.secrets.scrubber = NewScrubber(d.secrets.values...)
	}
}

// clean is s as this handle stores free text: the registered secrets
// scrubbed by value, then Redact.
func (d *DB) clean(s string) string {
	d.secrets.mu.Lock()
	sc := d.secrets.scrubber
	d.secrets.mu.Unlock()
	return Redact(sc.Text(s))
}
