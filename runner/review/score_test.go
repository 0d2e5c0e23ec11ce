package review

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fptr(v float64) *float64 { return &v }
func bptr(v bool) *bool       { return &v }

func fnd(id, sev, path string, line, end int) Finding {
	return Finding{ID: id, Severity: sev, Path: path, Line: line, EndLine: end, Category: "bug"}
}

func label(id, sev, path string, start, end int) Label {
	return Label{ID: id, Severity: sev, Path: path, LineStart: start, LineEnd: end, Category: "bug"}
}

// TestScoreReviewHandComputed pins the scoring rules to expectations worked
// out by hand: overlap, one-to-one counting, NULL for undefined ratios,
// severity weights, and the verdict rule. It stops a scorer that invents 0
// (or 1) for an undefined precision or recall, counts a finding twice, or
// pairs greedily.
func TestScoreReviewHandComputed(t *testing.T) {
	tests := []struct {
		name     string
		verdict  string
		findings []Finding
		labels   []Label
		want     string // explicit expected verdict
		score    Score
	}{
		{
			name:    "nothing to find and nothing found: ratios undefined, approve right",
			verdict: VerdictApprove,
			score:   Score{VerdictCorrect: bptr(true)},
		},
		{
			name:     "a finding on a clean task: precision 0, recall undefined",
			verdict:  VerdictComment,
			findings: []Finding{fnd("f1", "medium", "a.go", 3, 3)},
			score:    Score{FP: 1, WFP: 2, Precision: fptr(0), WeightedF1: fptr(0), VerdictCorrect: bptr(false)},
		},
		{
			name:    "a missed high label: precision undefined, recall 0, approve wrong",
			verdict: VerdictApprove,
			labels:  []Label{label("L1", "high", "a.go", 10, 12)},
			score:   Score{FN: 1, WFN: 3, Recall: fptr(0), WeightedF1: fptr(0), VerdictCorrect: bptr(false)},
		},
		{
			name:     "ranges sharing one line match; the label's weight counts",
			verdict:  VerdictRequestChanges,
			findings: []Finding{fnd("f1", "low", "a.go", 12, 14)},
			labels:   []Label{label("L1", "high", "a.go", 10, 12)},
			score: Score{TP: 1, WTP: 3, Precision: fptr(1), Recall: fptr(1), WeightedF1: fptr(1),
				VerdictCorrect: bptr(true), Matches: []Match{{"L1", "f1"}}},
		},
		{
			name:     "adjacent lines do not match",
			verdict:  VerdictRequestChanges,
			findings: []Finding{fnd("f1", "low", "a.go", 13, 14)},
			labels:   []Label{label("L1", "high", "a.go", 10, 12)},
			score: Score{FP: 1, FN: 1, WFP: 1, WFN: 3, Precision: fptr(0), Recall: fptr(0), WeightedF1: fptr(0),
				VerdictCorrect: bptr(true)},
		},
		{
			name:     "another file does not match; ./ is the same file",
			verdict:  VerdictRequestChanges,
			findings: []Finding{fnd("f1", "high", "b.go", 10, 10), fnd("f2", "high", "./a.go", 11, 11)},
			labels:   []Label{label("L1", "high", "a.go", 10, 12)},
			score: Score{TP: 1, FP: 1, WTP: 3, WFP: 3, Precision: fptr(0.5), Recall: fptr(1), WeightedF1: fptr(6.0 / 9),
				VerdictCorrect: bptr(true), Matches: []Match{{"L1", "f2"}}},
		},
		{
			// Greedy in listed order pairs f1 with L1 and strands f2.
			name:    "maximum matching, not greedy",
			verdict: VerdictRequestChanges,
			findings: []Finding{
				fnd("f1", "medium", "a.go", 5, 5),
				fnd("f2", "medium", "a.go", 1, 2),
			},
			labels: []Label{label("L1", "low", "a.go", 1, 10), label("L2", "high", "a.go", 5, 5)},
			score: Score{TP: 2, WTP: 4, Precision: fptr(1), Recall: fptr(1), WeightedF1: fptr(1),
				VerdictCorrect: bptr(true), Matches: []Match{{"L1", "f2"}, {"L2", "f1"}}},
		},
		{
			name:     "one finding on two labels counts against the heavier",
			verdict:  VerdictRequestChanges,
			findings: []Finding{fnd("f1", "medium", "a.go", 5, 5)},
			labels:   []Label{label("L1", "low", "a.go", 1, 10), label("L2", "critical", "a.go", 4, 6)},
			score: Score{TP: 1, FN: 1, WTP: 4, WFN: 1, Precision: fptr(1), Recall: fptr(0.5), WeightedF1: fptr(8.0 / 9),
				VerdictCorrect: bptr(true), Matches: []Match{{"L2", "f1"}}},
		},
		{
			name:    "two findings on one label: one TP, the lighter is the FP",
			verdict: VerdictComment,
			findings: []Finding{
				fnd("f2", "low", "a.go", 10, 10),
				fnd("f1", "high", "a.go", 10, 10),
			},
			labels: []Label{label("L1", "high", "a.go", 10, 10)},
			score: Score{TP: 1, FP: 1, WTP: 3, WFP: 1, Precision: fptr(0.5), Recall: fptr(1), WeightedF1: fptr(6.0 / 7),
				VerdictCorrect: bptr(false), Matches: []Match{{"L1", "f1"}}},
		},
		{
			name:     "medium and low labels only: comment is right",
			verdict:  VerdictComment,
			findings: []Finding{fnd("f1", "low", "a.go", 1, 1)},
			labels:   []Label{label("L1", "medium", "a.go", 1, 1), label("L2", "low", "b.go", 1, 1)},
			score: Score{TP: 1, FN: 1, WTP: 2, WFN: 1, Precision: fptr(1), Recall: fptr(0.5), WeightedF1: fptr(4.0 / 5),
				VerdictCorrect: bptr(true), Matches: []Match{{"L1", "f1"}}},
		},
		{
			name:    "medium and low labels only: approve is wrong",
			verdict: VerdictApprove,
			labels:  []Label{label("L1", "medium", "a.go", 1, 1)},
			score:   Score{FN: 1, WFN: 2, Recall: fptr(0), WeightedF1: fptr(0), VerdictCorrect: bptr(false)},
		},
		{
			name:     "an explicit verdict overrides the rule",
			verdict:  VerdictRequestChanges,
			findings: []Finding{fnd("f1", "high", "a.go", 1, 1)},
			labels:   []Label{label("L1", "high", "a.go", 1, 1)},
			want:     VerdictComment,
			score: Score{TP: 1, WTP: 3, Precision: fptr(1), Recall: fptr(1), WeightedF1: fptr(1),
				VerdictCorrect: bptr(false), Matches: []Match{{"L1", "f1"}}},
		},
		{
			name:   "no verdict read: verdict correctness not measured",
			labels: []Label{label("L1", "high", "a.go", 1, 1)},
			score:  Score{FN: 1, WFN: 3, Recall: fptr(0), WeightedF1: fptr(0)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv := Review{SchemaVersion: 1, Verdict: tc.verdict, Findings: tc.findings}
			got := ScoreReview(rv, tc.labels, tc.want)
			if diff := cmp.Diff(tc.score, got); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		})
	}
}

