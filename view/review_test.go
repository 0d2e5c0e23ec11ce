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
		`,"category":"bug","evidence":"e","recommendation":"r","blocking":true}`
}

// A score whose matches do not read as JSON leaves every finding unmarked,
// said in words, not FP against the page's own TP count.
func TestReviewWithUnreadableMatchesMarksNoFindingFP(t *testing.T) {
	f := newFixture(t)
	id := f.addReview(t, `{"schema_version":1,"verdict":"request_changes","findings":[`+finding("F1", 4)+`,`+finding("F2", 8)+`]}`,
		store.Score{TP: 1, FP: 1, FN: 0, Matches: `[{"label_id":"timing",`})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	if strings.Contains(page, `<span class="mark FP">FP</span>`) {
		t.Errorf("a finding is marked FP though the score's matches cannot be read")
	}
	for _, want := range []string{`<span class="mark TP">TP 1</span>`, "matches cannot be read", `<span class="null">matches unreadable</span></td> <td>F1</td>`,
		`<span class="null">matches unreadable</span></td> <td>F2</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// An artifact whose stored copy was cut at the storage limit does not
// parse; the page still shows the counts the score recorded, with why the
// findings cannot be listed.
func TestReviewWhoseArtifactDoesNotParseStillShowsTheScoresCounts(t *testing.T) {
	f := newFixture(t)
	big := `{"schema_version":1,"verdict":"approve","findings":[` + finding("F1", 4) + `],"note":"` + strings.Repeat("x", store.MaxArtifactBytes) + `"}`
	id := f.addReview(t, big, store.Score{TP: 2, FP: 0, FN: 1, Matches: `[]`})
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+id)
	page := strings.Join(strings.Fields(body), " ")
	for _, want := range []string{`<span class="mark TP">TP 2</span> <span class="mark FP">FP 0</span> <span class="mark FN">FN 1</span>`,
		"cannot be read as a review", "only its first 1048576 are stored", "the counts are the latest score"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
