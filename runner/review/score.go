package review

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// Label is one known issue of a task: the ground truth a review is scored
// against. Lines count from 1 and LineEnd >= LineStart; Path is
// repo-relative. CheckLabels says whether a set is well formed.
type Label struct {
	ID        string `json:"id"`
	Severity  string `json:"severity"` // critical, high, medium or low
	Path      string `json:"path"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	Category  string `json:"category"`
}

// Match pairs one finding with the label it was counted against.
type Match struct {
	LabelID   string `json:"label_id"`
	FindingID string `json:"finding_id"`
}

// Score is how a review compares with a task's labels.
//
// TP counts matched pairs, FP findings left unmatched, FN labels left
// unmatched. Precision is TP/(TP+FP), nil when the review has no findings;
// Recall is TP/(TP+FN), nil when the task has no labels: an undefined ratio
// is not measured, never an invented 0 or 1. WeightedF1 is
// 2·WTP/(2·WTP+WFP+WFN) over severity weights (see SeverityWeight), nil
// only when there are neither findings nor labels. VerdictCorrect is nil
// when no verdict rule applies (see ExpectedVerdict).
type Score struct {
	TP, FP, FN int
	// WTP, WFP and WFN are the severity-weighted counts behind WeightedF1:
	// a matched or missed label weighs by the label's severity, an unmatched
	// finding by the finding's own severity.
	WTP, WFP, WFN  int
	Precision      *float64
	Recall         *float64
	WeightedF1     *float64
	VerdictCorrect *bool
	// Matches are the pairs counted as TP, ordered by label id.
	Matches []Match
}

// SeverityWeight returns the weight of a severity in the weighted F1:
// critical 4, high 3, medium 2, low 1. ok is false for anything else.
func SeverityWeight(severity string) (w int, ok bool) {
	switch severity {
	case "critical":
		return 4, true
	case "high":
		return 3, true
	case "medium":
		return 2, true
	case "low":
		return 1, true
	}
	return 0, false
}

// weight is SeverityWeight for scoring: an unknown severity (which
// CheckLabels and the artifact parser both refuse) counts as low rather than
// vanishing from the sums.
func weight(severity string) int {
	if w, ok := SeverityWeight(severity); ok {
		return w
	}
	return 1
}

// Blocking says whether a label of this severity must stop a merge:
// critical and high do.
func Blocking(severity string) bool { return severity == "critical" || severity == "high" }

// ExpectedVerdict returns the verdicts that count as correct for a task:
//
//   - want, when the task states one explicitly (it overrides the rules);
//   - request_changes, when any label is blocking (critical or high);
//   - comment or request_changes, when every label is medium or low (a
//     review that flags them may or may not block on them, but must not
//     approve);
//   - approve, when the task has no labels.
func ExpectedVerdict(labels []Label, want string) []string {
	switch {
	case want != "":
		return []string{want}
	case len(labels) == 0:
		return []string{VerdictApprove}
	case slices.ContainsFunc(labels, func(l Label) bool { return Blocking(l.Severity) }):
		return []string{VerdictRequestChanges}
	}
	return []string{VerdictComment, VerdictRequestChanges}
}

// overlaps says whether a finding falls on a label: same clean repo-relative
// path and line ranges that share at least one line. Category is not
// compared: it is free text the agent chooses, and a right finding filed
// under a synonym is still right.
func overlaps(f Finding, l Label) bool {
	end := max(f.EndLine, f.Line)
	return cleanPath(f.Path) == cleanPath(l.Path) && f.Line <= l.LineEnd && l.LineStart <= end
}

func cleanPath(p string) string { return path.Clean(strings.TrimPrefix(p, "./")) }

// ScoreReview compares a parsed review with a task's labels. want is the task's
// explicit expected verdict, "" for none (see ExpectedVerdict).
//
// A finding matches a label when overlaps says so, and each finding and each
// label is counted at most once. Among all such one-to-one pairings ScoreReview
// takes one with the most pairs; among those, the most label weight matched;
// among those, the most finding weight matched — so TP, FP, FN and the
// weighted counts are properties of the review and the labels, not of the
// order findings or labels are listed in. Matches is made deterministic too
// by solving over findings and labels in a canonical order.
func ScoreReview(rv Review, labels []Label, want string) Score {
	fs := slices.Clone(rv.Findings)
	slices.SortFunc(fs, compareFindings)
	ls := slices.Clone(labels)
	slices.SortFunc(ls, compareLabels)

	pairs := assign(fs, ls)
	var s Score
	matchedF := make([]bool, len(fs))
	for li, fi := range pairs {
		w := weight(ls[li].Severity)
		if fi < 0 {
			s.FN++
			s.WFN += w
			continue
		}
		matchedF[fi] = true
		s.TP++
		s.WTP += w
		s.Matches = append(s.Matches, Match{LabelID: ls[li].ID, FindingID: fs[fi].ID})
	}
	for fi, f := range fs {
		if !matchedF[fi] {
			s.FP++
			s.WFP += weight(f.Severity)
		}
	}
	if n := s.TP + s.FP; n > 0 {
		s.Precision = ratio(s.TP, n)
	}
	if n := s.TP + s.FN; n > 0 {
		s.Recall = ratio(s.TP, n)
	}
	if n := 2*s.WTP + s.WFP + s.WFN; n > 0 {
		s.WeightedF1 = ratio(2*s.WTP, n)
	}
	if rv.Verdict != "" {
		ok := slices.Contains(ExpectedVerdict(labels, want), rv.Verdict)
		s.VerdictCorrect = &ok
	}
	return s
}

func ratio(a, b int) *float64 {
	r := float64(a) / float64(b)
	return &r
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		strings.Compare(cleanPath(a.Path), cleanPath(b.Path)),
		cmp.Compare(a.Line, b.Line), cmp.Compare(a.EndLine, b.EndLine),
		strings.Compare(a.Severity, b.Severity), strings.Compare(a.ID, b.ID),
		strings.Compare(a.Category, b.Category), strings.Compare(a.Evidence, b.Evidence),
		strings.Compare(a.Recommendation, b.Recommendation),
		boolCompare(a.Blocking, b.Blocking),
	)
}

func compareLabels(a, b Label) int {
	return cmp.Or(
		strings.Compare(a.ID, b.ID),
		strings.Compare(cleanPath(a.Path), cleanPath(b.Path)),
		cmp.Compare(a.LineStart, b.LineStart), cmp.Compare(a.LineEnd, b.LineEnd),
		strings.Compare(a.Severity, b.Severity), strings.Compare(a.Category, b.Category),
	)
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// assign returns, for each label, the index of the finding paired with it
// or -1. It is a maximum-weight bipartite matching found by successive
// shortest augmenting paths (Bellman–Ford over the residual graph: tiny
// sizes, negative costs). The edge weight is lexicographic — a pair, then
// its label's weight, then its finding's weight — encoded in one integer so
// that a heavier matching is always one with more pairs first.
func assign(fs []Finding, ls []Label) []int {
	nf, nl := len(fs), len(ls)
	edge := pairWeights(fs, ls)
	labelOf := make([]int, nf) // finding -> label, -1 when free
	findingOf := make([]int, nl)
	for i := range labelOf {
		labelOf[i] = -1
	}
	for i := range findingOf {
		findingOf[i] = -1
	}
	// Each round finds the augmenting path from a free label to a free
	// finding with the greatest gain and applies it; a matching built this
	// way is the heaviest of its size, and it stops when no path gains.
	for {
		const unreached = int64(-1) << 62
		gain := make([]int64, nf) // best gain of a path ending at finding fi
		from := make([]int, nf)   // label that reaches fi on that path
		for i := range gain {
			gain[i], from[i] = unreached, -1
		}
		for li := range ls {
			if findingOf[li] >= 0 {
				continue
			}
			for fi := range fs {
				if w := edge[li][fi]; w != 0 && w > gain[fi] {
					gain[fi], from[fi] = w, li
				}
			}
		}
		// Relax through matched pairs: reach finding fi, step back along
		// its pair to label labelOf[fi] (losing that pair's weight), then
		// forward to another finding. At most nf rounds settle it.
		for range nf {
			changed := false
			for fi := range fs {
				li := labelOf[fi]
				if gain[fi] == unreached || li < 0 {
					continue
				}
				base := gain[fi] - edge[li][fi]
				for fj := range fs {
					if w := edge[li][fj]; w != 0 && fj != fi && base+w > gain[fj] {
						gain[fj], from[fj] = base+w, li
						changed = true
					}
				}
			}
			if !changed {
				break
			}
		}
		best, end := int64(0), -1
		for fi := range fs {
			if labelOf[fi] < 0 && gain[fi] > best {
				best, end = gain[fi], fi
			}
		}
		if end < 0 {
			return findingOf
		}
		for fi := end; fi >= 0; {
			li := from[fi]
			prev := findingOf[li]
			findingOf[li], labelOf[fi] = fi, li
			fi = prev
		}
	}
}

// pairWeights is assign's edge weights, by label then finding: 0 where the
// two do not overlap, else the pair's lexicographic weight.
func pairWeights(fs []Finding, ls []Label) [][]int64 {
	nf, nl := len(fs), len(ls)
	// unit bounds the total finding weight; big bounds the total of
	// label weight·unit plus finding weight.
	unit := int64(4*nf + 1)
	big := int64(4*nl)*unit + unit
	edge := make([][]int64, nl)
	for li, l := range ls {
		edge[li] = make([]int64, nf)
		for fi, f := range fs {
			if overlaps(f, l) {
				edge[li][fi] = big + int64(weight(l.Severity))*unit + int64(weight(f.Severity))
			}
		}
	}
	return edge
}

// CheckLabels validates a task's labels and returns every problem found,
// each naming the label by index and field: an empty or repeated id, an
// unknown severity, a path that is empty, absolute or climbs out of the
// repository, a line before 1, an end before the start, an empty category.
func CheckLabels(labels []Label) []string {
	var problems []string
	seen := map[string]int{}
	for i, l := range labels {
		at := func(field, format string, args ...any) {
			problems = append(problems, fmt.Sprintf("labels[%d].%s: %s", i, field, fmt.Sprintf(format, args...)))
		}
		switch j, dup := seen[l.ID]; {
		case strings.TrimSpace(l.ID) == "":
			at("id", "empty")
		case dup:
			at("id", "%q repeats labels[%d].id", l.ID, j)
		default:
			seen[l.ID] = i
		}
		if _, ok := SeverityWeight(l.Severity); !ok {
			at("severity", "%q is not one of %s", l.Severity, strings.Join(severities, "|"))
		}
		switch {
		case l.Path == "":
			at("path", "empty, want a repo-relative file path")
		case strings.HasPrefix(l.Path, "/"):
			at("path", "%q is absolute, want a repo-relative path", l.Path)
		case slices.Contains(strings.Split(l.Path, "/"), ".."):
			at("path", "%q climbs out with \"..\"", l.Path)
		case cleanPath(l.Path) == ".":
			at("path", "%q names the repository root, want a file", l.Path)
		}
		if l.LineStart < 1 {
			at("line_start", "%d is less than 1 (lines count from 1)", l.LineStart)
		}
		if l.LineEnd < l.LineStart {
			at("line_end", "%d is before line_start %d", l.LineEnd, l.LineStart)
		}
		if strings.TrimSpace(l.Category) == "" {
			at("category", "empty")
		}
	}
	return problems
}

// LabelsDigest identifies the ground truth a score was computed against: a
// sha256 (hex) over the labels in canonical order and the explicit verdict.
// The order labels are listed in does not change it; any field that can
// change a score does.
func LabelsDigest(labels []Label, want string) string {
	ls := slices.Clone(labels)
	for i := range ls {
		ls[i].Path = cleanPath(ls[i].Path)
	}
	slices.SortFunc(ls, compareLabels)
	if ls == nil {
		ls = []Label{}
	}
	doc, err := json.Marshal(struct {
		Labels  []Label `json:"labels"`
		Verdict string  `json:"verdict"`
	}{ls, want})
	if err != nil {
		// Strings and ints always marshal.
		panic(err)
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:])
}

// ParseReviewBytes validates an artifact held in memory (a stored copy, for
// re-scoring) exactly as ParseReviewOutput validates a file; name stands for
// the path in errors. It never returns ErrArtifactMissing.
func ParseReviewBytes(name string, data []byte) (Review, error) {
	invalid := func(format string, args ...any) error {
		return &InvalidError{Path: name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case len(data) > MaxArtifactBytes:
		return Review{}, invalid("is %d bytes, more than the %d allowed", len(data), MaxArtifactBytes)
	case len(data) == 0:
		return Review{}, invalid("is empty")
	case !utf8.Valid(data):
		return Review{}, invalid("is not valid UTF-8")
	}
	r, reason := parse(data)
	if reason != "" {
		return Review{}, invalid("%s", reason)
	}
	return r, nil
}
