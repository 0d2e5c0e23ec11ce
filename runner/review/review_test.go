package review

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeArtifact(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ReviewOutput)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// findingJSON returns a valid finding object with fields replaced (a nil value
// drops the field), as JSON text.
func findingJSON(overrides map[string]any) string {
	fields := []struct {
		name string
		val  any
	}{
		{"id", `"F1"`},
		{"severity", `"high"`},
		{"path", `"src/app.ts"`},
		{"line", `10`},
		{"end_line", `12`},
		{"category", `"correctness"`},
		{"evidence", `"x is never checked"`},
		{"recommendation", `"check x"`},
		{"blocking", `true`},
	}
	var parts []string
	for _, f := range fields {
		v := f.val
		if o, ok := overrides[f.name]; ok {
			v = o
		}
		if v == nil {
			continue
		}
		parts = append(parts, `"`+f.name+`": `+v.(string))
	}
	for k, v := range overrides {
		known := false
		for _, f := range fields {
			known = known || f.name == k
		}
		if !known {
			parts = append(parts, `"`+k+`": `+v.(string))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func doc(verdict string, findings ...string) string {
	return `{"schema_version": 1, "verdict": "` + verdict + `", "findings": [` + strings.Join(findings, ", ") + `]}`
}

// TestParseRefusesInvalidArtifactsNamingFieldAndValue stops a lenient parse
// from scoring a malformed review as a real one, and a refusal that does not
// say which field and value were wrong.
func TestParseRefusesInvalidArtifactsNamingFieldAndValue(t *testing.T) {
	ok := findingJSON(nil)
	tests := []struct {
		name, content, reason string
	}{
		{"empty file", "", "is empty"},
		{"whitespace only", " \n", "contains no JSON value"},
		{"not json", "verdict: approve\n", "not JSON: line 1, column 1"},
		{"syntax error on line 3", "{\n  \"schema_version\": 1,\n  \"verdict\" \"approve\"\n}", "not JSON: line 3"},
		{"truncated", `{"schema_version": 1, "verdict": "approve"`, "truncated"},
		{"trailing object", doc("approve") + "\n" + doc("approve"), "trailing data after the JSON object at line 2, column 1"},
		{"trailing garbage", doc("approve") + " x", "trailing data after the JSON object at line 1, column"},
		{"invalid utf-8", "{\"schema_version\": 1, \"verdict\": \"approve\", \"findings\": [], \"x\": \"\xff\"}", "is not valid UTF-8"},
		{"array document", "[]", "the document is an array, want a JSON object"},
		{"unknown top field", `{"schema_version": 1, "verdict": "approve", "findings": [], "score": 3}`, `score: unknown field`},
		{"duplicate top field", `{"schema_version": 1, "verdict": "request_changes", "verdict": "approve", "findings": []}`, "verdict: duplicate field"},
		{"missing schema_version", `{"verdict": "approve", "findings": []}`, "schema_version: missing"},
		{"missing verdict", `{"schema_version": 1, "findings": []}`, "verdict: missing"},
		{"missing findings", `{"schema_version": 1, "verdict": "approve"}`, "findings: missing"},
		{"schema_version 2", `{"schema_version": 2, "verdict": "approve", "findings": []}`, "schema_version: 2 is not supported (want 1)"},
		{"schema_version string", `{"schema_version": "1", "verdict": "approve", "findings": []}`, `schema_version: "1" is a string, want an integer`},
		{"schema_version float", `{"schema_version": 1.0, "verdict": "approve", "findings": []}`, "schema_version: 1.0 is not an integer"},
		{"unknown verdict", doc("lgtm"), `verdict: "lgtm" is not one of approve|comment|request_changes`},
		{"verdict wrong case", doc("Approve"), `verdict: "Approve" is not one of`},
		{"verdict null", `{"schema_version": 1, "verdict": null, "findings": []}`, "verdict: null is null, want a string"},
		{"findings null", `{"schema_version": 1, "verdict": "approve", "findings": null}`, "findings: null is null, want an array"},
		{"findings object", `{"schema_version": 1, "verdict": "comment", "findings": {}}`, "findings: {} is an object, want an array"},
		{"approve with findings", doc("approve", ok), `verdict "approve" with 1 findings: an approval has none`},
		{"finding not an object", doc("comment", `"F1"`), `findings[0]: "F1" is a string, want an object`},
		{"finding unknown field", doc("comment", findingJSON(map[string]any{"confidence": `0.9`})), "findings[0].confidence: unknown field"},
		{"finding duplicate field", doc("comment", `{"id": "F1", "id": "F2"}`), "findings[0].id: duplicate field"},
		{"finding missing id", doc("comment", findingJSON(map[string]any{"id": nil})), "findings[0].id: missing"},
		{"finding missing blocking", doc("comment", findingJSON(map[string]any{"blocking": nil})), "findings[0].blocking: missing"},
		{"finding missing evidence", doc("comment", findingJSON(map[string]any{"evidence": nil})), "findings[0].evidence: missing"},
		{"empty id", doc("comment", findingJSON(map[string]any{"id": `" "`})), `findings[0].id: " " is empty`},
		{"duplicate ids", doc("comment", ok, findingJSON(map[string]any{"id": `"F2"`}), ok), `findings[2].id: "F1" repeats findings[0].id`},
		{"bad severity", doc("comment", ok, findingJSON(map[string]any{"id": `"F2"`}), findingJSON(map[string]any{"id": `"F3"`, "severity": `"urgent"`})), `findings[2].severity: "urgent" is not one of critical|high|medium|low`},
		{"severity number", doc("comment", findingJSON(map[string]any{"severity": `3`})), "findings[0].severity: 3 is a number, want a string"},
		{"absolute path", doc("comment", findingJSON(map[string]any{"path": `"/etc/passwd"`})), `findings[0].path: "/etc/passwd" is absolute`},
		{"escaping path", doc("comment", findingJSON(map[string]any{"path": `"src/../../x"`})), `findings[0].path: "src/../../x" climbs out`},
		{"empty path", doc("comment", findingJSON(map[string]any{"path": `""`})), "findings[0].path: empty"},
		{"root path", doc("comment", findingJSON(map[string]any{"path": `"./"`})), "names the repository root"},
		{"control char in path", doc("comment", findingJSON(map[string]any{"path": `"a\nb"`})), "contains a control character"},
		{"line zero", doc("comment", findingJSON(map[string]any{"line": `0`})), "findings[0].line: 0 is less than 1"},
		{"line negative", doc("comment", findingJSON(map[string]any{"line": `-3`})), "findings[0].line: -3 is less than 1"},
		{"line float", doc("comment", findingJSON(map[string]any{"line": `10.5`})), "findings[0].line: 10.5 is not an integer"},
		{"line exponent", doc("comment", findingJSON(map[string]any{"line": `1e1`})), "findings[0].line: 1e1 is not an integer"},
		{"line string", doc("comment", findingJSON(map[string]any{"line": `"10"`})), `findings[0].line: "10" is a string, want an integer`},
		{"line huge", doc("comment", findingJSON(map[string]any{"line": `99999999999999999999`})), "findings[0].line: 99999999999999999999 is out of range"},
		{"end_line before line", doc("comment", findingJSON(map[string]any{"end_line": `9`})), "findings[0].end_line: 9 is before line 10"},
		{"end_line null", doc("comment", findingJSON(map[string]any{"end_line": `null`})), "findings[0].end_line: null is null, want an integer"},
		{"empty category", doc("comment", findingJSON(map[string]any{"category": `""`})), `findings[0].category: "" is empty`},
		{"evidence number", doc("comment", findingJSON(map[string]any{"evidence": `1`})), "findings[0].evidence: 1 is a number, want a string"},
		{"blocking string", doc("comment", findingJSON(map[string]any{"blocking": `"yes"`})), `findings[0].blocking: "yes" is a string, want true or false`},
		{"blocking number", doc("comment", findingJSON(map[string]any{"blocking": `1`})), "findings[0].blocking: 1 is a number, want true or false"},
		{"long value bounded", doc("comment", findingJSON(map[string]any{"severity": `"` + strings.Repeat("é", 100) + `"`})), "é… is not one of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeArtifact(t, tc.content)
			got, err := ParseReviewOutput(p)
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("want *InvalidError, got %v (review %+v)", err, got)
			}
			if errors.Is(err, ErrArtifactMissing) {
				t.Error("an invalid artifact also reports missing")
			}
			if invalid.Path != p {
				t.Errorf("Path = %s, want %s", invalid.Path, p)
			}
			if !strings.Contains(invalid.Reason, tc.reason) {
				t.Errorf("reason:\n got %q\nwant it to contain %q", invalid.Reason, tc.reason)
			}
			if diff := cmp.Diff(Review{}, got); diff != "" {
				t.Errorf("an invalid artifact returned data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseAcceptsAValidReview stops a strict parse that refuses what the
// schema allows, drops findings, or invents an end_line other than line.
func TestParseAcceptsAValidReview(t *testing.T) {
	tests := []struct {
		name, content string
		want          Review
	}{
		{"approve", `{"schema_version": 1, "verdict": "approve", "findings": []}`, Review{SchemaVersion: 1, Verdict: VerdictApprove, Findings: []Finding{}}},
		{"request changes with findings", "\n  " + doc("request_changes",
			findingJSON(nil),
			findingJSON(map[string]any{"id": `"F2"`, "severity": `"low"`, "path": `"./docs/README.md"`, "line": `3`, "end_line": nil, "blocking": `false`, "evidence": `""`, "recommendation": `"reword \"this\" ✓"`}),
		) + "\n", Review{SchemaVersion: 1, Verdict: VerdictRequestChanges, Findings: []Finding{
			{ID: "F1", Severity: "high", Path: "src/app.ts", Line: 10, EndLine: 12, Category: "correctness", Evidence: "x is never checked", Recommendation: "check x", Blocking: true},
			{ID: "F2", Severity: "low", Path: "docs/README.md", Line: 3, EndLine: 3, Category: "correctness", Evidence: "", Recommendation: `reword "this" ✓`, Blocking: false},
		}}},
		{"comment with no findings", doc("comment"), Review{SchemaVersion: 1, Verdict: VerdictComment, Findings: []Finding{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseReviewOutput(writeArtifact(t, tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("review (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNeverWrittenIsDistinctFromInvalid stops the empty-artifact run's
// confusion: a session that never wrote its artifact must not look like one
// that wrote a bad one, or the other way round.
func TestNeverWrittenIsDistinctFromInvalid(t *testing.T) {
	dir := t.TempDir()
	file := writeArtifact(t, "x")
	tests := []struct {
		name    string
		path    string
		missing bool
	}{
		{"no file", filepath.Join(dir, ReviewOutput), true},
		{"no parent directory", filepath.Join(dir, "nope", ReviewOutput), true},
		{"parent is a file", filepath.Join(file, ReviewOutput), true},
		{"written but invalid", writeArtifact(t, "{}"), false},
		{"written empty", writeArtifact(t, ""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReviewOutput(tc.path)
			var invalid *InvalidError
			if got := errors.Is(err, ErrArtifactMissing); got != tc.missing {
				t.Errorf("errors.Is(err, ErrArtifactMissing) = %v, want %v (err %v)", got, tc.missing, err)
			}
			if got := errors.As(err, &invalid); got == tc.missing {
				t.Errorf("errors.As(err, *InvalidError) = %v, want %v (err %v)", got, !tc.missing, err)
			}
			if tc.missing && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("missing error %q does not name the path", err)
			}
		})
	}
}

// TestParseRefusesWhatIsNotARegularFile stops the parser from following a
// symlink the session planted (to read a file it chose, or hang on a FIFO).
func TestParseRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	real := writeArtifact(t, doc("approve"))
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(doc("approve")+strings.Repeat(" ", MaxArtifactBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, reason string }{
		{"symlink to a valid artifact", link, "is a symlink (to " + real + ")"},
		{"dangling symlink", dangling, "is a symlink"},
		{"directory", dir, "is not a regular file"},
		{"fifo", fifo, "is not a regular file"},
		{"too large", big, "more than the 1048576 allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReviewOutput(tc.path)
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
			if !strings.Contains(invalid.Reason, tc.reason) {
				t.Errorf("reason %q does not contain %q", invalid.Reason, tc.reason)
			}
		})
	}
}

// TestOpenRefusesASymlinkSwappedInAfterTheCheck stops the check-then-open
// race: readArtifact's open itself must refuse a symlink, whatever Lstat saw.
func TestOpenRefusesASymlinkSwappedInAfterTheCheck(t *testing.T) {
	real := writeArtifact(t, doc("approve"))
	link := filepath.Join(t.TempDir(), ReviewOutput)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	f, err := openNoFollow(link)
	if err == nil {
		f.Close()
		t.Fatal("the open readArtifact uses followed a symlink")
	}
	if !errors.Is(err, syscall.ELOOP) {
		t.Errorf("open err = %v, want ELOOP (which readArtifact reports as a symlink)", err)
	}
}

func BenchmarkParseReviewOutput(b *testing.B) {
	var findings []string
	for i := range 50 {
		findings = append(findings, findingJSON(map[string]any{"id": `"F` + strings.Repeat("x", i) + `"`}))
	}
	p := filepath.Join(b.TempDir(), ReviewOutput)
	if err := os.WriteFile(p, []byte(doc("request_changes", findings...)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseReviewOutput(p); err != nil {
			b.Fatal(err)
		}
	}
}
