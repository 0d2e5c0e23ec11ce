package meter

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSecretsNeverReachTheKeptExchange stops the transcript from leaking
// the attempt's credentials: credential headers are dropped, and a secret
// value in a body, a header or a URL-encoded query is scrubbed in every
// form it takes — while the provider still gets the real key.
func TestSecretsNeverReachTheKeptExchange(t *testing.T) {
	const secret = `s3cr3t/v+al"ue&x=1`
	jsonEscaped := `s3cr3t/v+al\"ue\u0026x=1`
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", "got "+secret)
		messagesJSON(usageFull)(w, r)
	})
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1", secret)
	body := `{"model":"m","messages":[{"role":"user","content":"the key is ` + jsonEscaped + ` ok"}]}`
	post(t, a.BaseURL()+"/v1/messages?note="+url.QueryEscape(secret)+"&api_key=plain-value-1234", body,
		"X-Api-Key", secret, "X-Custom", "Bearer "+secret, "Cookie", "session=abc")
	if got := up.received()[0]; got.Header.Get("X-Api-Key") != secret || !strings.Contains(got.Body, jsonEscaped) {
		t.Fatalf("the upstream did not get the real request: %v", got.Header)
	}
	r := end(t, a).Records[0]
	reqBody, err := r.Exchange.Request.Decode()
	if err != nil {
		t.Fatal(err)
	}
	respBody, err := r.Exchange.Response.Decode()
	if err != nil {
		t.Fatal(err)
	}
	kept := []string{string(reqBody), string(respBody), r.Path, r.ErrorDetail}
	for _, h := range []http.Header{r.Exchange.RequestHeader, r.Exchange.ResponseHeader} {
		for k, vs := range h {
			kept = append(kept, k+": "+strings.Join(vs, ","))
		}
	}
	all := strings.Join(kept, "\n")
	for _, form := range []string{secret, jsonEscaped, url.QueryEscape(secret), url.PathEscape(secret), "plain-value-1234", "session=abc"} {
		if strings.Contains(all, form) {
			t.Errorf("the kept exchange holds %q:\n%s", form, all)
		}
	}
	for _, h := range []string{"X-Api-Key", "Cookie"} {
		if _, ok := r.Exchange.RequestHeader[h]; ok {
			t.Errorf("credential header %s was kept", h)
		}
	}
	if got := r.Exchange.RequestHeader.Get("X-Custom"); got != "Bearer "+Redacted {
		t.Errorf("X-Custom kept as %q", got)
	}
	if !strings.Contains(string(reqBody), "the key is "+Redacted+" ok") || !strings.Contains(r.Path, "note="+Redacted) {
		t.Errorf("scrubbed forms not replaced: %s %s", reqBody, r.Path)
	}
	if m := decodeJSON(t, respBody); m["type"] != "message" {
		t.Errorf("the response is not kept whole: %s", respBody)
	}
}

// TestExchangesAreBoundedPerAttempt: past the attempt's budget, bodies are
// kept truncated and say so; what is kept matches its digest.
func TestExchangesAreBoundedPerAttempt(t *testing.T) {
	up := newUpstream(t, messagesSSE(startOf(usageFull), usageFull))
	p := startProxy(t, up.URL, Options{MaxExchangeBytes: 1500})
	a := begin(t, p, "att-1")
	for range 3 {
		post(t, a.BaseURL()+"/v1/messages", `{"model":"m","stream":true}`)
	}
	log := end(t, a)
	if !log.Truncated {
		t.Error("the log does not say it was truncated")
	}
	var kept int64
	for _, r := range log.Records {
		for _, b := range []Body{r.Exchange.Request, r.Exchange.Response} {
			kept += b.Size
			got, err := b.Decode()
			if err != nil || int64(len(got)) != b.Size {
				t.Errorf("seq %d: decode %d bytes, %v; size %d", r.Seq, len(got), err, b.Size)
			}
		}
		if !r.Billed || r.Usage.Output.Value != 300 {
			t.Errorf("seq %d: a truncated transcript must not cost the usage: %+v", r.Seq, r.Usage.Output)
		}
	}
	if kept > 1500 {
		t.Errorf("kept %d bytes over a budget of 1500", kept)
	}
	last := log.Records[2].Exchange.Response
	if !last.Truncated || last.Size != 0 {
		t.Errorf("the last response: truncated %v size %d", last.Truncated, last.Size)
	}
}

// TestScrubberForms covers the wire forms of a secret one by one.
func TestScrubberForms(t *testing.T) {
	const secret = "k<e>y/&+ %"
	s := newScrubber([]string{secret, "abc"}, nil) // "abc" is too short to scrub
	for _, in := range []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		strings.ToLower(url.QueryEscape(secret)),
		`k\u003ce\u003ey/\u0026+ %`,
		`k<e>y/&+ %`,
	} {
		if got := s.text("[" + in + "]"); got != "["+Redacted+"]" {
			t.Errorf("%q scrubbed to %q", in, got)
		}
	}
	if got := s.text("abc"); got != "abc" {
		t.Errorf("a 3-byte secret was scrubbed: %q", got)
	}
	extra := newScrubber(nil, func(s string) string { return strings.ReplaceAll(s, "sk-x", Redacted) })
	if got := extra.text("a sk-x b"); got != "a "+Redacted+" b" {
		t.Errorf("the extra redaction did not run: %q", got)
	}
}
