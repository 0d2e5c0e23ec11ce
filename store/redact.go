package store

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// redactions run in order; each keeps the text around the secret (a header
// name, a variable name, quotes) so the redacted evidence still reads.
var redactions = []struct {
	hints []string // lower-case text, one of which every match contains: a cheap pre-check
	re    *regexp.Regexp
	repl  string
}{
	// Authorization headers, whatever the scheme: "Authorization: Bearer x",
	// "authorization": "Basic x".
	{[]string{"authorization"}, regexp.MustCompile(`(?i)(\bauthorization` + quote + sep + quote + `)(?:` + already + `|[^"'\r\n,}\\]+)`), "${1}" + Redacted},
	// x-api-key as a header line or a JSON/Python mapping entry.
	{[]string{"x-api-key"}, regexp.MustCompile(`(?i)(\bx-api-key` + quote + sep + quote + `)(?:` + already + `|[^"'\s,}\\]+)`), "${1}" + Redacted},
	// NAME=value and "NAME": "value" where NAME names a secret. The name
	// must END in the suffix, so "input_tokens": 12 is left alone. A quoted
	// value may hold spaces; an unquoted one ends at a delimiter.
	{secretHints, regexp.MustCompile(`(?i)(` + secretName + `["']?` + sep + `)"(?:[^"\\]|\\.)*"`), `${1}"` + Redacted + `"`},
	{secretHints, regexp.MustCompile(`(?i)(` + secretName + `["']?` + sep + `)'[^']*'`), `${1}'` + Redacted + `'`},
	{secretHints, regexp.MustCompile(`(?i)(` + secretName + quote + sep + quote + `)(?:` + already + `|[^\s"',;&}\]\\]+)`), "${1}" + Redacted},
	// Bearer tokens anywhere in free text.
	{[]string{"bearer"}, regexp.MustCompile(`(?i)(\bbearer\s+)[a-z0-9._~+/=\-]+`), "${1}" + Redacted},
	// Credentials in a URL's userinfo (https://user:key@host, or a key as
	// the user name): a base URL or proxy an agent echoes in an error.
	{[]string{"://"}, regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://)(?:` + already + `|[^/?#@\s"'<>]+)@`), "${1}" + Redacted + "@"},
	// Anthropic (sk-ant-...), OpenAI (sk-..., sk-proj-...) style keys, bare.
	{[]string{"sk-"}, regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), Redacted},
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
// Anthropic and OpenAI styles, bearer tokens, Authorization and x-api-key
// header values, credentials in a URL (scheme://user:pass@host), and
// NAME=value or "NAME": "value" pairs whose NAME ends in API_KEY, _TOKEN,
// _SECRET or PASSWORD. Each secret becomes [REDACTED].
func Redact(s string) string {
	if s == "" {
		return s
	}
	lower := strings.ToLower(s)
	for _, r := range redactions {
		if !slices.ContainsFunc(r.hints, func(h string) bool { return strings.Contains(lower, h) }) {
			continue
		}
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}
