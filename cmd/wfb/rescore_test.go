package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// wfbCmd runs wfb in process, stdout not a terminal, and returns stdout,
// stderr and the exit code.
func wfbCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	s, out, errOut := testStreams("", nil)
	code := run(context.Background(), args, s)
	return out.String(), errOut.String(), code
}

const rescoreBench = `runs: 1
provider: {mock: replies.yaml}
tasks:
  - id: rev
    workspace: ./ws
    prompt: review the change
    review: true
    labels:
      - {id: L1, severity: high, path: a.go, line_start: 3, line_end: 5, category: bug}
      - {id: L2, severity: low, path: b.go, line_start: 10, category: style}
  - {id: code, workspace: ./ws, prompt: fix it}
arms:
  - {id: baseline, agent: stand-in}
`

// rescoreFixture writes a bench and a results file whose run "run-r" holds
// one attempt of each kind rescore must tell apart.
func rescoreFixture(t *testing.T) (bench, db string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	bench = filepath.Join(dir, "bench.yaml")
	for name, text := range map[string]string{"bench.yaml": rescoreBench, "replies.yaml": "replies: []\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db = filepath.Join(dir, "results.db")
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Date(2026, 11, 30, 2, 40, 31, 0, time.UTC)
	if err := d.CreateRun(ctx, store.Run{ID: "run-r", Label: "nightly", Kind: "run", StartedAt: start, Status: wfb.RunComplete, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	finding := `{"id":"f1","severity":"medium","path":"a.go","line":4,"category":"bug","evidence":"e","recommendation":"r","blocking":true}`
	attempts := []struct {
		id, task, artifact string
	}{
		{"att-1-found", "rev", `{"schema_version":1,"verdict":"request_changes","findings":[` + finding + `]}`},
		{"att-2-approved", "rev", `{"schema_version":1,"verdict":"approve","findings":[]}`},
		{"att-3-missing", "rev", ""},
		{"att-4-invalid", "rev", `{"schema_version":1,"verdict":"maybe","findings":[]}`},
		{"att-5-code", "code", `{"schema_version":1,"verdict":"approve","findings":[]}`},
		{"att-6-gone", "gone", `{"schema_version":1,"verdict":"approve","findings":[]}`},
	}
	for i, a := range attempts {
		r := &store.Result{RunID: "run-r", AttemptID: a.id, Task: a.task, Arm: "baseline", Rep: i, Attempt: 1,
			StartedAt: start.Add(time.Duration(i) * time.Second), OK: true, ProcessState: wfb.StateExited}
		if a.artifact == "" {
			r.OK, r.ErrorKind = false, wfb.KindArtifactMissing
		}
		if err := d.InsertResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		if a.artifact != "" {
			if err := d.InsertArtifact(ctx, a.id, "review-output.json", []byte(a.artifact)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A scoring from before the labels changed.
	old := 0.25
	if err := d.InsertScore(ctx, &store.Score{ScoreID: "score-old", AttemptID: "att-1-found", ScoredAt: start,
		LabelsDigest: "old", TP: 1, FP: 3, WeightedF1: &old}); err != nil {
		t.Fatal(err)
	}
	return bench, db
}

// TestRescoreAddsAScoreFromTheStoredArtifact stops rescore from updating the
// earlier score in place, scoring attempts it has no ground truth or no
// valid artifact for, or inventing zeros for what it could not measure.
func TestRescoreAddsAScoreFromTheStoredArtifact(t *testing.T) {
	bench, db := rescoreFixture(t)
	out, errOut, code := wfbCmd(t, "rescore", "run-r", "--bench", bench, "--db", db, "--format", "tsv")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	// f1 (medium, a.go:4) falls on L1 (high, a.go:3-5): TP 1; L2 is
	// missed. Precision 1/1, recall 1/2, weighted F1 2·3/(2·3+0+1) = 6/7.
	// The approval finds nothing: precision NULL, recall 0, F1 0, and
	// approving a high label is the wrong verdict.
	want := strings.Join([]string{
		"# rescore run-r against " + bench,
		"attempt_id\ttask\tarm\trep\ttp\tfp\tfn\tprecision\trecall\tweighted_f1\tverdict_correct\twas_weighted_f1\tnote",
		"att-1-found\trev\tbaseline\t0\t1\t0\t1\t1\t0.5\t0.857\t1\t0.25\tscored",
		"att-2-approved\trev\tbaseline\t1\t0\t0\t2\tNULL\t0\t0\t0\tNULL\tscored",
		"att-3-missing\trev\tbaseline\t2\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tnot scored: no artifact stored",
		`att-4-invalid	rev	baseline	3	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	not scored: review artifact review-output.json is invalid: verdict: "maybe" is not one of approve|comment|request_changes`,
		"att-5-code\tcode\tbaseline\t4\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tnot scored: not a review task",
		"att-6-gone\tgone\tbaseline\t5\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tnot scored: task not in the bench",
		"# [1] 2 of 6 attempts scored; each scoring added a row to scores (scored_results_v shows the newest).",
		"# [2] NULL: not measured (precision without findings, recall without labels, verdict_correct without a verdict).",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}

	ctx := context.Background()
	d, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, rows, err := d.Query(ctx, `SELECT attempt_id, tp, fp, fn, precision, recall, verdict_correct, score_id = 'score-old' FROM scored_results_v ORDER BY attempt_id`)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]any{
		{"att-1-found", int64(1), int64(0), int64(1), 1.0, 0.5, int64(1), int64(0)},
		{"att-2-approved", int64(0), int64(0), int64(2), nil, 0.0, int64(0), int64(0)},
		{"att-3-missing", nil, nil, nil, nil, nil, nil, nil},
		{"att-4-invalid", nil, nil, nil, nil, nil, nil, nil},
		{"att-5-code", nil, nil, nil, nil, nil, nil, nil},
		{"att-6-gone", nil, nil, nil, nil, nil, nil, nil},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("scored_results_v (-want +got):\n%s", diff)
	}
	_, rows, err = d.Query(ctx, `SELECT score_id, tp, fp, weighted_f1 FROM scores WHERE score_id = 'score-old'`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]any{{"score-old", int64(1), int64(3), 0.25}}, rows); diff != "" {
		t.Errorf("the earlier score was changed (-want +got):\n%s", diff)
	}
	d.Close()

	// A second rescore adds two more rows.
	if _, errOut, code := wfbCmd(t, "rescore", "run-r", "--bench", bench, "--db", db); code != 0 {
		t.Fatalf("second rescore: exit %d, %s", code, errOut)
	}
	d, err = store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, rows, _ := d.Query(ctx, `SELECT count(*), count(DISTINCT labels_digest) FROM scores`); !cmp.Equal([][]any{{int64(5), int64(2)}}, rows) {
		t.Errorf("scores after two rescores (count, digests): %v, want 1 old + 2 + 2 rows over 2 digests", rows)
	}
}

// TestRescoreRefusesBadInputWithExit2 stops rescore from creating an empty
// results file for a mistyped path, or scoring against a bench it could not
// read.
func TestRescoreRefusesBadInputWithExit2(t *testing.T) {
	bench, db := rescoreFixture(t)
	missing := filepath.Join(t.TempDir(), "missing.db")
	badBench := filepath.Join(filepath.Dir(bench), "bad.yaml")
	if err := os.WriteFile(badBench, []byte("runs: three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no bench", []string{"rescore", "run-r", "--db", db}, "--bench FILE is required"},
		{"bad bench", []string{"rescore", "run-r", "--bench", badBench, "--db", db}, "bad.yaml:1"},
		{"unknown run", []string{"rescore", "run-x", "--bench", bench, "--db", db}, `no run or label "run-x"; latest runs: run-r (nightly)`},
		{"a filter", []string{"rescore", "arm=baseline", "--bench", bench, "--db", db}, "rescore takes a run id or label, not a filter"},
		{"missing file", []string{"rescore", "run-r", "--bench", bench, "--db", missing}, "no such file"},
		{"no run", []string{"rescore", "--bench", bench, "--db", db}, "exactly one RUN id or LABEL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := wfbCmd(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errOut, tc.want)
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("rescore created %s", missing)
	}
}

// TestRescoreRefusesAnArtifactTooLargeToBeValid stops rescore from parsing
// the stored copy of an oversized artifact, which the store cut short, as
// if it were the whole review: the note names the real size and the limit.
func TestRescoreRefusesAnArtifactTooLargeToBeValid(t *testing.T) {
	bench, db := rescoreFixture(t)
	ctx := context.Background()
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r := &store.Result{RunID: "run-r", AttemptID: "att-7-huge", Task: "rev", Arm: "baseline", Rep: 6, Attempt: 1,
		StartedAt: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC), OK: true, ProcessState: wfb.StateExited}
	if err := d.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Valid up to the cut: only its size makes it invalid.
	huge := `{"schema_version":1,"verdict":"approve","findings":[]}` + strings.Repeat(" ", 1<<20)
	if err := d.InsertArtifact(ctx, r.AttemptID, "review-output.json", []byte(huge)); err != nil {
		t.Fatal(err)
	}
	d.Close()

	out, errOut, code := wfbCmd(t, "rescore", "run-r", "--bench", bench, "--db", db, "--format", "tsv")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") { // the footnotes after the rows
			lines = append(lines, l)
		}
	}
	want := fmt.Sprintf("att-7-huge\trev\tbaseline\t6\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tnot scored: artifact invalid: is %d bytes, more than the 1048576 allowed", len(huge))
	if diff := cmp.Diff(want, lines[len(lines)-1]); diff != "" {
		t.Errorf("last row (-want +got):\n%s", diff)
	}
}

// TestRescoreTakesALabelAndRoundsRatiosAsReportDoes stops rescore from
// taking only a run id where export takes a label, and from printing
// 0.8571428571428571 to people where report prints 0.857; programs (csv)
// still get the whole value (its 15 significant digits).
func TestRescoreTakesALabelAndRoundsRatiosAsReportDoes(t *testing.T) {
	for format, want := range map[string]string{
		"tsv": "att-1-found\trev\tbaseline\t0\t1\t0\t1\t1\t0.5\t0.857\t1\t0.25\tscored\n",
		"csv": "att-1-found,rev,baseline,0,1,0,1,1,0.5,0.857142857142857,1,0.25,scored\n",
	} {
		bench, db := rescoreFixture(t) // a file of its own: a rescore changes "was"
		out, errOut, code := wfbCmd(t, "rescore", "nightly", "--bench", bench, "--db", db, "--format", format)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, stderr %s; output lacks %q:\n%s", format, code, errOut, want, out)
		}
	}
}
