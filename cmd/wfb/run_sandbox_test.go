package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/sandbox"
)

// TestRunNamesItsSandboxAndWhatWasPassedOver stops a run under auto from
// settling on a weaker backend without saying so: the line names the
// backend and, for each stronger one skipped, why.
func TestRunNamesItsSandboxAndWhatWasPassedOver(t *testing.T) {
	tests := []struct {
		name    string
		backend string
		passed  []sandbox.Status
		want    string
	}{
		{"named backend", "bwrap", nil, "sandbox: bwrap"},
		{"auto passing over two", "host-unsafe", []sandbox.Status{
			{Backend: "bwrap", Reason: "no user namespaces"},
			{Backend: "landlock", Reason: "kernel ABI 0"},
		}, "sandbox: host-unsafe (passed over: bwrap — no user namespaces; landlock — kernel ABI 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sandboxLine(tt.backend, tt.passed)); diff != "" {
				t.Errorf("sandbox line (-want +got):\n%s", diff)
			}
		})
	}
}
