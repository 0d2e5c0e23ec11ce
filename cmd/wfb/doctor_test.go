package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wfbench/wfb/internal/testkit/gate"
	"github.com/wfbench/wfb/sandbox"
)

// TestDoctorJSONIsAListOfBackendUsableReason stops a doctor whose JSON
// drifts from the documented shape, skips a backend, or exits 0 while
// printing nothing usable.
func TestDoctorJSONIsAListOfBackendUsableReason(t *testing.T) {
	s, out, errOut := testStreams("", nil)
	code := run(context.Background(), []string{"doctor", "--format", "json"}, s)
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON (%v): %s\nstderr: %s", err, out, errOut)
	}
	var names []string
	usable := false
	for _, st := range got {
		var keys []string
		for k := range st {
			keys = append(keys, k)
		}
		if diff := cmp.Diff([]string{"backend", "reason", "usable"}, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
		if _, ok := st["usable"].(bool); !ok {
			t.Errorf("usable = %#v, want a JSON boolean", st["usable"])
		}
		if r, _ := st["reason"].(string); r == "" {
			t.Errorf("%v: empty reason", st["backend"])
		}
		names = append(names, st["backend"].(string))
		usable = usable || st["usable"] == true
	}
	if diff := cmp.Diff(sandbox.Strength, names); diff != "" {
		t.Errorf("backends, strongest first (-want +got):\n%s", diff)
	}
	if want := map[bool]int{true: 0, false: 1}[usable]; code != want {
		t.Errorf("exit %d with a usable backend = %v; want %d", code, usable, want)
	}
}

// TestDoctorExitsOneWhenNoBackendIsUsable stops a doctor that reports
// success on a machine where no session could run: a root wfb told to run
// sessions as root is refused by every backend.
func TestDoctorExitsOneWhenNoBackendIsUsable(t *testing.T) {
	gate.RequireRoot(t, "a session uid of 0 is refused only when wfb is root")
	t.Setenv(sandbox.EnvSessionUID, "0")
	s, out, _ := testStreams("", nil)
	if code := run(context.Background(), []string{"doctor"}, s); code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	for _, b := range sandbox.Strength {
		if !strings.Contains(out.String(), b) {
			t.Errorf("table does not list %s:\n%s", b, out)
		}
	}
	if !strings.Contains(out.String(), "is root's") {
		t.Errorf("table does not say why:\n%s", out)
	}
}

// TestDoctorRefusesAnUnknownFormat stops a silently ignored --format.
func TestDoctorRefusesAnUnknownFormat(t *testing.T) {
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"doctor", "--format", "xml"}, s); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `--format "xml": want table or json`) {
		t.Errorf("stderr = %q", errOut)
	}
}
