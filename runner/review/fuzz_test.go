package review

import (
	"errors"
	"slices"
	"testing"
)

// FuzzParseReviewBytes feeds the artifact parser what an agent could
// write. It must never panic, refuse only with an *InvalidError, and
// accept only a review that holds what the schema promises.
func FuzzParseReviewBytes(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"verdict":"approve","findings":[]}`))
	f.Add([]byte(`{"schema_version":1,"verdict":"request_changes","findings":[{"id":"f1","severity":"high","path":"./a.go","line":3,"end_line":5,"category":"bug","evidence":"e","recommendation":"r","blocking":true}]}`))
	f.Add([]byte(`{"schema_version":1,"verdict":"comment","findings":[{"id":"f1"}],"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReviewBytes("review-output.json", data)
		if err != nil {
			var invalid *InvalidError
			if !errors.As(err, &invalid) || invalid.Reason == "" {
				t.Fatalf("refused without an *InvalidError and a reason: %v", err)
			}
			return
		}
		switch {
		case r.SchemaVersion != SchemaVersion:
			t.Fatalf("accepted schema_version %d", r.SchemaVersion)
		case !slices.Contains(verdicts, r.Verdict):
			t.Fatalf("accepted verdict %q", r.Verdict)
		case r.Findings == nil:
			t.Fatal("accepted with nil findings")
		case r.Verdict == VerdictApprove && len(r.Findings) > 0:
			t.Fatal("accepted an approval with findings")
		}
		ids := map[string]bool{}
		for _, fd := range r.Findings {
			if fd.ID == "" || ids[fd.ID] || !slices.Contains(severities, fd.Severity) || fd.Line < 1 || fd.EndLine < fd.Line || fd.Path == "" {
				t.Fatalf("accepted finding %+v", fd)
			}
			ids[fd.ID] = true
		}
	})
}
