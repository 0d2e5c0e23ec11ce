package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func bptr(v bool) *bool { return &v }

// TestRescoringAddsARowAndTheLatestWins stops a rescore from overwriting the
// score it replaces (rows are append-only) and the views from showing an
// older score, or two, for one attempt.
func TestRescoringAddsARowAndTheLatestWins(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	if err := d.InsertResult(ctx, okResult("att-1")); err != nil {
		t.Fatal(err)
	}
	first := &Score{ScoreID: "score-b", AttemptID: "att-1", ScoredAt: t0, LabelsDigest: "d1",
		TP: 1, FP: 1, FN: 0, Precision: ptr(0.5), Recall: ptr(1.0), WeightedF1: ptr(0.75), VerdictCorrect: bptr(false)}
	// Same millisecond, greater id: the tie goes to the greater id.
	second := &Score{ScoreID: "score-c", AttemptID: "att-1", ScoredAt: t0, LabelsDigest: "d2",
		TP: 1, FP: 0, FN: 1, Precision: ptr(1.0), Recall: ptr(0.5), WeightedF1: ptr(0.8), VerdictCorrect: bptr(true)}
	// Older, even with the greatest id: not the latest.
	older := &Score{ScoreID: "score-z", AttemptID: "att-1", ScoredAt: t0.Add(-time.Hour), LabelsDigest: "d0"}
	for _, s := range []*Score{first, second, older} {
		if err := d.InsertScore(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	_, rows, err := d.Query(ctx, `SELECT attempt_id, score_id, labels_digest, tp, fp, fn, precision, recall, weighted_f1, verdict_correct FROM scored_results_v`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"att-1", "score-c", "d2", int64(1), int64(0), int64(1), 1.0, 0.5, 0.8, int64(1)}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("scored_results_v (-want +got):\n%s", diff)
	}
	all, err := d.Scores(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range all {
		got = append(got, s.ScoreID)
	}
	if diff := cmp.Diff([]string{"score-z", "score-b", "score-c"}, got); diff != "" {
		t.Errorf("Scores order (-want +got):\n%s", diff)
	}
	for _, q := range []string{
		`UPDATE scores SET tp = 9`,
		`DELETE FROM scores`,
	} {
		if _, err := d.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "scores are append-only") {
			t.Errorf("%s: %v, want refused as append-only", q, err)
		}
	}
}

// TestUnmeasuredScoresStayNull stops an undefined precision or recall (no
// findings, no labels) or an unread verdict from being stored as 0, and an
// unscored attempt from showing zeros in scored_results_v.
func TestUnmeasuredScoresStayNull(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, id := range []string{"att-null", "att-zero", "att-unscored"} {
		if err := d.InsertResult(ctx, okResult(id)); err != nil {
			t.Fatal(err)
		}
	}
	in := []*Score{
		{AttemptID: "att-null", LabelsDigest: "d"},
		{AttemptID: "att-zero", LabelsDigest: "d", FP: 1, FN: 1, Precision: ptr(0.0), Recall: ptr(0.0), WeightedF1: ptr(0.0), VerdictCorrect: bptr(false)},
	}
	for _, s := range in {
		if err := d.InsertScore(ctx, s); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s.ScoreID, "score-") || s.ScoredAt.IsZero() {
			t.Errorf("InsertScore did not fill id and time: %q %v", s.ScoreID, s.ScoredAt)
		}
	}
	_, rows, err := d.Query(ctx, `SELECT attempt_id, tp, fp, fn, precision, recall, weighted_f1, verdict_correct FROM scored_results_v ORDER BY attempt_id`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"att-null", int64(0), int64(0), int64(0), nil, nil, nil, nil},
		{"att-unscored", nil, nil, nil, nil, nil, nil, nil},
		{"att-zero", int64(0), int64(1), int64(1), 0.0, 0.0, 0.0, int64(0)},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("scored_results_v (-want +got):\n%s", diff)
	}
	got, err := d.Scores(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].ScoredAt = in[i].ScoredAt
	}
	if diff := cmp.Diff([]Score{*in[0], *in[1]}, got); diff != "" {
		t.Errorf("Scores round trip (-want +got):\n%s", diff)
	}
}

