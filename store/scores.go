package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// MaxArtifactBytes bounds the stored copy of an artifact. It equals the
// review parser's own limit, so a stored copy is cut only when the artifact
// was too large to be valid anyway; Artifact.Bytes keeps its real size.
const MaxArtifactBytes = 1 << 20

// Artifact is the stored copy of what a session left behind (the review
// artifact), kept so it can be re-scored after the sandbox is gone.
type Artifact struct {
	AttemptID string
	Name      string // file name, e.g. review-output.json
	// Content is the artifact redacted, at most its first MaxArtifactBytes.
	Content []byte
	// SHA256 (hex) and Bytes describe the artifact as the session wrote it,
	// before redaction and bounding.
	SHA256 string
	Bytes  int64
}

// Score is one scoring of one attempt's review against a task's labels.
// Several scorings of an attempt may exist (wfb rescore adds one); the
// newest is in latest_scores_v. Pointer fields are nullable: nil is NULL,
// "not measured" (an undefined ratio, no verdict read), never 0.
type Score struct {
	ScoreID        string // empty: InsertScore fills in a new id
	AttemptID      string
	ScoredAt       time.Time
	LabelsDigest   string // which ground truth: see review.LabelsDigest
	TP, FP, FN     int
	Precision      *float64
	Recall         *float64
	WeightedF1     *float64
	VerdictCorrect *bool
	Matches        string // JSON [{"label_id", "finding_id"}]; "" for none recorded
	// Findings are the review's findings as scored and Labels the labels
	// they were scored against, each a JSON array (see migration 0013);
	// "" for not kept (a score recorded before wfb kept them).
	Findings string
	Labels   string
}

// InsertArtifact stores an attempt's artifact in a transaction of its own.
// See InsertArtifactTx.
func (d *DB) InsertArtifact(ctx context.Context, attemptID, name string, content []byte) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return d.InsertArtifactTx(ctx, tx, attemptID, name, content) })
}

// InsertArtifactTx stores an attempt's artifact inside tx, so the runner can
// write a result, its artifact and its score in one commit. The attempt must
// be recorded, and holds at most one artifact (append-only: a second is
// refused, never overwritten). The content is redacted and bounded to
// MaxArtifactBytes before it is written; the digest and size are of the
// content as given.
func (d *DB) InsertArtifactTx(ctx context.Context, tx *sql.Tx, attemptID, name string, content []byte) error {
	sum := sha256.Sum256(content)
	return d.InsertArtifactHeadTx(ctx, tx, Artifact{
		AttemptID: attemptID, Name: name, Content: content, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(content)),
	})
}

// InsertArtifactHeadTx stores an artifact of which the caller read only
// the head (a.Content, at least its first MaxArtifactBytes unless that is
// all there is) and measured the whole: a.SHA256 and a.Bytes describe the
// artifact as written. Otherwise as InsertArtifactTx.
func (d *DB) InsertArtifactHeadTx(ctx context.Context, tx *sql.Tx, a Artifact) error {
	switch {
	case a.AttemptID == "":
		return fmt.Errorf("insert artifact: attempt_id is empty")
	case a.Name == "":
		return fmt.Errorf("insert artifact %s: name is empty", a.AttemptID)
	}
	stored := a.Content
	if len(stored) > MaxArtifactBytes {
		stored = stored[:MaxArtifactBytes]
	}
	stored = []byte(d.clean(string(stored)))
	_, err := tx.ExecContext(ctx,
		`INSERT INTO artifacts (attempt_id, name, content, sha256, bytes) VALUES (?, ?, ?, ?, ?)`,
		a.AttemptID, a.Name, stored, a.SHA256, a.Bytes)
	if err != nil {
		switch sqliteExtCode(err) {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("insert artifact %s: the attempt already has an artifact (artifacts are append-only)", a.AttemptID)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("insert artifact %s: attempt %q is not recorded", a.AttemptID, a.AttemptID)
		}
		return fmt.Errorf("insert artifact %s: %w", a.AttemptID, d.classify(err))
	}
	return nil
}

