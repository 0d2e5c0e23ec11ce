package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// meteredRequests is an attempt's wire: a 529, then a streamed answer
// whose cache read was nonsense, with its exchange; and one unattributed
// request.
func meteredRequests() []MeteredRequest {
	return []MeteredRequest{
		{
			RequestID: "req-1", AttemptID: "att-1", Seq: 1, Protocol: "anthropic-messages", Method: "POST",
			Path: "/v1/messages?beta=true", RequestedModel: "claude-x", Status: ptr(int64(529)), StartedAt: t0,
			LatencyMS: 12, TTFBMS: ptr(int64(11)), Streamed: false, RequestBytes: 300, ResponseBytes: 80,
			ErrorType: "overloaded_error", ErrorDetail: "Overloaded",
		},
		{
			RequestID: "req-2", AttemptID: "att-1", Seq: 2, Protocol: "anthropic-messages", Method: "POST",
			Path: "/v1/messages?beta=true", RequestedModel: "claude-x", ResponseModel: "claude-x-served", Status: ptr(int64(200)),
			StartedAt: t0.Add(1e9), LatencyMS: 900, TTFBMS: ptr(int64(0)), Streamed: true, RequestBytes: 300, ResponseBytes: 2000,
			RetryOf: ptr(int64(1)), Billed: true, UsageSemantics: "anthropic",
			InputTokens: ptr(int64(2000)), OutputTokens: ptr(int64(0)), CacheCreationInputTokens: ptr(int64(1000)),
			UsageRaw: map[string]string{"usage.cache_read_input_tokens": "-5"}, UsageProblem: "usage.cache_read_input_tokens is negative (-5)",
			Exchange: &Exchange{
				RequestHeaders:  map[string][]string{"Anthropic-Version": {"2023-06-01"}},
				ResponseHeaders: map[string][]string{"Content-Type": {"text/event-stream"}},
				Codec:           wfb.CodecZstd, RequestBody: []byte{0x28, 0xb5, 1}, RequestSize: 300, RequestSHA256: "aa",
				ResponseBody: []byte{0x28, 0xb5, 2}, ResponseSize: 2000, ResponseSHA256: "bb", ResponseTruncated: true,
			},
		},
		{
			RequestID: "req-u", Seq: 1, Method: "POST", Path: "/m/dead/v1/messages", Status: ptr(int64(404)), StartedAt: t0,
			ProxyError: "unattributed", Exchange: &Exchange{RequestTruncated: true},
		},
	}
}

