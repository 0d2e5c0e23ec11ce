package view

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb/runner/review"
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
	Problem  string // why the stored artifact cannot be read
	Scored   bool
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
	Mark  string // TP, FP, or "" when not scored
	Label string // the label a TP finding was counted against
}

type labelView struct {
	review.Label
	Mark    string // TP or FN
	Finding string // the finding that matched it
}

// reviewOf reads the attempt's stored artifact as a review and marks its
// findings by the latest score's matches (the pairs runner/review's
// ScoreReview counted as TP); with the task's labels, when their digest is
// the one scored, ScoreReview matches them again to list each label.
func (s *Server) reviewOf(ctx context.Context, d *attemptData, task string) error {
	a := d.Artifact
	if a == nil {
		return nil
	}
	rv := &reviewView{}
	d.Review = rv
	parsed, err := review.ParseReviewBytes(a.Name, []byte(a.Content))
	if err != nil {
		rv.Problem = err.Error()
		return nil
	}
	rv.Verdict = parsed.Verdict
	_, rows, err := s.db.Query(ctx, `SELECT labels_digest, tp, fp, fn, matches FROM scores WHERE attempt_id = ?
		ORDER BY scored_at DESC, score_id DESC LIMIT 1`, d.ID)
	if err != nil {
		return err
	}
	var matches []review.Match
	digest := ""
	if len(rows) == 1 {
		v := rows[0]
		rv.Scored, digest = true, str(v[0])
		rv.TP, rv.FP, rv.FN = int(num(v[1])), int(num(v[2])), int(num(v[3]))
		if m := str(v[4]); m != "" {
			if err := json.Unmarshal([]byte(m), &matches); err != nil {
				rv.Problem = fmt.Sprintf("the score's matches do not read: %v", err)
			}
		}
	}
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
		matches = sc.Matches
		rv.LabelsNote = "Labels from the bench file, the ones this score used; matched again by the scorer."
		rv.Labels = labelViews(tl.Labels, matches)
	}
	rv.Findings = findingViews(parsed.Findings, matches, rv.Scored)
	return nil
}

func findingViews(fs []review.Finding, matches []review.Match, scored bool) []findingView {
	labelOf := map[string]string{}
	for _, m := range matches {
		labelOf[m.FindingID] = m.LabelID
	}
	var out []findingView
	for _, f := range fs {
		v := findingView{Finding: f}
		if l, ok := labelOf[f.ID]; ok {
			v.Mark, v.Label = "TP", l
		} else if scored {
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
