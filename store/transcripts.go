package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wfbench/wfb"
)

// Transcript is an attempt's whole agent output as kept in transcripts
// (migration 0007): redacted and scrubbed of the session's secrets by the
// runner BEFORE it was compressed, so store keeps the bytes as they are.
type Transcript struct {
	Codec     string // wfb.CodecZstd
	Data      []byte // compressed
	RawSize   int64  // bytes the agent printed
	KeptSize  int64  // bytes kept, uncompressed
	Truncated bool   // the agent printed more than the bound kept
	SHA256    string // hex digest of the kept bytes, uncompressed
	Prompt    string // the prompt the agent was given; "" is NULL
}

// Kept returns the transcript's kept bytes, decompressed by
// wfb.DecodeBody (only to the size recorded: the file may come from
// anywhere) and checked against their digest.
func (t Transcript) Kept() ([]byte, error) {
	out, err := wfb.DecodeBody(t.Codec, t.Data, t.KeptSize)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != t.SHA256 {
		return nil, fmt.Errorf("the kept bytes do not match their sha256")
	}
	return out, nil
}

// insertTranscript records r's transcript, when it has one.
func (d *DB) insertTranscript(ctx context.Context, tx *sql.Tx, r *Result) error {
	t := r.Transcript
	if t == nil {
		return nil
	}
	switch {
	case t.Codec == "":
		return fmt.Errorf("insert transcript %s: codec is empty", r.AttemptID)
	case t.RawSize < 0 || t.KeptSize < 0:
		return fmt.Errorf("insert transcript %s: negative size (raw %d, kept %d)", r.AttemptID, t.RawSize, t.KeptSize)
	}
	data := t.Data
	if data == nil {
		data = []byte{}
	}
	_, err := d.execTx(ctx, tx, insertTranscriptSQL,
		r.AttemptID, t.Codec, data, t.RawSize, t.KeptSize, boolInt(t.Truncated), t.SHA256, nullString(d.clean(t.Prompt)))
	return err
}

// Transcript returns the transcript of an attempt; ErrNotFound when none
// was kept (the attempt never ran its agent, or predates migration 0007).
func (d *DB) Transcript(ctx context.Context, attemptID string) (Transcript, error) {
	var t Transcript
	var trunc int64
	var prompt sql.NullString
	err := d.db.QueryRowContext(ctx, `SELECT codec, data, raw_size, kept_size, truncated, sha256, prompt
		FROM transcripts WHERE attempt_id = ?`, attemptID).
		Scan(&t.Codec, &t.Data, &t.RawSize, &t.KeptSize, &trunc, &t.SHA256, &prompt)
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("transcript of attempt %s: %w", attemptID, ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("transcript of attempt %s: %w", attemptID, d.classify(err))
	}
	t.Truncated, t.Prompt = trunc == 1, prompt.String
	return t, nil
}