// permutations calls fn with every ordering of xs.
func permutations[T any](xs []T, fn func([]T)) {
	var rec func(k int)
	rec = func(k int) {
		if k == len(xs) {
			fn(slices.Clone(xs))
			return
		}
		for i := k; i < len(xs); i++ {
			xs[k], xs[i] = xs[i], xs[k]
			rec(k + 1)
			xs[k], xs[i] = xs[i], xs[k]
		}
	}
	rec(0)
}

// TestScoreIgnoresTheOrderOfFindingsAndLabels stops a scorer whose counts
// (or reported pairs) depend on the order an agent happened to list its
// findings in: every permutation of findings and labels must score the same.
func TestScoreIgnoresTheOrderOfFindingsAndLabels(t *testing.T) {
	findings := []Finding{
		fnd("f1", "medium", "a.go", 5, 5),
		fnd("f2", "low", "a.go", 1, 3),
		fnd("f3", "high", "a.go", 4, 8),
		fnd("f4", "high", "b.go", 10, 10),
		fnd("f5", "critical", "a.go", 5, 6),
	}
	labels := []Label{
		label("L1", "low", "a.go", 1, 10),
		label("L2", "high", "a.go", 5, 5),
		label("L3", "critical", "a.go", 6, 9),
		label("L4", "medium", "b.go", 20, 30),
	}
	want := ScoreReview(Review{Verdict: VerdictRequestChanges, Findings: findings}, labels, "")
	if want.TP != 3 {
		t.Fatalf("reference score has TP %d, want 3 (the set must exercise the matching)", want.TP)
	}
	n := 0
	permutations(findings, func(fs []Finding) {
		permutations(labels, func(ls []Label) {
			n++
			got := ScoreReview(Review{Verdict: VerdictRequestChanges, Findings: fs}, ls, "")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("findings %v, labels %v (-want +got):\n%s", ids(fs), labelIDs(ls), diff)
			}
		})
	})
	if n != 120*24 {
		t.Fatalf("tried %d orderings, want %d", n, 120*24)
	}
}

