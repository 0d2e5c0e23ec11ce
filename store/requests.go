package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wfbench/wfb"
)

// MeteredRequest is one request the metering proxy saw on the provider's
// wire: a row of requests (migration 0004). The caller converts the
// proxy's records to it; store knows nothing of the proxy.
//
// Pointer fields are nullable: nil is NULL, "not measured" (or, for
// Status, "nothing was answered").
type MeteredRequest struct {
	RequestID string // unique; filled in when empty
	AttemptID string // "" is NULL: unattributed
	Seq       int    // from 1, per attempt

	Protocol       string // "" is NULL: not a model request
	Method         string
	Path           string // redacted before it is stored
	RequestedModel string
	ResponseModel  string
	Status         *int64

	StartedAt     time.Time
	LatencyMS     int64
	TTFBMS        *int64
	Streamed      bool
	RequestBytes  int64
	ResponseBytes int64

	ErrorType   string // the provider's
	ProxyError  string // the proxy's own
	ErrorDetail string // redacted and bounded before it is stored

	RetryOf    *int64 // seq of the request this re-sends
	FallbackOf *int64 // seq of the streaming request this repeats without streaming

	Billed         bool
	UsageSemantics string // "anthropic", "openai", "gemini"; "" is NULL
	// Usage in the results table's semantics (see migration 0004).
	InputTokens              *int64
	OutputTokens             *int64
	CacheReadInputTokens     *int64
	CacheCreationInputTokens *int64
	ReasoningOutputTokens    *int64
	// UsageRaw maps the native field of each nonsense figure to the wire's
	// text; UsageProblem says why figures are not measured.
	UsageRaw     map[string]string
	UsageProblem string

	// Exchange, when set, is stored in exchanges with the request.
	Exchange *Exchange
}

// Exchange is one request's kept bodies and headers: a row of exchanges.
// The bodies arrive compressed (Codec) and already scrubbed of the
// attempt's secrets; store keeps them as they are.
type Exchange struct {
	RequestHeaders  map[string][]string // redacted before it is stored
	ResponseHeaders map[string][]string
	Codec           string // "" is NULL: no body kept

	RequestBody       []byte
	RequestSize       int64
	RequestSHA256     string
	RequestTruncated  bool
	ResponseBody      []byte
	ResponseSize      int64
	ResponseSHA256    string
	ResponseTruncated bool
}

// maxRequestDetail bounds requests.error_detail as stored.
const maxRequestDetail = 4 << 10

// InsertRequests records metered requests, with their exchanges, in one
// transaction. See InsertRequestsTx.
func (d *DB) InsertRequests(ctx context.Context, reqs []MeteredRequest) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return d.InsertRequestsTx(ctx, tx, reqs) })
}

// InsertRequestsTx records metered requests inside tx. Rows are
// append-only: a request id, or an attempt's seq, already recorded is
// refused. Empty request ids are filled in (in reqs). Text is redacted.
func (d *DB) InsertRequestsTx(ctx context.Context, tx *sql.Tx, reqs []MeteredRequest) error {
	for i := range reqs {
		r := &reqs[i]
		if r.RequestID == "" {
			r.RequestID = NewID("req")
		}
		if err := validateRequest(r); err != nil {
			return err
		}
		if err := d.insertRequest(ctx, tx, r); err != nil {
			if sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
				return fmt.Errorf("insert request %s (attempt %q, seq %d): already recorded (requests are append-only)", r.RequestID, r.AttemptID, r.Seq)
			}
			return fmt.Errorf("insert request %s: %w", r.RequestID, d.classify(err))
		}
		if r.Exchange == nil {
			continue
		}
		if err := d.insertExchange(ctx, tx, r); err != nil {
			return fmt.Errorf("insert exchange %s: %w", r.RequestID, d.classify(err))
		}
	}
	return nil
}

