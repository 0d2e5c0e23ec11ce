package wfb

import "strings"

// secretWords are the words that make a name a secret's, in any case and
// anywhere in it: ANTHROPIC_API_KEY, GH_TOKEN, CLIENT_SECRET, DB_PASSWD,
// AWS_CREDENTIALS, CLAUDE_CODE_OAUTH_TOKEN, an Authorization or Cookie
// header, a ?key= query parameter.
var secretWords = []string{"key", "token", "secret", "password", "passwd", "credential", "auth", "cookie"}

// IsSecretName is the secret rule: whether a name — of an environment
// variable, a header or a query parameter — says its value is a
// credential. Such a value never comes from the bench file, and every
// value an agent is given under such a name is scrubbed from whatever wfb
// keeps: a session's row, transcript and metered exchanges, and what
// `wfb proxy` keeps. A credential header is not kept at all.
//
// The rule errs towards secrecy: a name that merely mentions a word
// (MONKEY_COUNT) costs a scrubbed value or a bench literal refused; a
// secret whose name the rule missed would be written to the results file.
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