func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func labelIDs(ls []Label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// bruteForce returns the best (pairs, label weight, finding weight) over
// every one-to-one pairing, by enumeration.
func bruteForce(fs []Finding, ls []Label) [3]int {
	var best [3]int
	used := make([]bool, len(fs))
	var rec func(li int, cur [3]int)
	rec = func(li int, cur [3]int) {
		if li == len(ls) {
			if slices.Compare(cur[:], best[:]) > 0 {
				best = cur
			}
			return
		}
		rec(li+1, cur)
		for fi, f := range fs {
			if !used[fi] && overlaps(f, ls[li]) {
				used[fi] = true
				rec(li+1, [3]int{cur[0] + 1, cur[1] + weight(ls[li].Severity), cur[2] + weight(f.Severity)})
				used[fi] = false
			}
		}
	}
	rec(0, [3]int{})
	return best
}

// TestMatchingIsOptimalAgainstBruteForce stops a matching that is merely
// good: on random small instances the scorer must reach the same pair
// count, label weight and finding weight as trying every pairing.
func TestMatchingIsOptimalAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	sevs := []string{"critical", "high", "medium", "low"}
	for trial := range 2000 {
		var fs []Finding
		var ls []Label
		for i := range rng.IntN(7) {
			line := 1 + rng.IntN(12)
			fs = append(fs, fnd("f"+string(rune('a'+i)), sevs[rng.IntN(4)], []string{"a.go", "b.go"}[rng.IntN(2)], line, line+rng.IntN(3)))
		}
		for i := range rng.IntN(6) {
			line := 1 + rng.IntN(12)
			ls = append(ls, label("L"+string(rune('a'+i)), sevs[rng.IntN(4)], []string{"a.go", "b.go"}[rng.IntN(2)], line, line+rng.IntN(4)))
		}
		s := ScoreReview(Review{Findings: fs}, ls, "")
		totalF := 0
		for _, f := range fs {
			totalF += weight(f.Severity)
		}
		want := bruteForce(fs, ls)
		got := [3]int{s.TP, s.WTP, totalF - s.WFP}
		if got != want {
			t.Fatalf("trial %d: findings %+v labels %+v: (pairs, label weight, finding weight) = %v, brute force %v", trial, fs, ls, got, want)
		}
		if s.TP+s.FP != len(fs) || s.TP+s.FN != len(ls) || len(s.Matches) != s.TP {
			t.Fatalf("trial %d: counts do not add up: %+v for %d findings, %d labels", trial, s, len(fs), len(ls))
		}
	}
}

