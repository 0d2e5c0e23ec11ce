package report

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffSidesComparesWhatEachSideSelects stops wfb diff and the viewer's
// compare page from comparing different cells: both go through DiffSides,
// whose sides named by label, by run id or by filter pick the same
// attempts, so the same diff comes back.
func TestDiffSidesComparesWhatEachSideSelects(t *testing.T) {
	db, cols, runs := openFixture(t)
	ctx := context.Background()
	opts := DiffOptions{Alpha: 0.05}
	tables := func(a, b string) string {
		t.Helper()
		d, err := DiffSides(ctx, db, cols, runs, a, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Lines) == 0 {
			t.Fatalf("%s vs %s: no lines", a, b)
		}
		var buf bytes.Buffer
		if err := RenderAll(&buf, d.Tables("A", "B", FormatTSV), FormatTSV); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	want := tables("r1", "r2")
	for _, sides := range [][2]string{{"base", "cand"}, {"run=r1", "label=cand"}} {
		if diff := cmp.Diff(want, tables(sides[0], sides[1])); diff != "" {
			t.Errorf("%s vs %s differs from r1 vs r2 (-want +got):\n%s", sides[0], sides[1], diff)
		}
	}
}

// TestADiffSideThatSelectsNothingIsABadSelection stops an empty side from
// reading as a diff of nothing: it is an EmptySideError naming the side,
// and an ErrSelection, which wfb exits 2 on and the viewer answers 400.
func TestADiffSideThatSelectsNothingIsABadSelection(t *testing.T) {
	db, cols, runs := openFixture(t)
	_, err := DiffSides(context.Background(), db, cols, runs, "r1", "arm=nobody", DiffOptions{Alpha: 0.05})
	var empty *EmptySideError
	if !errors.As(err, &empty) || !errors.Is(err, ErrSelection) {
		t.Fatalf("err = %v; want an EmptySideError that is an ErrSelection", err)
	}
	if got, want := err.Error(), "side B (arm=nobody) selects no attempts"; got != want {
		t.Errorf("err = %q; want %q", got, want)
	}
}
