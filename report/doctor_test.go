package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDoctorTableSaysWhyABackendIsNotUsable stops a doctor table that drops
// a refused backend or its reason.
func TestDoctorTableSaysWhyABackendIsNotUsable(t *testing.T) {
	got := DoctorTable([]DoctorRow{
		{Backend: "bwrap", Reason: "bwrap not found on PATH (fix: apt-get install bubblewrap)"},
		{Backend: "host-unsafe", Usable: true},
	})
	want := &Table{
		Columns: []string{"backend", "usable", "reason"},
		Rows: [][]any{
			{"bwrap", "no", "bwrap not found on PATH (fix: apt-get install bubblewrap)"},
			{"host-unsafe", "yes", ""},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DoctorTable (-want +got):\n%s", diff)
	}
}
