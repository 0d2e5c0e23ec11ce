-- 0004_requests: the provider's wire, as the metering proxy saw it.
--
-- requests: one row per request an agent sent through the proxy. attempt_id
-- is the attempt whose base URL the request used, NULL when the URL named no
-- live attempt (unattributed: answered 404, never forwarded). seq numbers an
-- attempt's requests from 1 in arrival order. There is no foreign key to
-- results: wire rows may be written before the attempt's result row, must
-- survive a wfb killed before writing it, and a standalone proxy's attempts
-- have none.
--
-- protocol is anthropic-messages, openai-responses or gemini-generate-content
-- for a model request, NULL for anything else (a HEAD probe). status is what
-- the agent was answered (the provider's, or the proxy's own 502/404/413),
-- NULL when it was answered nothing (it went away). ttfb_ms runs from the
-- request's arrival to the first response byte from the provider (NULL: none
-- came); latency_ms to the last byte relayed. error_type is the provider's
-- (e.g. overloaded_error); proxy_error is the proxy's own: upstream-unreachable,
-- upstream-failed, upstream-cut, client-gone, attempt-ended, request-too-large,
-- request-unreadable, unattributed. retry_of is the seq of an earlier request
-- of the attempt with the same method, path and body; fallback_of that of an
-- earlier streaming request this non-streaming one repeats.
--
-- Usage is the provider's NATIVE report, read with its protocol's arithmetic
-- and stored in the results table's semantics: input_tokens is UNCACHED input,
-- cache_read/cache_creation ADD to it (OpenAI's and Gemini's cached tokens are
-- a subset of their input: stored input = native input - cached), and
-- reasoning_output_tokens are PART of output_tokens. A figure the wire did
-- not carry is NULL, never 0; a nonsense one (negative, bool, string, float,
-- out of range) is NULL too, its wire text kept in usage_raw (JSON: native
-- field -> text) and the reason in usage_problem. billed = 1 marks a model
-- answer whose usage counts (a 2xx that reached the protocol's final usage
-- report); an attempt's metered usage is the sum over its billed rows, and is
-- not measured when any billed row lacks the figure.

CREATE TABLE requests (
    request_id                  TEXT PRIMARY KEY,
    attempt_id                  TEXT,
    seq                         INTEGER NOT NULL CHECK (seq >= 1),
    protocol                    TEXT CHECK (protocol IN ('anthropic-messages', 'openai-responses', 'gemini-generate-content')),
    method                      TEXT NOT NULL,
    path                        TEXT NOT NULL, -- after the attempt prefix, query kept, secrets scrubbed
    requested_model             TEXT,
    response_model              TEXT,
    status                      INTEGER CHECK (status BETWEEN 100 AND 599),
    started_at                  TEXT NOT NULL,
    latency_ms                  INTEGER NOT NULL CHECK (latency_ms >= 0),
    ttfb_ms                     INTEGER CHECK (ttfb_ms >= 0),
    streamed                    INTEGER NOT NULL CHECK (streamed IN (0, 1)),
    request_bytes               INTEGER NOT NULL CHECK (request_bytes >= 0),
    response_bytes              INTEGER NOT NULL CHECK (response_bytes >= 0),
    error_type                  TEXT,
    proxy_error                 TEXT,
    error_detail                TEXT,
    retry_of                    INTEGER CHECK (retry_of >= 1 AND retry_of < seq),
    fallback_of                 INTEGER CHECK (fallback_of >= 1 AND fallback_of < seq),
    billed                      INTEGER NOT NULL CHECK (billed IN (0, 1)),
    usage_semantics             TEXT CHECK (usage_semantics IN ('anthropic', 'openai', 'gemini')),
    input_tokens                INTEGER CHECK (input_tokens >= 0),
    output_tokens               INTEGER CHECK (output_tokens >= 0),
    cache_read_input_tokens     INTEGER CHECK (cache_read_input_tokens >= 0),
    cache_creation_input_tokens INTEGER CHECK (cache_creation_input_tokens >= 0),
    reasoning_output_tokens     INTEGER CHECK (reasoning_output_tokens >= 0),
    usage_raw                   TEXT CHECK (usage_raw IS NULL OR json_valid(usage_raw)),
    usage_problem               TEXT,
    -- A billed row says how its usage was read.
    CHECK (billed = 0 OR usage_semantics IS NOT NULL)
) STRICT;

CREATE UNIQUE INDEX requests_attempt_seq ON requests (attempt_id, seq) WHERE attempt_id IS NOT NULL;
CREATE INDEX requests_started_at ON requests (started_at);

-- exchanges: each request's bodies, the attempt's transcript. Bodies are
-- scrubbed of the attempt's secrets (in every wire form), then compressed with
-- codec (zstd); *_size is the kept bytes' length uncompressed and *_sha256
-- their digest, so a decompressed body can be checked. The proxy keeps at
-- most a budget per attempt (64 MiB uncompressed by default): *_truncated = 1
-- says only the first *_size bytes were kept (0 bytes: none). Headers are
-- JSON objects (name -> [values]) without credential headers (Authorization,
-- x-api-key, x-goog-api-key, Cookie, anything whose name says key, token or
-- secret).
CREATE TABLE exchanges (
    request_id         TEXT PRIMARY KEY REFERENCES requests (request_id),
    attempt_id         TEXT,
    seq                INTEGER NOT NULL CHECK (seq >= 1),
    request_headers    TEXT CHECK (request_headers IS NULL OR json_valid(request_headers)),
    response_headers   TEXT CHECK (response_headers IS NULL OR json_valid(response_headers)),
    codec              TEXT CHECK (codec IN ('zstd')),
    request_body       BLOB,
    request_size       INTEGER NOT NULL CHECK (request_size >= 0),
    request_sha256     TEXT,
    request_truncated  INTEGER NOT NULL CHECK (request_truncated IN (0, 1)),
    response_body      BLOB,
    response_size      INTEGER NOT NULL CHECK (response_size >= 0),
    response_sha256    TEXT,
    response_truncated INTEGER NOT NULL CHECK (response_truncated IN (0, 1)),
    CHECK (codec IS NOT NULL OR (request_body IS NULL AND response_body IS NULL))
) STRICT;

CREATE INDEX exchanges_attempt ON exchanges (attempt_id, seq);

CREATE TRIGGER requests_no_update BEFORE UPDATE ON requests
BEGIN SELECT RAISE(ABORT, 'requests are append-only'); END;
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests
BEGIN SELECT RAISE(ABORT, 'requests are append-only'); END;
CREATE TRIGGER exchanges_no_update BEFORE UPDATE ON exchanges
BEGIN SELECT RAISE(ABORT, 'exchanges are append-only'); END;
CREATE TRIGGER exchanges_no_delete BEFORE DELETE ON exchanges
BEGIN SELECT RAISE(ABORT, 'exchanges are append-only'); END;
