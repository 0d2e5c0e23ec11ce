package view

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/store"
)

// TaskLabels are a task's ground truth from a bench file: its labels and
// the verdict it expects ("" lets the labels decide).
type TaskLabels struct {
	Labels  []review.Label
	Verdict string
}

// reviewView is a review attempt's findings as its latest score counted
// them, and, when the bench's labels for the task are known and are the
// ones scored, every label found or missed.
type reviewView struct {
	Verdict  string
	Problem  string // why the stored artifact or the score's matches cannot be read
	Scored   bool
	Unmarked string // why findings are not marked ("" when they are)
	TP       int
	FP       int
	FN       int
	Findings []findingView
	Labels   []labelView
	// LabelsNote says where the labels come from, or why they are not
	// listed.
	LabelsNote string
}

type findingView struct {
	review.Finding
	Mark     string // TP, FP, or "" when unmarked
	Label    string // the label a TP finding was counted against
	Unmarked string // why Mark is empty: "not scored", "matches unreadable"
}

type labelView struct {
	review.Label
	Mark    string // TP or FN
	Finding string // the finding that matched it
}

// reviewOf reads the attempt's stored artifact as a review and marks its
// findings by the latest score's matches (the pairs runner/review's
// ScoreReview counted as TP); with the task's labels, when their digest is
// the one scored, ScoreReview matches them again to list each label. The
// score is read first: an artifact that does not parse (cut at the storage
// limit, say) still shows the counts the score recorded, with the reason.
func (s *Server) reviewOf(ctx context.Context, d *attemptData, task string) error {
	a := d.Artifact
	if a == nil {
		return nil
	}
	rv := &reviewView{}
	d.Review = rv
	matches, digest, err := s.latestScore(ctx, rv, d.ID)
	if err != nil {
		return err
	}
	parsed, err := review.ParseReviewBytes(a.Name, []byte(a.Content))
	if err != nil {
		rv.addProblem(artifactProblem(a, err))
		rv.LabelsNote = "The findings cannot be listed, so they are not matched to labels."
		if rv.Scored {
			rv.LabelsNote = "The findings cannot be listed, so they are not matched to labels; the counts are the latest score's."
		}
		return nil
	}
	rv.Verdict = parsed.Verdict
	tl, known := s.labels[task]
	switch {
	case !rv.Scored:
		rv.LabelsNote = "This attempt was never scored: its findings are not matched to labels."
	case !known:
		rv.LabelsNote = fmt.Sprintf("%d label(s) missed (FN); their ids are in the bench file: wfb view --bench FILE lists them.", rv.FN)
	case review.LabelsDigest(tl.Labels, tl.Verdict) != digest:
		rv.LabelsNote = "The bench's labels for task " + task + " are not the ones this score used (their digest differs): wfb rescore scores against them."
	default:
		sc := review.ScoreReview(parsed, tl.Labels, tl.Verdict)
		matches, rv.Unmarked = sc.Matches, ""
		rv.LabelsNote = "Labels from the bench file, the ones this score used; matched again by the scorer."
		rv.Labels = labelViews(tl.Labels, matches)
	}
	rv.Findings = findingViews(parsed.Findings, matches, rv.Unmarked)
	return nil
}

// latestScore fills rv's counts from the attempt's latest score and returns
// its matches and labels digest. rv.Unmarked says why findings cannot be
// marked: never scored, or the score's matches cannot be read (a finding
// is then neither TP nor FP, never FP by default).
func (s *Server) latestScore(ctx context.Context, rv *reviewView, attemptID string) ([]review.Match, string, error) {
	_, rows, err := s.db.Query(ctx, `SELECT labels_digest, tp, fp, fn, matches FROM scores WHERE attempt_id = ?
		ORDER BY scored_at DESC, score_id DESC LIMIT 1`, attemptID)
	if err != nil {
		return nil, "", err
	}
	if len(rows) == 0 {
		rv.Unmarked = "not scored"
		return nil, "", nil
	}
	v := rows[0]
	rv.Scored = true
	rv.TP, rv.FP, rv.FN = int(num(v[1])), int(num(v[2])), int(num(v[3]))
	var matches []review.Match
	switch m := str(v[4]); {
	case m == "" && rv.TP > 0:
		// NULL is "none recorded": with TPs counted, which findings they
		// are is unknown.
		rv.Unmarked = "matches unreadable"
		rv.addProblem(fmt.Sprintf("The latest score counted %d TP but recorded no matches: which findings they are is not known from it.", rv.TP))
	case m != "":
		if err := json.Unmarshal([]byte(m), &matches); err != nil {
			matches, rv.Unmarked = nil, "matches unreadable"
			rv.addProblem(fmt.Sprintf("The latest score's matches cannot be read (%v): which findings it counted as TP is not known from it.", err))
		}
	}
	return matches, str(v[0]), nil
}

// artifactProblem says why the stored artifact cannot be read as a review,
// and whether its stored copy was cut at the storage limit.
func artifactProblem(a *artifact, err error) string {
	msg := "The stored artifact cannot be read as a review: " + err.Error()
	if a.Bytes > store.MaxArtifactBytes {
		msg += fmt.Sprintf(" (the artifact was %d bytes; only its first %d are stored)", a.Bytes, store.MaxArtifactBytes)
	}
	return msg
}

func (rv *reviewView) addProblem(p string) {
	if rv.Problem != "" {
		rv.Problem += " "
	}
	rv.Problem += p
}

// findingViews marks each finding TP (matched) or FP; with unmarked set
// (why the matches are unknown) no finding is marked.
func findingViews(fs []review.Finding, matches []review.Match, unmarked string) []findingView {
	labelOf := map[string]string{}
	for _, m := range matches {
		labelOf[m.FindingID] = m.LabelID
	}
	var out []findingView
	for _, f := range fs {
		v := findingView{Finding: f}
		switch l, ok := labelOf[f.ID]; {
		case unmarked != "":
			v.Unmarked = unmarked
		case ok:
			v.Mark, v.Label = "TP", l
		default:
			v.Mark = "FP"
		}
		out = append(out, v)
	}
	return out
}

func labelViews(ls []review.Label, matches []review.Match) []labelView {
	findingOf := map[string]string{}
	for _, m := range matches {
		findingOf[m.LabelID] = m.FindingID
	}
	var out []labelView
	for _, l := range ls {
		v := labelView{Label: l, Mark: "FN"}
		if f, ok := findingOf[l.ID]; ok {
			v.Mark, v.Finding = "TP", f
		}
		out = append(out, v)
	}
	return out
}
