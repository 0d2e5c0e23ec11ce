-- 0012_chat_completions: requests.protocol may be openai-chat-completions,
-- OpenAI's Chat Completions API, which most OpenAI-compatible servers
-- (vLLM, Ollama, llama.cpp, hosted gateways) and the agents that use them
-- speak. Its usage has OpenAI's arithmetic (cached tokens a subset of the
-- prompt), so its rows' usage_semantics is 'openai', as the Responses
-- API's.
--
-- SQLite cannot change a CHECK in place: requests is rebuilt with its rows,
-- and exchanges, whose rows reference it, with it (copied under the new
-- table before the old one is dropped, so no foreign key is ever broken);
-- their indexes and append-only triggers are made again as 0004 made them.

CREATE TABLE requests_new (
    request_id                  TEXT PRIMARY KEY,
    attempt_id                  TEXT,
    seq                         INTEGER NOT NULL CHECK (seq >= 1),
    protocol                    TEXT CHECK (protocol IN ('anthropic-messages', 'openai-responses', 'gemini-generate-content',
                                                     'openai-chat-completions')),
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

INSERT INTO requests_new SELECT * FROM requests;

CREATE TABLE exchanges_new (
    request_id         TEXT PRIMARY KEY REFERENCES requests_new (request_id),
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

INSERT INTO exchanges_new SELECT * FROM exchanges;

DROP TABLE exchanges;
DROP TABLE requests;
ALTER TABLE requests_new RENAME TO requests;
ALTER TABLE exchanges_new RENAME TO exchanges;

CREATE UNIQUE INDEX requests_attempt_seq ON requests (attempt_id, seq) WHERE attempt_id IS NOT NULL;
CREATE INDEX requests_started_at ON requests (started_at);
CREATE INDEX exchanges_attempt ON exchanges (attempt_id, seq);

CREATE TRIGGER requests_no_update BEFORE UPDATE ON requests
BEGIN SELECT RAISE(ABORT, 'requests are append-only'); END;
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests
BEGIN SELECT RAISE(ABORT, 'requests are append-only'); END;
CREATE TRIGGER exchanges_no_update BEFORE UPDATE ON exchanges
BEGIN SELECT RAISE(ABORT, 'exchanges are append-only'); END;
CREATE TRIGGER exchanges_no_delete BEFORE DELETE ON exchanges
BEGIN SELECT RAISE(ABORT, 'exchanges are append-only'); END;
