package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/examples"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/store"
)

// TestTheDemoBenchUnpacksWhole stops a demo whose bench does not load (a
// workspace, skill or script missing from what it unpacks) and one whose
// workspaces are not the examples' own files.
func TestTheDemoBenchUnpacksWhole(t *testing.T) {
	dir := t.TempDir()
	path, err := Unpack(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bench.Load(path, func(p string, data []byte) error { _, err := provider.ParseScript(p, data); return err })
	if err != nil {
		t.Fatalf("the unpacked demo bench: %v", err)
	}
	var cells []string
	for _, task := range b.Tasks {
		for _, arm := range b.Arms {
			cells = append(cells, task.ID+"/"+arm.ID)
		}
	}
	for k := range Expect {
		if !slices.Contains(cells, k[0]+"/"+k[1]) {
			t.Errorf("Expect names %s × %s, which the bench does not have", k[0], k[1])
		}
	}
	if len(cells) != len(Expect) {
		t.Errorf("the bench has %d task × arm pairs, Expect %d", len(cells), len(Expect))
	}
	for _, e := range fromExamples {
		got, err := os.ReadFile(filepath.Join(dir, e.at, exampleFile(t, e.example)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := examples.FS.ReadFile(e.example + "/" + exampleFile(t, e.example))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is not the example's %s (%v)", e.at, e.example, err)
		}
	}
}

// exampleFile is the one file of an example directory.
func exampleFile(t *testing.T, dir string) string {
	t.Helper()
	entries, err := examples.FS.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: %d entries, %v; want one file", dir, len(entries), err)
	}
	return entries[0].Name()
}

// demoRows is a run of the demo that behaved: every cell ends as Expect
// says, and the summarize cells that end ok were retried after a 529.
func demoRows(reps int) []store.Result {
	var rows []store.Result
	for k, kind := range Expect {
		for rep := range reps {
			id := fmt.Sprintf("%s-%s-%d", k[0], k[1], rep)
			r := store.Result{AttemptID: id, Task: k[0], Arm: k[1], Rep: rep, Attempt: 1, OK: kind == "", ErrorKind: kind}
			if k[0] == "summarize" && kind == "" {
				rows = append(rows, store.Result{AttemptID: id + "-529", Task: k[0], Arm: k[1], Rep: rep, Attempt: 1, ErrorKind: wfb.KindProviderError})
				r.Attempt, r.RetryOf = 2, id+"-529"
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestSurprisesNameEveryCellThatMisbehaved stops the demo's self-check from
// passing a run that did not do what the demo shows: a cell ending other
// than expected (by its final attempt), a 529 not retried as a linked
// attempt, a cell missing.
func TestSurprisesNameEveryCellThatMisbehaved(t *testing.T) {
	if bad := Surprises(demoRows(3), 3); len(bad) != 0 {
		t.Fatalf("a run that behaved: %q", bad)
	}
	tests := []struct {
		name   string
		change func([]store.Result) []store.Result
		want   string
	}{
		{"a cell ends otherwise", func(rows []store.Result) []store.Result {
			i := slices.IndexFunc(rows, func(r store.Result) bool { return r.Task == "fix-sum" && r.Arm == "gateway" && r.Rep == 1 })
			rows[i].ErrorKind = ""
			return rows
		}, `fix-sum × gateway #1 ended "" (), want "session-error"`},
		{"a later attempt decides", func(rows []store.Result) []store.Result {
			return append(rows, store.Result{AttemptID: "x", Task: "review-auth", Arm: "baseline", Rep: 0, Attempt: 2, ErrorKind: wfb.KindTimeout, ErrorDetail: "slow"})
		}, `review-auth × baseline #0 ended "timeout" (slow), want ""`},
		{"a 529 not linked", func(rows []store.Result) []store.Result {
			i := slices.IndexFunc(rows, func(r store.Result) bool {
				return r.Task == "summarize" && r.Arm == "thorough" && r.Rep == 0 && r.Attempt == 2
			})
			rows[i].RetryOf = ""
			return rows
		}, "summarize × thorough #0: the 529 was not retried as attempt 2 linked to a provider-error"},
		{"a cell missing", func(rows []store.Result) []store.Result {
			return slices.DeleteFunc(rows, func(r store.Result) bool { return r.Task == "fix-sum" && r.Arm == "baseline" && r.Rep == 2 })
		}, "35 cells recorded, want 36"},
		{"a cell the demo has not", func(rows []store.Result) []store.Result {
			return append(rows, store.Result{AttemptID: "y", Task: "fix-sum", Arm: "other", Attempt: 1, OK: true})
		}, "a cell fix-sum × other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := Surprises(tc.change(demoRows(3)), 3)
			if !slices.Contains(bad, tc.want) {
				t.Errorf("Surprises = %q; want it to say %q", bad, tc.want)
			}
		})
	}
}