// Artifacts returns the stored artifacts of a run's attempts, in the order
// of Results (start time, then attempt id).
func (d *DB) Artifacts(ctx context.Context, runID string) ([]Artifact, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT a.attempt_id, a.name, a.content, a.sha256, a.bytes
		FROM artifacts a JOIN results r ON r.attempt_id = a.attempt_id
		WHERE r.run_id = ? ORDER BY r.started_at, r.attempt_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("artifacts of run %s: %w", runID, d.classify(err))
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		var a Artifact
		if err := rows.Scan(&a.AttemptID, &a.Name, &a.Content, &a.SHA256, &a.Bytes); err != nil {
			return nil, fmt.Errorf("artifacts of run %s: %w", runID, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("artifacts of run %s: %w", runID, err)
	}
	return out, nil
}

// InsertScore records one scoring in a transaction of its own. See
// InsertScoreTx.
func (d *DB) InsertScore(ctx context.Context, s *Score) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return d.InsertScoreTx(ctx, tx, s) })
}

// InsertScoreTx records one scoring inside tx. An empty ScoreID is filled
// in with a new id, a zero ScoredAt with the current time. Scores are
// append-only: re-scoring adds a row, it never updates one.
func (d *DB) InsertScoreTx(ctx context.Context, tx *sql.Tx, s *Score) error {
	if s.ScoreID == "" {
		s.ScoreID = NewID("score")
	}
	if s.ScoredAt.IsZero() {
		s.ScoredAt = time.Now()
	}
	where := "insert score " + s.ScoreID
	switch {
	case s.AttemptID == "":
		return fmt.Errorf("%s: attempt_id is empty", where)
	case s.LabelsDigest == "":
		return fmt.Errorf("%s: labels_digest is empty", where)
	case s.TP < 0 || s.FP < 0 || s.FN < 0:
		return fmt.Errorf("%s: negative count (tp %d, fp %d, fn %d)", where, s.TP, s.FP, s.FN)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"precision", s.Precision}, {"recall", s.Recall}, {"weighted_f1", s.WeightedF1}} {
		// NaN fails both comparisons, so it is refused too.
		if f.v != nil && !(*f.v >= 0 && *f.v <= 1) {
			return fmt.Errorf("%s: %s %v is outside [0, 1]", where, f.name, *f.v)
		}
	}
	var verdict any
	if s.VerdictCorrect != nil {
		verdict = 0
		if *s.VerdictCorrect {
			verdict = 1
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO scores
		(score_id, attempt_id, scored_at, labels_digest, tp, fp, fn, precision, recall, weighted_f1, verdict_correct, matches, findings, labels)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ScoreID, s.AttemptID, formatTime(s.ScoredAt), s.LabelsDigest, s.TP, s.FP, s.FN,
		nullFloat(s.Precision), nullFloat(s.Recall), nullFloat(s.WeightedF1), verdict, nullString(d.clean(s.Matches)),
		nullString(d.clean(s.Findings)), nullString(d.clean(s.Labels)))
	if err != nil {
		switch sqliteExtCode(err) {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%s: a score with this id is already recorded (scores are append-only)", where)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%s: attempt %q is not recorded", where, s.AttemptID)
		}
		return fmt.Errorf("%s: %w", where, d.classify(err))
	}
	return nil
}

// Scores returns every scoring of a run's attempts, oldest first within each
// attempt, attempts in the order of Results.
func (d *DB) Scores(ctx context.Context, runID string) ([]Score, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT s.score_id, s.attempt_id, s.scored_at, s.labels_digest,
			s.tp, s.fp, s.fn, s.precision, s.recall, s.weighted_f1, s.verdict_correct, s.matches,
			s.findings, s.labels
		FROM scores s JOIN results r ON r.attempt_id = s.attempt_id
		WHERE r.run_id = ? ORDER BY r.started_at, r.attempt_id, s.scored_at, s.score_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("scores of run %s: %w", runID, d.classify(err))
	}
	defer rows.Close()
	var out []Score
	for rows.Next() {
		var (
			s             Score
			at            string
			prec, rec, f1 sql.NullFloat64
			verdict       sql.NullInt64
			matches       sql.NullString
			found, labels sql.NullString
		)
		if err := rows.Scan(&s.ScoreID, &s.AttemptID, &at, &s.LabelsDigest, &s.TP, &s.FP, &s.FN,
			&prec, &rec, &f1, &verdict, &matches, &found, &labels); err != nil {
			return nil, fmt.Errorf("scores of run %s: %w", runID, err)
		}
		if s.ScoredAt, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("score %s: scored_at: %w", s.ScoreID, err)
		}
		s.Precision, s.Recall, s.WeightedF1 = floatPtr(prec), floatPtr(rec), floatPtr(f1)
		if verdict.Valid {
			v := verdict.Int64 == 1
			s.VerdictCorrect = &v
		}
		s.Matches, s.Findings, s.Labels = matches.String, found.String, labels.String
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("scores of run %s: %w", runID, err)
	}
	return out, nil
}

func floatPtr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}