// TestMeteredRequestsRoundTrip: what the wire showed is stored as it was —
// NULL stays NULL (a missing figure is not 0), a measured 0 stays 0, and a
// nonsense value keeps its wire text.
func TestMeteredRequestsRoundTrip(t *testing.T) {
	d, _ := newDB(t)
	ctx := context.Background()
	want := meteredRequests()
	if err := d.InsertRequests(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := d.Requests(ctx, "att-1")
	if err != nil {
		t.Fatal(err)
	}
	strip := func(rs []MeteredRequest) []MeteredRequest {
		out := make([]MeteredRequest, len(rs))
		for i, r := range rs {
			r.Exchange = nil
			out[i] = r
		}
		return out
	}
	if diff := cmp.Diff(strip(want[:2]), got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	un, err := d.Requests(ctx, "")
	if err != nil || len(un) != 1 || un[0].RequestID != "req-u" || un[0].AttemptID != "" {
		t.Errorf("unattributed: %+v %v", un, err)
	}
	x, err := d.Exchange(ctx, "req-2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*want[1].Exchange, x); diff != "" {
		t.Errorf("exchange (-want +got):\n%s", diff)
	}
	if _, err := d.Exchange(ctx, "req-1"); err == nil {
		t.Error("an exchange never kept was found")
	}
	row := queryOne(t, d, `SELECT cache_read_input_tokens, output_tokens, usage_raw FROM requests WHERE request_id = 'req-2'`)
	if diff := cmp.Diff([]any{nil, int64(0), `{"usage.cache_read_input_tokens":"-5"}`}, row); diff != "" {
		t.Errorf("stored usage (-want +got):\n%s", diff)
	}
}

// TestMeteredRequestsAreAppendOnlyAndChecked: a request is recorded once;
// the schema refuses negative counts, a retry of a later request, and
// edits.
func TestMeteredRequestsAreAppendOnlyAndChecked(t *testing.T) {
	d, _ := newDB(t)
	ctx := context.Background()
	if err := d.InsertRequests(ctx, meteredRequests()); err != nil {
		t.Fatal(err)
	}
	again := meteredRequests()[:1]
	again[0].RequestID = "req-other"
	if err := d.InsertRequests(ctx, again); err == nil || !strings.Contains(err.Error(), "already recorded") {
		t.Errorf("a second seq 1 for att-1: %v", err)
	}
	for _, q := range []string{
		`UPDATE requests SET input_tokens = 1 WHERE request_id = 'req-2'`,
		`DELETE FROM exchanges`,
		`INSERT INTO requests (request_id, seq, method, path, started_at, latency_ms, streamed, request_bytes, response_bytes, billed, input_tokens)
			VALUES ('r', 1, 'POST', '/', 'x', 0, 0, 0, 0, 0, -5)`,
		`INSERT INTO requests (request_id, attempt_id, seq, method, path, started_at, latency_ms, streamed, request_bytes, response_bytes, billed, retry_of)
			VALUES ('r', 'att-9', 2, 'POST', '/', 'x', 0, 0, 0, 0, 0, 2)`,
		`INSERT INTO requests (request_id, seq, method, path, started_at, latency_ms, streamed, request_bytes, response_bytes, billed)
			VALUES ('r', 1, 'POST', '/', 'x', 0, 0, 0, 0, 1)`,
	} {
		if _, _, err := d.Query(ctx, q); err == nil {
			t.Errorf("accepted: %s", q)
		}
	}
	bad := meteredRequests()[:1]
	bad[0].RequestID, bad[0].Seq = "req-x", 0
	if err := d.InsertRequests(ctx, bad); err == nil {
		t.Error("seq 0 accepted")
	}
}

// TestMeteredRequestsAreRedacted: free text on the wire (a path, an error
// message, headers) goes through Redact like every other text column.
func TestMeteredRequestsAreRedacted(t *testing.T) {
	d, _ := newDB(t)
	ctx := context.Background()
	key := "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
	r := meteredRequests()[1]
	r.Path = "/v1/messages?api_key=" + key
	r.ErrorDetail = "upstream said: invalid x-api-key " + key
	r.Exchange.RequestHeaders = map[string][]string{"X-Note": {"Bearer " + key}}
	if err := d.InsertRequests(ctx, []MeteredRequest{r}); err != nil {
		t.Fatal(err)
	}
	_, rows, err := d.Query(ctx, `SELECT r.path, r.error_detail, x.request_headers FROM requests r JOIN exchanges x USING (request_id)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rows[0] {
		if s, _ := v.(string); strings.Contains(s, key) || !strings.Contains(s, Redacted) {
			t.Errorf("stored %q", s)
		}
	}
}

// TestMergeCopiesMeteredRequests: the wire's rows travel with a merge, and
// merging twice adds nothing.
func TestMergeCopiesMeteredRequests(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeFile(t, src, baseRun("run-a"), cells()[:1])
	s, err := Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRequests(ctx, meteredRequests()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dst := openDst(t, filepath.Join(dir, "dst.db"))
	first, err := mergeFile(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	if first.Requests != (TableStats{Added: 3}) || first.Exchanges != (TableStats{Added: 2}) {
		t.Errorf("first merge: requests %+v exchanges %+v", first.Requests, first.Exchanges)
	}
	second, err := mergeFile(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	if second.Requests != (TableStats{Present: 3}) || second.Exchanges != (TableStats{Present: 2}) {
		t.Errorf("second merge: requests %+v exchanges %+v", second.Requests, second.Exchanges)
	}
	if diff := cmp.Diff(dump(t, src), dump(t, dst.Path())); diff != "" {
		t.Errorf("merged file differs from its source (-src +dst):\n%s", diff)
	}
}

// TestACredentialHeaderArrayIsRedactedAsJSON stops a stored header array
// {"X-Api-Key":["…"]} from being turned into invalid JSON by redaction:
// a merge refused the source (the destination's json_valid CHECK), and an
// insert of such headers failed the same way. Both now store the header
// with its value redacted, still JSON.
func TestACredentialHeaderArrayIsRedactedAsJSON(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const key = "k-0123456789abcdef"
	src := filepath.Join(dir, "src.db")
	writeFile(t, src, baseRun("run-a"), cells()[:1])
	s, err := Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	reqs := meteredRequests()
	reqs[1].Exchange.RequestHeaders = map[string][]string{"X-Api-Key": {key}, "Authorization": {"Bearer " + key}}
	if err := s.InsertRequests(ctx, reqs); err != nil {
		t.Fatalf("insert: %v", err)
	}
	s.Close()
	// A file written before, or by hand, holds the header as it was.
	tamper(t, src, `DROP TRIGGER exchanges_no_update`,
		`UPDATE exchanges SET request_headers = '{"X-Api-Key":["`+key+`"],"Authorization":["Bearer `+key+`"]}' WHERE request_id = 'req-2'`,
		`CREATE TRIGGER exchanges_no_update BEFORE UPDATE ON exchanges BEGIN SELECT RAISE(ABORT, 'exchanges are append-only'); END`)
	dst := openDst(t, filepath.Join(dir, "dst.db"))
	if _, err := mergeFile(ctx, dst, src); err != nil {
		t.Fatalf("merge: %v", err)
	}
	got := queryOne(t, dst, `SELECT request_headers FROM exchanges WHERE request_id = 'req-2'`)
	want := `{"X-Api-Key":["[REDACTED]"],"Authorization":["[REDACTED]"]}`
	if diff := cmp.Diff([]any{want}, got); diff != "" {
		t.Errorf("merged headers (-want +got):\n%s", diff)
	}
}

// TestAChatCompletionsRequestIsStoredAndAnOlderFilesWireIsKept stops the
// fourth protocol from being refused by the file (requests.protocol is a
// CHECKed list) or its migration from losing or loosening anything: a file
// at the schema before it, holding a metered wire, keeps every request and
// exchange through the rebuild, still refuses an unknown protocol, an
// edit or a deletion, still ties an exchange to its request, and takes an
// openai-chat-completions request with its NULL figures NULL.
func TestAChatCompletionsRequestIsStoredAndAnOlderFilesWireIsKept(t *testing.T) {
	ctx := context.Background()
	const before = 11
	path, raw := fileAtVersion(t, before)
	// Write the wire as the older wfb did: straight into its tables.
	wire := meteredRequests()
	for _, r := range wire {
		if _, err := raw.Exec(`INSERT INTO requests (request_id, attempt_id, seq, protocol, method, path, started_at, latency_ms, streamed, request_bytes, response_bytes, billed, usage_semantics, input_tokens)
			VALUES (?, NULLIF(?, ''), ?, NULLIF(?, ''), ?, ?, '2026-01-01T00:00:00.000Z', 1, 0, 0, 0, ?, NULLIF(?, ''), ?)`,
			r.RequestID, r.AttemptID, r.Seq, r.Protocol, r.Method, r.Path, r.Billed, r.UsageSemantics, r.InputTokens); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`INSERT INTO exchanges (request_id, attempt_id, seq, codec, request_body, request_size, request_truncated, response_size, response_truncated)
		VALUES ('req-2', 'att-1', 2, 'zstd', x'28b501', 3, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open (migrating from %d): %v", before, err)
	}
	defer d.Close()
	got := queryOne(t, d, `SELECT (SELECT group_concat(request_id || ':' || COALESCE(protocol, '-') || ':' || COALESCE(input_tokens, 'NULL'), ' ') FROM (SELECT * FROM requests ORDER BY request_id)),
		(SELECT group_concat(request_id || ':' || hex(request_body)) FROM exchanges)`)
	if diff := cmp.Diff([]any{"req-1:anthropic-messages:NULL req-2:anthropic-messages:2000 req-u:-:NULL", "req-2:28B501"}, got); diff != "" {
		t.Errorf("the wire after the migration (-want +got):\n%s", diff)
	}

	chat := MeteredRequest{
		RequestID: "req-c", AttemptID: "att-2", Seq: 1, Protocol: "openai-chat-completions", Method: "POST",
		Path: "/v1/chat/completions", RequestedModel: "qwen3-coder", Status: ptr(int64(200)), StartedAt: t0,
		Streamed: true, Billed: true, UsageSemantics: "openai", OutputTokens: ptr(int64(300)),
		UsageProblem: "usage.prompt_tokens_details is missing",
		Exchange:     &Exchange{Codec: wfb.CodecZstd, RequestBody: []byte{1}, RequestSize: 1, ResponseBody: []byte{2}, ResponseSize: 1},
	}
	if err := d.InsertRequests(ctx, []MeteredRequest{chat}); err != nil {
		t.Fatalf("a Chat Completions request: %v", err)
	}
	back, err := d.Requests(ctx, "att-2")
	if err != nil || len(back) != 1 || back[0].Protocol != "openai-chat-completions" || back[0].InputTokens != nil || back[0].CacheReadInputTokens != nil || *back[0].OutputTokens != 300 {
		t.Errorf("read back %+v, %v; want the protocol, input and cache read NULL, output 300", back, err)
	}
	for _, q := range []string{
		`INSERT INTO requests (request_id, seq, protocol, method, path, started_at, latency_ms, streamed, request_bytes, response_bytes, billed)
			VALUES ('r', 1, 'openai-completions', 'POST', '/', 'x', 0, 0, 0, 0, 0)`,
		`UPDATE requests SET input_tokens = 1 WHERE request_id = 'req-2'`,
		`DELETE FROM requests WHERE request_id = 'req-u'`,
		`UPDATE exchanges SET request_size = 9`,
		`INSERT INTO exchanges (request_id, seq, request_size, request_truncated, response_size, response_truncated) VALUES ('req-none', 1, 0, 0, 0, 0)`,
	} {
		if _, _, err := d.Query(ctx, q); err == nil {
			t.Errorf("accepted after the migration: %s", q)
		}
	}
}
