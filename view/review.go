package view

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wfbench/wfb/store"
)

// reviewView is a review attempt's findings and labels as its latest score
// kept them, each marked by that score's matches. Nothing here is scored
// or parsed at page time: a score recorded before wfb kept its findings
// and labels shows its counts and says so.
type reviewView struct {
	Verdict string
	Problem string // why the score's findings, labels or matches cannot be read
	Scored  bool
	// Listed says the findings come from the score (an empty list then
	// means the review reported none).
	Listed   bool
	Unmarked string // why findings and labels are not marked ("" when they are)
	TP       int
	FP       int
	FN       int
	Findings []findingView
	Labels   []labelView
	// LabelsNote says where the findings and labels come from, or why they
	// are not listed.
	LabelsNote string
}

// scoredFinding and scoredLabel are a score's findings and labels as the
// store keeps them (scores.findings and scores.labels, JSON; see store
// migration 0013), scoredMatch one of its matches (scores.matches).
type scoredFinding struct {
	ID             string `json:"id"`
	Severity       string `json:"severity"`
	Path           string `json:"path"`
	Line           int    `json:"line"`
	EndLine        int    `json:"end_line"`
	Category       string `json:"category"`
	Evidence       string `json:"evidence"`
	Recommendation string `json:"recommendation"`
	Blocking       bool   `json:"blocking"`
}

type scoredLabel struct {
	ID        string `json:"id"`
	Severity  string `json:"severity"`
	Path      string `json:"path"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	Category  string `json:"category"`
}

type scoredMatch struct {
	LabelID   string `json:"label_id"`
	FindingID string `json:"finding_id"`
}

type findingView struct {
	scoredFinding
	Mark     string // TP, FP, or "" when unmarked
	Label    string // the label a TP finding was counted against
	Unmarked string // why Mark is empty: "matches unreadable"
}

type labelView struct {
	scoredLabel
	Mark     string // TP, FN, or "" when unmarked
	Finding  string // the finding that matched it
	Unmarked string // why Mark is empty: "matches unreadable"
}

// reviewOf shows a review attempt's latest score: its counts, and the
// findings and labels it kept, marked by its matches. verdict is the one
// the row recorded from the artifact ("" when none was read).
func (s *Server) reviewOf(ctx context.Context, d *attemptData, verdict string) error {
	a := d.Artifact
	if a == nil {
		return nil
	}
	rv := &reviewView{Verdict: verdict}
	d.Review = rv
	if a.Bytes > store.MaxArtifactBytes {
		rv.addProblem(fmt.Sprintf("The artifact was %d bytes; only its first %d are stored.", a.Bytes, store.MaxArtifactBytes))
	}
	_, rows, err := s.db.Query(ctx, `SELECT tp, fp, fn, matches, findings, labels FROM scores WHERE attempt_id = ?
		ORDER BY scored_at DESC, score_id DESC LIMIT 1`, d.ID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		rv.LabelsNote = "This attempt was never scored: its findings (in the artifact above) are not matched to labels."
		return nil
	}
	v := rows[0]
	rv.Scored = true
	rv.TP, rv.FP, rv.FN = int(num(v[0])), int(num(v[1])), int(num(v[2]))
	findingsJSON, labelsJSON := str(v[4]), str(v[5])
	if findingsJSON == "" || labelsJSON == "" {
		rv.LabelsNote = "This score was recorded before wfb kept a score's findings and labels with it, so they are not listed " +
			"(the artifact above holds the findings): wfb rescore records a score that lists and marks them."
		return nil
	}
	var (
		findings []scoredFinding
		labels   []scoredLabel
	)
	if err := json.Unmarshal([]byte(findingsJSON), &findings); err != nil {
		rv.addProblem(fmt.Sprintf("The latest score's findings cannot be read (%v).", err))
		return nil
	}
	if err := json.Unmarshal([]byte(labelsJSON), &labels); err != nil {
		rv.addProblem(fmt.Sprintf("The latest score's labels cannot be read (%v).", err))
		return nil
	}
	matches := rv.readMatches(str(v[3]))
	rv.Listed = true
	rv.Findings = findingViews(findings, matches, rv.Unmarked)
	rv.Labels = labelViews(labels, matches, rv.Unmarked)
	rv.LabelsNote = "The findings and the labels this score used, as it kept them, marked by its matches."
	return nil
}

// readMatches reads the score's matches. When they cannot be read,
// rv.Unmarked says so and no finding or label is marked (a finding is then
// neither TP nor FP, never FP by default).
func (rv *reviewView) readMatches(m string) []scoredMatch {
	var matches []scoredMatch
	switch {
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
	return matches
}

func (rv *reviewView) addProblem(p string) {
	if rv.Problem != "" {
		rv.Problem += " "
	}
	rv.Problem += p
}

// findingViews marks each finding TP (matched) or FP; with unmarked set
// (why the matches are unknown) no finding is marked.
func findingViews(fs []scoredFinding, matches []scoredMatch, unmarked string) []findingView {
	labelOf := map[string]string{}
	for _, m := range matches {
		labelOf[m.FindingID] = m.LabelID
	}
	var out []findingView
	for _, f := range fs {
		v := findingView{scoredFinding: f}
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

// labelViews marks each label TP (matched) or FN; with unmarked set no
// label is marked.
func labelViews(ls []scoredLabel, matches []scoredMatch, unmarked string) []labelView {
	findingOf := map[string]string{}
	for _, m := range matches {
		findingOf[m.LabelID] = m.FindingID
	}
	var out []labelView
	for _, l := range ls {
		v := labelView{scoredLabel: l}
		switch f, ok := findingOf[l.ID]; {
		case unmarked != "":
			v.Unmarked = unmarked
		case ok:
			v.Mark, v.Finding = "TP", f
		default:
			v.Mark = "FN"
		}
		out = append(out, v)
	}
	return out
}
