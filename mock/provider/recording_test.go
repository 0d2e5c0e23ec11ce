package provider

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// served is a Messages or Responses exchange of reply, served by the
// provider over HTTP, as the metering proxy keeps it.
func served(t *testing.T, seq int, reply Reply, responses bool) Exchange {
	t.Helper()
	p := startProvider(t, &Script{Replies: []Reply{reply}})
	path, api, protocol := "/v1/messages", APIMessages, "anthropic-messages"
	body := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"go"}]}`
	if responses {
		path, api, protocol = "/v1/responses", APIResponses, "openai-responses"
		body = `{"model":"gpt-5-codex","input":"go"}`
	}
	resp, err := http.Post(p.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Exchange{Seq: seq, Method: http.MethodPost, API: api, Protocol: protocol, Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Request: []byte(body), Response: out, Whole: true}
}

// TestAnAttemptsModelRequestsBecomeItsRepliesInOrder stops `wfb mock
// record` from replaying an attempt in another order, from inventing
// replies for requests that were no model turn (a probe, an unanswered
// request), or from dropping where each reply came from.
func TestAnAttemptsModelRequestsBecomeItsRepliesInOrder(t *testing.T) {
	ttfb := int64(250)
	messages := served(t, 2, Reply{Text: "first", Usage: FullUsage(10, 2, 0, 0)}, false)
	messages.TTFBMS = &ttfb
	exchanges := []Exchange{
		{Seq: 1, Method: http.MethodHead, Status: 200, Whole: true},
		messages,
		{Seq: 3, Method: http.MethodPost, API: APIMessages, Protocol: "anthropic-messages"}, // answered nothing
		served(t, 4, Reply{Status: 529, Error: json.RawMessage(`{"type":"overloaded_error","message":"Overloaded"}`)}, true),
		{Seq: 5, Method: http.MethodPost, Protocol: "gemini-generate-content", Status: 200, Whole: true},
	}
	rec, err := RecordScript("att-1", exchanges, RecordOptions{Delays: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Script.Replies) != 2 || rec.Script.Replies[0].Text != "first" || rec.Script.Replies[0].DelayMS != 250 || rec.Script.Replies[1].Status != 529 {
		t.Fatalf("replies %+v, want the Messages answer (after 250 ms) then the Responses 529", rec.Script.Replies)
	}
	want := []string{
		"reply 1: request 2, anthropic-messages, status 200",
		"reply 2: request 4, openai-responses, status 529",
		"3 other requests (probes, unanswered or other APIs) have no reply",
	}
	if diff := cmp.Diff(want, rec.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	rec, err = RecordScript("att-1", exchanges[1:2], RecordOptions{})
	if err != nil || rec.Script.Replies[0].DelayMS != 0 {
		t.Errorf("without delays: %v, delay %d ms, want none", err, rec.Script.Replies[0].DelayMS)
	}
}

// TestARecordingThatCannotBeReplayedSaysWhy stops `wfb mock record` from
// writing a script that would replay something else than the attempt: no
// attempt, nothing recorded, no model turn answered, a body not kept whole
// or not a request it can read are the user's to fix (a RecordError, bad
// input), naming the attempt and the request; a file that could not be
// read back is an error of its own.
func TestARecordingThatCannotBeReplayedSaysWhy(t *testing.T) {
	good := served(t, 1, Reply{Text: "ok", Usage: FullUsage(1, 1, 0, 0)}, false)
	cut, bad, unread := good, good, good
	cut.Whole, cut.Request, cut.Response = false, nil, nil
	bad.Request = []byte("not json")
	damaged := errors.New("response body: the results file is damaged")
	unread.Err = damaged
	probe := Exchange{Seq: 1, Method: http.MethodHead, Status: 200, Err: errors.New("never read")}
	for _, c := range []struct {
		name      string
		attempt   string
		exchanges []Exchange
		user      bool // a RecordError
		want      string
	}{
		{"no attempt", "", []Exchange{good}, true, "name the attempt to record"},
		{"nothing recorded", "att-1", nil, true, `attempt "att-1" has no metered requests in /r/wfb.db`},
		{"no model turn", "att-1", []Exchange{probe}, true, `attempt "att-1" made no answered model request (1 requests, none Messages, Responses or Chat Completions)`},
		{"not kept whole", "att-1", []Exchange{cut}, true, `attempt "att-1" request 1: its bodies were not kept whole`},
		{"not a request", "att-1", []Exchange{bad}, true, `attempt "att-1" request 1: the request body is not a JSON object`},
		{"not read back", "att-1", []Exchange{unread}, false, `attempt "att-1" request 1: response body: the results file is damaged`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := RecordScript(c.attempt, c.exchanges, RecordOptions{Source: "/r/wfb.db"})
			var user *RecordError
			if err == nil || errors.As(err, &user) != c.user || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v (the user's: %v), want %q (the user's: %v)", err, errors.As(err, &user), c.want, c.user)
			}
			if !c.user && !errors.Is(err, damaged) {
				t.Errorf("err %v does not wrap why the file could not be read", err)
			}
		})
	}
	if _, err := RecordScript("att-1", []Exchange{probe, good}, RecordOptions{}); err != nil {
		t.Errorf("a request that gets no reply failed the recording: %v", err)
	}
}
