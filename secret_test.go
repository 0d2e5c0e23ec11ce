package wfb

import "testing"

// TestIsSecretNameIsTheUnionOfTheRulesItReplaced stops a name any of wfb's
// three former secret rules caught (the bench file's and sessions', wfb
// proxy's, the meter's for headers) from slipping past the one rule, and
// the rule from taking ordinary names for secrets.
func TestIsSecretNameIsTheUnionOfTheRulesItReplaced(t *testing.T) {
	for _, name := range []string{
		"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
		"CLIENT_SECRET", "DB_PASSWORD", "DB_PASSWD", "AWS_CREDENTIALS", "GH_AUTH",
		"anthropic_api_key", "Authorization", "Proxy-Authorization", "x-api-key",
		"x-goog-api-key", "Cookie", "Set-Cookie", "key", "access_token",
	} {
		if !IsSecretName(name) {
			t.Errorf("IsSecretName(%q) = false, want true", name)
		}
	}
	for _, name := range []string{
		"HOME", "PATH", "TMPDIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
		"Content-Type", "anthropic-version", "model", "",
	} {
		if IsSecretName(name) {
			t.Errorf("IsSecretName(%q) = true, want false", name)
		}
	}
}
