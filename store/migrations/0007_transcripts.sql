-- 0007_transcripts: the agent's whole output, one row per attempt that ran a
-- process (an attempt refused before its agent started has none: NULL, not
-- measured; one whose agent printed nothing has a row with raw_size 0).
--
-- data is the agent's stdout as it printed it (Claude Code's stream-json,
-- Codex's JSON Lines, the stand-in's), every line passed through the store's
-- redaction and scrubbed of the session's secret values BEFORE it was
-- compressed with codec (zstd, one frame). raw_size is how many bytes the
-- agent printed; kept_size the length of the kept bytes uncompressed, and
-- sha256 their digest, so a decompressed transcript can be checked (a redaction
-- can make kept_size larger than raw_size). At most
-- a bound is kept (64 MiB uncompressed by default): truncated = 1 says the
-- agent printed more and only the first kept_size bytes were kept. prompt is
-- the prompt the agent was given (on its command line or stdin, which its
-- output does not repeat), redacted the same way; NULL: not recorded.
CREATE TABLE transcripts (
    attempt_id TEXT PRIMARY KEY REFERENCES results (attempt_id),
    codec      TEXT NOT NULL CHECK (codec IN ('zstd')),
    data       BLOB NOT NULL,
    raw_size   INTEGER NOT NULL CHECK (raw_size >= 0),
    kept_size  INTEGER NOT NULL CHECK (kept_size >= 0),
    truncated  INTEGER NOT NULL CHECK (truncated IN (0, 1)),
    sha256     TEXT NOT NULL CHECK (length(sha256) = 64),
    prompt     TEXT
) STRICT;

CREATE TRIGGER transcripts_no_update BEFORE UPDATE ON transcripts
BEGIN SELECT RAISE(ABORT, 'transcripts are append-only'); END;
CREATE TRIGGER transcripts_no_delete BEFORE DELETE ON transcripts
BEGIN SELECT RAISE(ABORT, 'transcripts are append-only'); END;