// TestAScoreKeepsTheFindingsAndLabelsItScored stops a score that a reader
// can mark findings by only after parsing the artifact and scoring again:
// the findings and labels come back as written, and a score without them
// (one recorded before wfb kept them) reads NULL, never an empty list.
func TestAScoreKeepsTheFindingsAndLabelsItScored(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, id := range []string{"att-kept", "att-old"} {
		if err := d.InsertResult(ctx, okResult(id)); err != nil {
			t.Fatal(err)
		}
	}
	kept := &Score{AttemptID: "att-kept", ScoredAt: t0, LabelsDigest: "d", TP: 1, Matches: `[{"label_id":"L1","finding_id":"F1"}]`,
		Findings: `[{"id":"F1","severity":"high","path":"a.go","line":3,"end_line":3,"category":"bug","evidence":"e","recommendation":"r","blocking":true}]`,
		Labels:   `[{"id":"L1","severity":"high","path":"a.go","line_start":2,"line_end":4,"category":"bug"}]`}
	old := &Score{AttemptID: "att-old", ScoredAt: t0, LabelsDigest: "d", FN: 1, Matches: `[]`}
	for _, s := range []*Score{kept, old} {
		if err := d.InsertScore(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Scores(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].ScoredAt = t0
	}
	if diff := cmp.Diff([]Score{*kept, *old}, got); diff != "" {
		t.Errorf("Scores round trip (-want +got):\n%s", diff)
	}
	_, rows, err := d.Query(ctx, `SELECT attempt_id, findings IS NULL, labels IS NULL FROM scores ORDER BY attempt_id`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]any{{"att-kept", int64(0), int64(0)}, {"att-old", int64(1), int64(1)}}, rows); diff != "" {
		t.Errorf("findings and labels NULL (-want +got):\n%s", diff)
	}
}

// TestInvalidScoresAreRefusedNamingTheField stops a scorer bug (a ratio
// above 1, NaN, a negative count, an unknown attempt) from reaching the file.
func TestInvalidScoresAreRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	if err := d.InsertResult(ctx, okResult("att-1")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    Score
		want string
	}{
		{"precision above 1", Score{AttemptID: "att-1", LabelsDigest: "d", Precision: ptr(1.5)}, "precision 1.5 is outside [0, 1]"},
		{"recall NaN", Score{AttemptID: "att-1", LabelsDigest: "d", Recall: ptr(math.NaN())}, "recall NaN is outside [0, 1]"},
		{"negative count", Score{AttemptID: "att-1", LabelsDigest: "d", FN: -1}, "negative count (tp 0, fp 0, fn -1)"},
		{"no digest", Score{AttemptID: "att-1"}, "labels_digest is empty"},
		{"unknown attempt", Score{AttemptID: "att-x", LabelsDigest: "d"}, `attempt "att-x" is not recorded`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.ScoreID = "score-1"
			err := d.InsertScore(ctx, &s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "score-1") {
				t.Errorf("error %v: want one naming score-1 and saying %q", err, tc.want)
			}
		})
	}
	n := queryOne(t, d, `SELECT count(*) FROM scores`)
	if diff := cmp.Diff([]any{int64(0)}, n); diff != "" {
		t.Errorf("scores written (-want +got):\n%s", diff)
	}
}

