package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTheFirstFailureIsTheCauseAndNoLaterProblemIsLost stops a later
// problem from replacing the kind of the first (the cause), or from being
// dropped, and a note from changing an outcome.
func TestTheFirstFailureIsTheCauseAndNoLaterProblemIsLost(t *testing.T) {
	r := Result{OK: true}
	r.AddDetail("cost not recorded")
	if !r.OK || r.ErrorKind != "" || r.ErrorDetail != "cost not recorded" {
		t.Fatalf("a note changed the outcome: ok %v kind %q detail %q", r.OK, r.ErrorKind, r.ErrorDetail)
	}
	r = Result{OK: true}
	r.AddFailure("session-error", "no result event")
	r.AddFailure("infra-error", "descendants outlived it")
	r.AddDetail("its stderr ends: boom")
	want := Result{ErrorKind: "session-error", ErrorDetail: "no result event; also infra-error: descendants outlived it; its stderr ends: boom"}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}
