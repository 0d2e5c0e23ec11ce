package wfb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// redactions run in order; each keeps the text around the secret (a header
// name, a variable name, quotes) so the redacted evidence still reads.
var redactions = []struct {
	hints []string              // lower-case text, one of which every match contains: a cheap pre-check
	keyed bool                  // every match has a separator right after the hint (see separatorAfter)
	re    func() *regexp.Regexp // compiled on first use (see lazyRE)
	repl  string
}{
	// Authorization headers, whatever the scheme: "Authorization: Bearer x",
	// "authorization": "Basic x".
	{[]string{"authorization"}, true, lazyRE(`(?i)(\bauthorization` + quote + sep + quote + `)(?:` + already + `|[^"'\r\n,}\\]+)`), "${1}" + Redacted},
	// x-api-key as a header line or a JSON/Python mapping entry.
	{[]string{"x-api-key"}, true, lazyRE(`(?i)(\bx-api-key` + quote + sep + quote + `)(?:` + already + `|[^"'\s,}\\]+)`), "${1}" + Redacted},
	// NAME=value and "NAME": "value" where NAME names a secret. The name
	// must END in the suffix, so "input_tokens": 12 is left alone. A quoted
	// value may hold spaces; an unquoted one ends at a delimiter.
	{secretHints, true, lazyRE(`(?i)(` + secretName + `["']?` + sep + `)"(?:[^"\\]|\\.)*"`), `${1}"` + Redacted + `"`},
	{secretHints, true, lazyRE(`(?i)(` + secretName + `["']?` + sep + `)'[^']*'`), `${1}'` + Redacted + `'`},
	{secretHints, true, lazyRE(`(?i)(` + secretName + quote + sep + quote + `)(?:` + already + `|[^\s"',;&}\]\\]+)`), "${1}" + Redacted},
	// Bearer tokens anywhere in free text.
	{[]string{"bearer"}, false, lazyRE(`(?i)(\bbearer\s+)[a-z0-9._~+/=\-]+`), "${1}" + Redacted},
	// Credentials in a URL's userinfo (https://user:key@host, or a key as
	// the user name): a base URL or proxy an agent echoes in an error.
	{[]string{"://"}, false, lazyRE(`(?i)(\b[a-z][a-z0-9+.\-]*://)(?:` + already + `|[^/?#@\s"'<>]+)@`), "${1}" + Redacted + "@"},
	// Anthropic (sk-ant-...), OpenAI (sk-..., sk-proj-...) style keys, bare.
	{[]string{"sk-"}, false, lazyRE(`\bsk-[A-Za-z0-9_\-]{16,}`), Redacted},
	// Google API keys (Gemini's GEMINI_API_KEY/GOOGLE_API_KEY): AIza and 35
	// more characters, printed bare by an agent that echoes its config.
	{[]string{"aiza"}, false, lazyRE(`\bAIza[0-9A-Za-z_\-]{35}`), Redacted},
	// GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained
	// (github_pat_), which an agent with gh set up can print from its
	// environment or a git remote.
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, false, lazyRE(`\bgh[pousr]_[A-Za-z0-9]{20,}`), Redacted},
	{[]string{"github_pat_"}, false, lazyRE(`\bgithub_pat_[A-Za-z0-9_]{20,}`), Redacted},
}

