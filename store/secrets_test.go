package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScrubberCatchesASecretInEveryEncoding stops a key of no recognisable
// shape from surviving because the agent printed it percent-encoded (in
// either case, or fully encoded) or JSON-escaped.
func TestScrubberCatchesASecretInEveryEncoding(t *testing.T) {
	const key = "plain-key/0123 456"
	s := NewScrubber(key, "short")
	for _, in := range []string{
		key,
		"plain%2Dkey%2F0123%20456",          // upper-case hex
		"plain%2dkey%2f0123+456",            // lower-case hex, query-style space
		"plain%2dkey%2F0123%20456",          // mixed
		"%70%6C%61%69%6E-key/0123 456",      // letters encoded too
		`plain\u002dkey\/0123\u0020456`,     // JSON escapes
		`plain\u002Dkey\u002F0123 456`,      // JSON escapes, upper-case hex
		"plain%2D" + `key\/0123` + "%20456", // a mix of both
	} {
		got := s.Text("before " + in + " after")
		if got != "before "+Redacted+" after" {
			t.Errorf("%q scrubbed to %q", in, got)
		}
	}
	// Controls: a different value, a short value, and plain text pass.
	for _, in := range []string{"plain-key/0123 457", "short", "input_tokens: 12"} {
		if got := s.Text(in); got != in {
			t.Errorf("%q changed to %q", in, got)
		}
	}
	var none *Scrubber
	if none.Text(key) != key {
		t.Error("a nil scrubber changed text")
	}
}

// TestScrubberCatchesABase64OrUpperCasedSecret stops a key from surviving
// because the agent printed it upper-cased or base64-encoded — alone, in
// either alphabet, padded or not, or inside a longer base64 text (a basic
// auth header, an encoded JSON body) wherever it falls in the 3-byte
// groups. A reversed key is not recognised (docs/agents-and-real-apis.md says so).
func TestScrubberCatchesABase64OrUpperCasedSecret(t *testing.T) {
	const key = "plain-key/0123 456?~~>>"
	s := NewScrubber(key)
	if got := s.Text("x " + strings.ToUpper(key) + " y"); got != "x "+Redacted+" y" {
		t.Errorf("upper-cased: %q", got)
	}
	if got := s.Text("x PLAIN%2dKEY%2F0123+456?~~>> y"); got != "x "+Redacted+" y" {
		t.Errorf("upper-cased, percent-encoded: %q", got)
	}
	encs := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "std-raw": base64.RawStdEncoding,
		"url": base64.URLEncoding, "url-raw": base64.RawURLEncoding,
	}
	for name, enc := range encs {
		for _, before := range []string{"", "a", "ab", "user:", "{\"k\":\""} {
			for _, after := range []string{"", "z", "yz", "\"}"} {
				in := enc.EncodeToString([]byte(before + key + after))
				got := s.Text(in)
				// Left: the encoding of the bytes around the key, plus at most
				// two characters that mix its first or last bits with theirs,
				// and padding.
				room := len(enc.EncodeToString([]byte(before+after))) + 6
				if !strings.Contains(got, Redacted) || len(got)-len(Redacted) > room {
					t.Errorf("%s of %q+key+%q: %q scrubbed to %q", name, before, after, in, got)
				}
			}
		}
	}
	if got := s.Text(`"` + base64.StdEncoding.EncodeToString([]byte(key)) + `"`); got != `"`+Redacted+`"` {
		t.Errorf("a base64 key alone was not scrubbed whole: %q", got)
	}
	// Controls: another value's encoding and ordinary base64 text pass.
	for _, in := range []string{base64.StdEncoding.EncodeToString([]byte("plain-key/0123 457?~~>>")),
		base64.StdEncoding.EncodeToString([]byte("an ordinary sentence of some length"))} {
		if got := s.Text(in); got != in {
			t.Errorf("%q changed to %q", in, got)
		}
	}
}

// TestRegisteredSecretsNeverReachAnyColumn stops a registered secret from
// reaching the file through a column Redact does not know to look at: the
// session id, the model, a per-model usage row (two of which scrub to the
// same name: the row is still written), the artifact and a score's
// matches.
func TestRegisteredSecretsNeverReachAnyColumn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, filepath.Join(dir, "wfb.db"))
	if err != nil {
		t.Fatal(err)
	}
	const key = "proxykey-0123456789"
	d.ScrubSecrets(key, "offline")
	if err := d.CreateRun(ctx, Run{ID: "run-1", Kind: "session", StartedAt: t0, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	r := okResult("att-1")
	r.SessionID, r.Model, r.AgentVersion, r.Verdict = key, "model "+key, "2.0 "+key, key
	r.ModelUsage = []ModelUsage{{Model: key}, {Model: "proxykey%2D0123456789"}, {Model: "claude-sonnet"}}
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.SessionID != Redacted || len(r.ModelUsage) != 3 || r.ModelUsage[1].Model != Redacted+" #2" {
		t.Errorf("caller's row: session %q, models %+v", r.SessionID, r.ModelUsage)
	}
	if err := d.InsertArtifact(ctx, "att-1", "review-output.json", []byte(`{"summary":"`+key+`"}`)); err != nil {
		t.Fatal(err)
	}
	sc := Score{AttemptID: "att-1", ScoredAt: t0, LabelsDigest: "d", Matches: `[{"label_id":"l","finding_id":"` + key + `"}]`,
		Findings: `[{"id":"f","evidence":"` + key + `"}]`, Labels: `[{"id":"` + key + `"}]`}
	if err := d.InsertScore(ctx, &sc); err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, d, `SELECT model FROM model_usage WHERE model = 'claude-sonnet'`); len(got) != 1 {
		t.Errorf("an ordinary model name was lost: %v", got)
	}
	// Open (the rows still in the WAL), then closed (checkpointed).
	for _, phase := range []string{"open", "closed"} {
		if phase == "closed" {
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		}
		all := filesBytes(t, dir)
		for _, form := range []string{key, "proxykey%2D", "proxykey%2d"} {
			if bytes.Contains(all, []byte(form)) {
				t.Errorf("%s: %q reached the file", phase, form)
			}
		}
		if !bytes.Contains(all, []byte(Redacted)) {
			t.Errorf("%s: no %s in the file: the values were dropped, not scrubbed", phase, Redacted)
		}
	}
}

// filesBytes is every file in dir (the db and any -wal/-shm), concatenated.
func filesBytes(t *testing.T, dir string) []byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}