// TestCheckLabelsNamesEveryProblem stops a bench with a malformed label from
// being scored silently wrong (a label that can never match).
func TestCheckLabelsNamesEveryProblem(t *testing.T) {
	labels := []Label{
		label("L1", "high", "a.go", 1, 2),
		{ID: "L1", Severity: "urgent", Path: "/etc/passwd", LineStart: 0, LineEnd: -1, Category: " "},
		{ID: "", Severity: "low", Path: "../x.go", LineStart: 3, LineEnd: 3, Category: "c"},
		{ID: "L4", Severity: "low", Path: "./", LineStart: 3, LineEnd: 3, Category: "c"},
	}
	want := []string{
		`labels[1].id: "L1" repeats labels[0].id`,
		`labels[1].severity: "urgent" is not one of critical|high|medium|low`,
		`labels[1].path: "/etc/passwd" is absolute, want a repo-relative path`,
		`labels[1].line_start: 0 is less than 1 (lines count from 1)`,
		`labels[1].line_end: -1 is before line_start 0`,
		`labels[1].category: empty`,
		`labels[2].id: empty`,
		`labels[2].path: "../x.go" climbs out with ".."`,
		`labels[3].path: "./" names the repository root, want a file`,
	}
	if diff := cmp.Diff(want, CheckLabels(labels)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if got := CheckLabels(labels[:1]); got != nil {
		t.Errorf("a valid label: %v", got)
	}
}

// TestLabelsDigestFollowsContentNotOrder stops a rescore from looking like a
// change of ground truth when labels were merely reordered, and a real change
// from keeping the old digest.
func TestLabelsDigestFollowsContentNotOrder(t *testing.T) {
	base := []Label{label("L1", "high", "a.go", 1, 2), label("L2", "low", "b.go", 3, 4)}
	d := LabelsDigest(base, "")
	if got := LabelsDigest([]Label{base[1], base[0]}, ""); got != d {
		t.Error("reordering the labels changed the digest")
	}
	dotted := slices.Clone(base)
	dotted[0].Path = "./a.go"
	if got := LabelsDigest(dotted, ""); got != d {
		t.Error("./a.go and a.go digest differently, but score the same")
	}
	changes := map[string]func(l *Label){
		"id":         func(l *Label) { l.ID = "L9" },
		"severity":   func(l *Label) { l.Severity = "critical" },
		"path":       func(l *Label) { l.Path = "c.go" },
		"line_start": func(l *Label) { l.LineStart = 0 },
		"line_end":   func(l *Label) { l.LineEnd = 9 },
		"category":   func(l *Label) { l.Category = "style" },
	}
	for field, change := range changes {
		ls := slices.Clone(base)
		change(&ls[0])
		if LabelsDigest(ls, "") == d {
			t.Errorf("changing %s kept the digest", field)
		}
	}
	if LabelsDigest(base, VerdictComment) == d {
		t.Error("an explicit verdict kept the digest")
	}
	if LabelsDigest(nil, "") != LabelsDigest([]Label{}, "") {
		t.Error("nil and empty labels digest differently")
	}
}

// TestParseReviewBytesAgreesWithTheFileParser stops a rescore from judging a
// stored artifact by different rules than the session that wrote it.
func TestParseReviewBytesAgreesWithTheFileParser(t *testing.T) {
	cases := map[string]string{
		"valid":           `{"schema_version":1,"verdict":"comment","findings":[{"id":"f1","severity":"low","path":"./a.go","line":3,"category":"c","evidence":"e","recommendation":"r","blocking":false}]}`,
		"empty":           ``,
		"not utf-8":       "{\"verdict\":\"\xff\"}",
		"trailing":        `{"schema_version":1,"verdict":"approve","findings":[]} x`,
		"approve+finding": `{"schema_version":1,"verdict":"approve","findings":[{"id":"f1","severity":"low","path":"a.go","line":3,"category":"c","evidence":"e","recommendation":"r","blocking":false}]}`,
		"too large":       `{"schema_version":1,"verdict":"approve","findings":[]}` + string(make([]byte, MaxArtifactBytes)),
	}
	dir := t.TempDir()
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			wantRV, wantErr := ParseReviewOutput(path)
			gotRV, gotErr := ParseReviewBytes(path, []byte(content))
			if diff := cmp.Diff(wantRV, gotRV); diff != "" {
				t.Errorf("review (-file +bytes):\n%s", diff)
			}
			var we, ge *InvalidError
			if errors.As(wantErr, &we) != errors.As(gotErr, &ge) || (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("file parser: %v; bytes parser: %v", wantErr, gotErr)
			}
			if we != nil && we.Reason != ge.Reason {
				t.Errorf("reason: file %q, bytes %q", we.Reason, ge.Reason)
			}
		})
	}
}