// lazyRE compiles pattern the first time it is needed: most text needs
// none of the redactions' regexps (see candidates), and every process of
// wfb links this package, the stand-in agent and the session launcher
// among them: they would otherwise compile all eleven patterns at start-up.
func lazyRE(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// Pieces of the patterns above. quote also matches an escaped quote, so a
// JSON document embedded in a JSON string is covered; already matches an
// earlier redaction first, which keeps Redact idempotent.
const (
	quote      = `(?:\\?["'])?`
	sep        = `\s*[:=]\s*`
	already    = `\[REDACTED\]`
	secretName = `\b[a-z0-9_]*(?:api_key|_token|_secret|password)`
)

var secretHints = []string{"api_key", "_token", "_secret", "password"}

// Redact masks secrets in free text before it is stored: API keys in the
// Anthropic, OpenAI and Google styles, GitHub tokens, bearer tokens, Authorization and x-api-key
// header values, credentials in a URL (scheme://user:pass@host), and
// NAME=value or "NAME": "value" pairs whose NAME ends in API_KEY, _TOKEN,
// _SECRET or PASSWORD. Each secret becomes [REDACTED].
func Redact(s string) string {
	if s == "" {
		return s
	}
	found := candidates(s)
	for i, r := range redactions {
		if found&(1<<i) != 0 {
			s = r.re().ReplaceAllString(s, r.repl)
		}
	}
	return s
}

// candidates is the set (bit i: redactions[i]) of patterns that may match
// s: those with a hint in s, in any case. A hint that names a key
// (authorization, x-api-key, a secret-name suffix) counts only where a
// separator (":" or "=", after an optional quote and spaces) follows it,
// as it must in every match: "input_tokens": 12 runs no regexp. ASCII text
// is scanned once, folding case as it goes; text with other bytes is
// lower-cased first, as the regexps' (?i) folds it (K, the Kelvin sign,
// to k; ſ, the long s, to s).
func candidates(s string) uint32 {
	lower := s
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			// ToLower leaves ſ (long s) alone; (?i) folds it to s.
			lower = strings.ReplaceAll(strings.ToLower(s), "ſ", "s")
			break
		}
	}
	var found uint32
	for i := 0; i < len(lower); i++ {
		c := lower[i] | 0x20 // ASCII letters fold to lower case; every hint starts with a letter, '_' or ':'
		if !hintStart[c] && !hintStart[lower[i]] {
			continue
		}
		for k, r := range redactions {
			if found&(1<<k) != 0 {
				continue
			}
			for _, h := range r.hints {
				if hasFoldPrefix(lower[i:], h) && (!r.keyed || separatorAfter(lower, i+len(h))) {
					found |= 1 << k
					break
				}
			}
		}
	}
	return found
}

// hintStart holds the first byte of every hint.
var hintStart = func() (t [256]bool) {
	for _, r := range redactions {
		for _, h := range r.hints {
			t[h[0]] = true
		}
	}
	return t
}()

// hasFoldPrefix says whether s starts with the lower-case ASCII hint h,
// ASCII letters in s in either case.
func hasFoldPrefix(s, h string) bool {
	if len(s) < len(h) {
		return false
	}
	for j := 0; j < len(h); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != h[j] {
			return false
		}
	}
	return true
}

// separatorAfter says whether s[i:] starts as a keyed pattern needs after
// its name: an optional quote (itself optionally escaped), optional
// spaces, then ':' or '='.
func separatorAfter(s string, i int) bool {
	if i < len(s) && s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
		i += 2
	} else if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && strings.IndexByte(" \t\n\r\f\v", s[i]) >= 0 {
		i++
	}
	return i < len(s) && (s[i] == ':' || s[i] == '=')
}

// RedactJSON is Redact for a JSON document that stays one: every string
// (and every member name) passes through Redact, and every string or
// number under a member whose name Redact takes for a secret's —
// "X-Api-Key": ["…"], "Authorization": […], "api_key": 12 — becomes
// Redacted whole. Redact over the document's text would stop at the
// bracket: {"X-Api-Key":["k"]} became {"X-Api-Key":[REDACTED]"k"]}, no
// longer JSON and the key still there. A document nothing changed comes
// back as it was, byte for byte; one that changed comes back compact.
// ok is false when s is not one JSON document.
func RedactJSON(s string) (out string, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var b bytes.Buffer
	changed, err := redactJSONValue(dec, &b, false)
	if err != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false // more than one document
	}
	if !changed {
		return s, true
	}
	return b.String(), true
}

// redactJSONValue copies the next value of dec to b, redacted; secret says
// a member name above it named a secret. It says whether anything changed.
func redactJSONValue(dec *json.Decoder, b *bytes.Buffer, secret bool) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := map[json.Delim]byte{'{': '}', '[': ']'}[t]
		if closing == 0 {
			return false, fmt.Errorf("unexpected %v", t)
		}
		b.WriteByte(byte(t))
		changed := false
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			inner := secret
			if t == '{' {
				nt, err := dec.Token()
				if err != nil {
					return false, err
				}
				name, _ := nt.(string)
				r := Redact(name)
				changed = changed || r != name
				writeJSONString(b, r)
				b.WriteByte(':')
				inner = inner || secretMember(name)
			}
			c, err := redactJSONValue(dec, b, inner)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		if _, err := dec.Token(); err != nil {
			return false, err
		}
		b.WriteByte(closing)
		return changed, nil
	case string:
		r := Redact(t)
		if secret {
			r = Redacted
		}
		writeJSONString(b, r)
		return r != t, nil
	case json.Number:
		if secret {
			writeJSONString(b, Redacted)
			return true, nil
		}
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return false, nil
}

// secretMember says whether Redact takes a member of this name for a
// secret's: "name": "v" loses its value.
func secretMember(name string) bool {
	q, _ := json.Marshal(name)
	return Redact(string(q)+`:"v"`) != Redact(string(q))+`:"v"`
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           //nolint:errcheck // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
