package view

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// addReview records, in the fixture's run B, a review attempt of task rv
// with the given artifact and one score, and returns the attempt id.
func (f *fixture) addReview(t *testing.T, artifact string, sc store.Score) string {
	t.Helper()
	ctx := context.Background()
	db := f.openWritable(t)
	defer db.Close()
	r := &store.Result{RunID: f.runB, Task: "rv", Arm: "a", Attempt: 1, StartedAt: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC),
		OK: true, ProcessState: wfb.StateExited, Agent: "claude", AgentVersion: "2.0.1"}
	if err := db.InsertResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertArtifact(ctx, r.AttemptID, "review-output.json", []byte(artifact)); err != nil {
		t.Fatal(err)
	}
	sc.AttemptID, sc.LabelsDigest = r.AttemptID, "sha256:labels"
	if err := db.InsertScore(ctx, &sc); err != nil {
		t.Fatal(err)
	}
	return r.AttemptID
}

func finding(id string, line int) string {
	return `{"id":"` + id + `","severity":"medium","path":"a.go","line":` + string(rune('0'+line)) +
		`,"end_line":` + string(rune('0'+line)) + `,"category":"bug","evidence":"e","recommendation":"r","blocking":true}`
}

const (
	twoFindings = `{"schema_version":1,"verdict":"request_changes","findings":[F1,F2]}`
	labelsJSON  = `[{"id":"timing","severity":"high","path":"a.go","line_start":3,"line_end":5,"category":"bug"},` +
		`{"id":"missed","severity":"low","path":"b.go","line_start":1,"line_end":1,"category":"bug"}]`
)

func reviewArtifact() (artifact, findings string) {
	findings = "[" + finding("F1", 4) + "," + finding("F2", 8) + "]"
	return strings.Replace(twoFindings, "[F1,F2]", findings, 1), findings
}

// The page marks each finding and each label from what the latest score
// kept (findings, labels, matches): F1 TP on label timing, F2 FP, label
// missed FN, with no bench file and no scoring at page time.
func TestReviewMarksFindingsAndLabelsFromTheStoredScore(t *testing.T) {
	f := newFixture(t)
	art, findings := reviewArtifact()
	id := f.addReview(t, art, store.Score{TP: 1, FP: 1, FN: 1, Matches: `[{"label_id":"timing","finding_id":"F1"}]`,
		Findings: findings, Labels: labelsJSON})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	for _, want := range []string{
		`<span class="mark TP">TP 1</span> <span class="mark FP">FP 1</span> <span class="mark FN">FN 1</span>`,
		`<tr class="TP"><td><span class="mark TP">TP</span> label timing</td> <td>F1</td>`,
		`<tr class="FP"><td><span class="mark FP">FP</span></td> <td>F2</td>`,
		`<tr class="TP"><td><span class="mark TP">TP</span> finding F1</td><td>timing</td>`,
		`<tr class="FN"><td><span class="mark FN">FN</span></td><td>missed</td>`,
		"the labels this score used",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A score whose matches do not read as JSON leaves every finding and label
// unmarked, said in words, not FP or FN against the page's own TP count.
func TestReviewWithUnreadableMatchesMarksNoFindingFP(t *testing.T) {
	f := newFixture(t)
	art, findings := reviewArtifact()
	id := f.addReview(t, art, store.Score{TP: 1, FP: 1, FN: 0, Matches: `[{"label_id":"timing",`, Findings: findings, Labels: labelsJSON})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	if strings.Contains(page, `<span class="mark FP">FP</span>`) || strings.Contains(page, `<span class="mark FN">FN</span>`) {
		t.Errorf("a finding or label is marked though the score's matches cannot be read")
	}
	for _, want := range []string{`<span class="mark TP">TP 1</span>`, "matches cannot be read", `<span class="null">matches unreadable</span></td> <td>F1</td>`,
		`<span class="null">matches unreadable</span></td> <td>F2</td>`, `<span class="null">matches unreadable</span></td><td>missed</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A score recorded before wfb kept its findings and labels shows its counts
// and says why nothing is listed; the viewer never parses the artifact or
// scores it again to fill them in, and never says the review had none.
func TestAScoreWithoutKeptFindingsShowsItsCountsAndSaysSo(t *testing.T) {
	f := newFixture(t)
	art, _ := reviewArtifact()
	id := f.addReview(t, art, store.Score{TP: 1, FP: 1, FN: 1, Matches: `[{"label_id":"timing","finding_id":"F1"}]`})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	for _, want := range []string{`<span class="mark TP">TP 1</span> <span class="mark FP">FP 1</span> <span class="mark FN">FN 1</span>`,
		"This score was recorded before wfb kept", "wfb rescore records a score that lists"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, not := range []string{`<table class="findings">`, `<table class="labels">`, "reports no findings"} {
		if strings.Contains(page, not) {
			t.Errorf("the page shows %q, though the score kept no findings", not)
		}
	}
}

// An artifact whose stored copy was cut at the storage limit is said so;
// the score's counts are still shown.
func TestAnArtifactCutAtTheStorageLimitIsSaidSo(t *testing.T) {
	f := newFixture(t)
	big := `{"schema_version":1,"verdict":"approve","findings":[` + finding("F1", 4) + `],"note":"` + strings.Repeat("x", store.MaxArtifactBytes) + `"}`
	id := f.addReview(t, big, store.Score{TP: 2, FP: 0, FN: 1, Matches: `[]`})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	for _, want := range []string{`<span class="mark TP">TP 2</span> <span class="mark FP">FP 0</span> <span class="mark FN">FN 1</span>`,
		"only its first 1048576 are stored"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
