package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/wfbench/wfb/internal/testkit/golden"
)

// fitWidths are the screens every command's box output is pinned at.
var fitWidths = []int{80, 100, 120}

// checkFits fails t when a line of out is wider than width, or when one
// of ids is split across lines: a line holding an id's first part but not
// the whole id (a wrapped id can be copied from no line).
func checkFits(t *testing.T, out string, width int, ids ...string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if w := twwidth.Width(line); w > width {
			t.Errorf("line %d is %d wide, want ≤ %d: %q", i+1, w, width, line)
		}
		for _, id := range ids {
			if strings.Contains(line, id[:len(id)/2]) && !strings.Contains(line, id) {
				t.Errorf("line %d holds part of id %s, not all of it: %q", i+1, id, line)
			}
		}
	}
}

// TestOutputFitsTheScreen stops the output a new user saw on a terminal:
// wfb runs 149 columns wide on a 100-column screen, wfb diff 160 on 120,
// and at 120 the run id — the value people copy most — wrapped over three
// lines. At 80, 100 and 120 columns every line of runs, report and diff
// fits, no id is split, and the output is pinned by a golden.
func TestOutputFitsTheScreen(t *testing.T) {
	id1, id2 := "run-20261129T020000Z-5f0c1a2b", "run-20261130T020000Z-9e4d7c3f"
	db := reportFixtureIDs(t, id1, id2)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"runs", []string{"runs"}},
		{"report", []string{"report", id1, "--by", "task,arm"}},
		{"diff", []string{"diff", "base", "cand"}},
	} {
		for _, width := range fitWidths {
			t.Run(fmt.Sprintf("%s_%d", tt.name, width), func(t *testing.T) {
				s, out, errOut := testStreams("", map[string]string{"COLUMNS": fmt.Sprint(width)})
				s.OutIsTerminal = true
				if code := run(context.Background(), append(tt.args, "--db", db), s); code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				checkFits(t, out.String(), width, id1, id2)
				if tt.name == "runs" && (!strings.Contains(out.String(), "│ "+id1+" │") || !strings.Contains(out.String(), "│ "+id2+" │")) {
					t.Errorf("a run id is not whole in its cell:\n%s", out)
				}
				golden.Check(t, filepath.Join("testdata", fmt.Sprintf("fit_%s_%d.golden", tt.name, width)), out.Bytes())
			})
		}
	}
}

// demoRunID matches the run id a demo makes: its time and random suffix
// differ run to run, so goldens hold a stand-in as long.
var demoRunID = regexp.MustCompile(`run-\d{8}T\d{6}Z-[0-9a-f]{8}`)

// TestDemoFitsOneScreen stops a demo that printed ~170 lines on a 100×40
// terminal, its outcome table scrolled away and its story only in
// --help: by default it prints what its bench is built to show, the
// outcome per task × arm and the next commands — at most 40 lines, each
// no wider than the screen, the run id whole — pinned by a golden.
func TestDemoFitsOneScreen(t *testing.T) {
	t.Parallel()
	for _, width := range fitWidths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "wfb.db")
			s, out, errOut := testStreams("", map[string]string{"COLUMNS": fmt.Sprint(width), "WFB_DB": db})
			s.OutIsTerminal = true
			if code := run(context.Background(), []string{"demo"}, s); code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			id := demoRunID.FindString(out.String())
			if id == "" {
				t.Fatalf("no run id in the demo's screen:\n%s", out)
			}
			checkFits(t, out.String(), width, id)
			// The screen is stdout; stderr adds the run's id, sandbox and
			// summary (three lines or four, wrapped).
			if n := strings.Count(out.String(), "\n"); n > 40-4 {
				t.Errorf("the demo's screen is %d lines, want ≤ 36:\n%s", n, out)
			}
			for _, gone := range []string{"medians per cell", "tool use per arm"} {
				if strings.Contains(out.String(), gone) {
					t.Errorf("the demo printed the full report (%q) without --format:\n%s", gone, out)
				}
			}
			screen := demoRunID.ReplaceAllString(out.String(), "run-YYYYMMDDTHHMMSSZ-xxxxxxxx")
			golden.Check(t, filepath.Join("testdata", fmt.Sprintf("fit_demo_%d.golden", width)), []byte(screen))
		})
	}
}