// TestArtifactsAreRedactedBoundedAndDigestedAsWritten stops a secret in a
// review from reaching the file, a runaway artifact from bloating it, and a
// stored copy from passing for the artifact the session wrote.
func TestArtifactsAreRedactedBoundedAndDigestedAsWritten(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, id := range []string{"att-1", "att-2"} {
		if err := d.InsertResult(ctx, okResult(id)); err != nil {
			t.Fatal(err)
		}
	}
	secret := "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	small := []byte(`{"evidence": "key ` + secret + ` leaked"}`)
	huge := bytes.Repeat([]byte("x"), MaxArtifactBytes+10)
	if err := d.InsertArtifact(ctx, "att-1", "review-output.json", small); err != nil {
		t.Fatal(err)
	}
	if err := d.InsertArtifact(ctx, "att-2", "review-output.json", huge); err != nil {
		t.Fatal(err)
	}
	got, err := d.Artifacts(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	digest := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	want := []Artifact{
		{AttemptID: "att-1", Name: "review-output.json", Content: []byte(`{"evidence": "key ` + Redacted + ` leaked"}`), SHA256: digest(small), Bytes: int64(len(small))},
		{AttemptID: "att-2", Name: "review-output.json", Content: huge[:MaxArtifactBytes], SHA256: digest(huge), Bytes: int64(len(huge))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	if err := d.InsertArtifact(ctx, "att-1", "review-output.json", []byte("{}")); err == nil || !strings.Contains(err.Error(), "already has an artifact") {
		t.Errorf("second artifact: %v, want refused", err)
	}
	if err := d.InsertArtifact(ctx, "att-9", "review-output.json", []byte("{}")); err == nil || !strings.Contains(err.Error(), `attempt "att-9" is not recorded`) {
		t.Errorf("artifact of an unknown attempt: %v, want refused", err)
	}
	if _, err := d.db.ExecContext(ctx, `UPDATE artifacts SET content = x'00'`); err == nil || !strings.Contains(err.Error(), "artifacts are append-only") {
		t.Errorf("update: %v, want refused as append-only", err)
	}
}

// TestASchema1FileIsUpgradedKeepingItsRows stops the 0002 migration from
// losing or hiding rows of a file written before it existed.
func TestASchema1FileIsUpgradedKeepingItsRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	init, err := migrationFS.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		string(init),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (1, '0001_init', '2026-01-01T00:00:00.000Z')`,
		`INSERT INTO runs (run_id, kind, started_at, status, harness) VALUES ('run-old', 'run', '2026-01-01T00:00:00.000Z', 'complete', 'old')`,
		`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok) VALUES ('run-old', 'att-old', 't', 'a', 0, 1, '2026-01-01T00:00:00.000Z', 1)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	raw.Close()

	if _, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "schema version 1") {
		t.Fatalf("read-only open of a version 1 file: %v, want ErrSchemaTooOld", err)
	}
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := queryOne(t, d, `SELECT max(version) FROM schema_migrations`); !cmp.Equal([]any{int64(SchemaVersion())}, got) || SchemaVersion() < 2 {
		t.Errorf("version after upgrade %v, want %d (at least 2)", got, SchemaVersion())
	}
	got := queryOne(t, d, `SELECT attempt_id, label, precision, weighted_f1, verdict_correct FROM scored_results_v`)
	if diff := cmp.Diff([]any{"att-old", nil, nil, nil, nil}, got); diff != "" {
		t.Errorf("old row through scored_results_v (-want +got):\n%s", diff)
	}
	if err := d.InsertScore(ctx, &Score{AttemptID: "att-old", LabelsDigest: "d", TP: 1, Precision: ptr(1.0)}); err != nil {
		t.Errorf("scoring an attempt recorded before the upgrade: %v", err)
	}
}

// TestAFileOneSchemaAheadIsRefusedUntouched stops an older wfb from opening
// a file a newer wfb wrote, whatever the newer schema added: here a
// next migration that creates a table, exactly what this binary's 0002 is
// to a binary that knows only 0001.
func TestAFileOneSchemaAheadIsRefusedUntouched(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ahead.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	next := SchemaVersion() + 1
	if _, err := d.db.ExecContext(ctx, `CREATE TABLE future (x INTEGER) STRICT`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', '2030-01-01T00:00:00.000Z')`, next); err != nil {
		t.Fatal(err)
	}
	d.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(context.Context, string) (*DB, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		d, err := open(ctx, path)
		if err == nil {
			d.Close()
			t.Fatalf("%s opened a file at schema %d", name, next)
		}
		if !strings.Contains(err.Error(), "use a newer wfb") {
			t.Errorf("%s: %v, want ErrSchemaTooNew telling to use a newer wfb", name, err)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the refused file was changed")
	}
}
