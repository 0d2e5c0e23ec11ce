package main

import (
	"context"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// TestBoxTablesAreFittedToTheScreen stops a width chosen from the wrong
// source: COLUMNS wins (a user's or CI's choice), then the terminal's own
// width, then 100 when nothing says (a file, a pager, a CI log).
func TestBoxTablesAreFittedToTheScreen(t *testing.T) {
	for _, tt := range []struct {
		name     string
		columns  string
		terminal bool
		width    int
		want     int
	}{
		{"COLUMNS over the terminal", "72", true, 200, 72},
		{"the terminal's width", "", true, 150, 150},
		{"a pipe", "", false, 0, 100},
		{"a terminal whose size cannot be read", "", true, 0, 100},
		{"COLUMNS that is not a number", "wide", false, 0, 100},
		{"COLUMNS zero", "0", true, 90, 90},
	} {
		s, _, _ := testStreams("", map[string]string{"COLUMNS": tt.columns})
		s.OutIsTerminal, s.OutWidth = tt.terminal, tt.width
		if got := s.tableWidth(); got != tt.want {
			t.Errorf("%s: width %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestDoctorFitsTheTerminal runs the real `wfb doctor` (its reasons made
// it 283 columns wide) with COLUMNS=80: no line of its table or footnotes
// is wider than 80, and every backend is still there.
func TestDoctorFitsTheTerminal(t *testing.T) {
	s, out, errOut := testStreams("", map[string]string{"COLUMNS": "80"})
	s.OutIsTerminal = true
	if code := run(context.Background(), []string{"doctor"}, s); code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if w := twwidth.Width(line); w > 80 {
			t.Errorf("line %d wide, want ≤ 80: %q", w, line)
		}
	}
	for _, b := range []string{"bwrap", "landlock", "host-unsafe"} {
		if !strings.Contains(out.String(), "│ "+b) {
			t.Errorf("backend %s missing:\n%s", b, out)
		}
	}
}