func validateRequest(r *MeteredRequest) error {
	where := "insert request " + r.RequestID
	switch {
	case r.Seq < 1:
		return fmt.Errorf("%s: seq %d must be 1 or more", where, r.Seq)
	case r.Method == "":
		return fmt.Errorf("%s: method is empty", where)
	case r.StartedAt.IsZero():
		return fmt.Errorf("%s: started_at is not set", where)
	case r.Billed && r.UsageSemantics == "":
		return fmt.Errorf("%s: billed, but its usage semantics are not named", where)
	}
	for _, c := range []struct {
		col string
		v   *int64
	}{{"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens}, {"cache_read_input_tokens", r.CacheReadInputTokens},
		{"cache_creation_input_tokens", r.CacheCreationInputTokens}, {"reasoning_output_tokens", r.ReasoningOutputTokens},
		{"latency_ms", &r.LatencyMS}, {"ttfb_ms", r.TTFBMS}, {"request_bytes", &r.RequestBytes}, {"response_bytes", &r.ResponseBytes}} {
		if err := checkCount(c.col, c.v); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

func (d *DB) insertRequest(ctx context.Context, tx *sql.Tx, r *MeteredRequest) error {
	var raw any
	if len(r.UsageRaw) > 0 {
		b, err := json.Marshal(r.UsageRaw)
		if err != nil {
			return err
		}
		raw = d.clean(string(b))
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO requests (
		request_id, attempt_id, seq, protocol, method, path, requested_model, response_model, status,
		started_at, latency_ms, ttfb_ms, streamed, request_bytes, response_bytes,
		error_type, proxy_error, error_detail, retry_of, fallback_of, billed, usage_semantics,
		input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, reasoning_output_tokens,
		usage_raw, usage_problem
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RequestID, nullString(r.AttemptID), r.Seq, nullString(r.Protocol), r.Method, d.clean(r.Path),
		// The requested model is the agent's text (its request body), the
		// response model and error type the provider's: cleaned like the
		// result's model, or a key an agent put there is kept.
		nullString(d.clean(r.RequestedModel)), nullString(d.clean(r.ResponseModel)), nullInt(r.Status),
		formatTime(r.StartedAt), r.LatencyMS, nullInt(r.TTFBMS), boolInt(r.Streamed), r.RequestBytes, r.ResponseBytes,
		nullString(d.clean(r.ErrorType)), nullString(r.ProxyError), nullString(headBounded(d.clean(r.ErrorDetail), maxRequestDetail)),
		nullInt(r.RetryOf), nullInt(r.FallbackOf), boolInt(r.Billed), nullString(r.UsageSemantics),
		nullInt(r.InputTokens), nullInt(r.OutputTokens), nullInt(r.CacheReadInputTokens),
		nullInt(r.CacheCreationInputTokens), nullInt(r.ReasoningOutputTokens),
		raw, nullString(d.clean(r.UsageProblem)))
	return err
}

func (d *DB) insertExchange(ctx context.Context, tx *sql.Tx, r *MeteredRequest) error {
	x := r.Exchange
	reqH, err := d.headerJSON(x.RequestHeaders)
	if err != nil {
		return err
	}
	respH, err := d.headerJSON(x.ResponseHeaders)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO exchanges (
		request_id, attempt_id, seq, request_headers, response_headers, codec,
		request_body, request_size, request_sha256, request_truncated,
		response_body, response_size, response_sha256, response_truncated
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RequestID, nullString(r.AttemptID), r.Seq, reqH, respH, nullString(x.Codec),
		nullBlob(x.RequestBody), x.RequestSize, nullString(x.RequestSHA256), boolInt(x.RequestTruncated),
		nullBlob(x.ResponseBody), x.ResponseSize, nullString(x.ResponseSHA256), boolInt(x.ResponseTruncated))
	return err
}

// headerJSON is a header as stored: a JSON object, redacted; NULL when nil.
func (d *DB) headerJSON(h map[string][]string) (any, error) {
	if h == nil {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	d.secrets.mu.Lock()
	sc := d.secrets.scrubber
	d.secrets.mu.Unlock()
	if r, ok := wfb.RedactJSON(sc.Text(string(b))); ok {
		return r, nil
	}
	return d.clean(string(b)), nil // a secret spanning values: the CHECK refuses what is left
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullBlob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

const requestColumns = `request_id, attempt_id, seq, protocol, method, path, requested_model, response_model, status,
	started_at, latency_ms, ttfb_ms, streamed, request_bytes, response_bytes,
	error_type, proxy_error, error_detail, retry_of, fallback_of, billed, usage_semantics,
	input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, reasoning_output_tokens,
	usage_raw, usage_problem`

// Requests returns an attempt's metered requests in seq order, without
// their exchanges (see Exchange); attemptID "" returns the unattributed
// ones, in arrival order.
func (d *DB) Requests(ctx context.Context, attemptID string) ([]MeteredRequest, error) {
	q := `SELECT ` + requestColumns + ` FROM requests WHERE attempt_id = ? ORDER BY seq`
	args := []any{attemptID}
	if attemptID == "" {
		q, args = `SELECT `+requestColumns+` FROM requests WHERE attempt_id IS NULL ORDER BY started_at, seq`, nil
	}
	var out []MeteredRequest
	err := d.Each(ctx, q, args, func(s Scanner) error {
		r, err := scanRequest(s)
		if err != nil {
			return fmt.Errorf("requests of attempt %q: %w", attemptID, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func scanRequest(s Scanner) (MeteredRequest, error) {
	var (
		r                                                  MeteredRequest
		attempt, protocol, reqModel, respModel             sql.NullString
		errType, proxyErr, detail, semantics, raw, problem sql.NullString
		status, ttfb, retryOf, fallbackOf                  sql.NullInt64
		in, out, cacheRead, cacheCreate, reasoning         sql.NullInt64
		started                                            string
		streamed, billed                                   int64
	)
	if err := s.Scan(&r.RequestID, &attempt, &r.Seq, &protocol, &r.Method, &r.Path, &reqModel, &respModel, &status,
		&started, &r.LatencyMS, &ttfb, &streamed, &r.RequestBytes, &r.ResponseBytes,
		&errType, &proxyErr, &detail, &retryOf, &fallbackOf, &billed, &semantics,
		&in, &out, &cacheRead, &cacheCreate, &reasoning, &raw, &problem); err != nil {
		return r, err
	}
	t, err := parseTime(started)
	if err != nil {
		return r, fmt.Errorf("request %s: started_at: %w", r.RequestID, err)
	}
	r.StartedAt = t
	r.AttemptID, r.Protocol, r.RequestedModel, r.ResponseModel = attempt.String, protocol.String, reqModel.String, respModel.String
	r.ErrorType, r.ProxyError, r.ErrorDetail = errType.String, proxyErr.String, detail.String
	r.UsageSemantics, r.UsageProblem = semantics.String, problem.String
	r.Status, r.TTFBMS, r.RetryOf, r.FallbackOf = intPtr(status), intPtr(ttfb), intPtr(retryOf), intPtr(fallbackOf)
	r.Streamed, r.Billed = streamed == 1, billed == 1
	r.InputTokens, r.OutputTokens = intPtr(in), intPtr(out)
	r.CacheReadInputTokens, r.CacheCreationInputTokens, r.ReasoningOutputTokens = intPtr(cacheRead), intPtr(cacheCreate), intPtr(reasoning)
	if raw.Valid {
		if err := json.Unmarshal([]byte(raw.String), &r.UsageRaw); err != nil {
			return r, fmt.Errorf("request %s: usage_raw: %w", r.RequestID, err)
		}
	}
	return r, nil
}

// Exchange returns the kept exchange of a request, or an error wrapping
// ErrNotFound when none was kept.
func (d *DB) Exchange(ctx context.Context, requestID string) (Exchange, error) {
	var (
		x            Exchange
		reqH, respH  sql.NullString
		codec        sql.NullString
		reqSum, rSum sql.NullString
		reqT, respT  int64
		found        bool
	)
	err := d.Each(ctx, `SELECT request_headers, response_headers, codec,
			request_body, request_size, request_sha256, request_truncated,
			response_body, response_size, response_sha256, response_truncated
		FROM exchanges WHERE request_id = ?`, []any{requestID}, func(s Scanner) error {
		found = true
		return s.Scan(&reqH, &respH, &codec, &x.RequestBody, &x.RequestSize, &reqSum, &reqT,
			&x.ResponseBody, &x.ResponseSize, &rSum, &respT)
	})
	if err != nil {
		return x, fmt.Errorf("exchange %s: %w", requestID, err)
	}
	if !found {
		return x, fmt.Errorf("exchange %s: %w", requestID, ErrNotFound)
	}
	x.Codec, x.RequestSHA256, x.ResponseSHA256 = codec.String, reqSum.String, rSum.String
	x.RequestTruncated, x.ResponseTruncated = reqT == 1, respT == 1
	for _, h := range []struct {
		src sql.NullString
		dst *map[string][]string
	}{{reqH, &x.RequestHeaders}, {respH, &x.ResponseHeaders}} {
		if h.src.Valid {
			if err := json.Unmarshal([]byte(h.src.String), h.dst); err != nil {
				return x, fmt.Errorf("exchange %s: headers: %w", requestID, err)
			}
		}
	}
	return x, nil
}

// insertAttemptRequests records the result row's metered requests inside
// its transaction: each must belong to the row's attempt.
func (d *DB) insertAttemptRequests(ctx context.Context, tx *sql.Tx, r *Result) error {
	for i := range r.Requests {
		if got := r.Requests[i].AttemptID; got != r.AttemptID {
			return fmt.Errorf("metered request %d belongs to attempt %q, not this row's", i+1, got)
		}
	}
	return d.InsertRequestsTx(ctx, tx, r.Requests)
}
