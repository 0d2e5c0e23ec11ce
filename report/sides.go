package report

import (
	"context"
	"fmt"
)

// EmptySideError is a side of a diff whose selection picks no attempts. It
// is an ErrSelection: the user's input, not the file, is what to change.
type EmptySideError struct {
	Side string // "A" or "B"
	Spec string // what the user typed for it
}

func (e *EmptySideError) Error() string {
	return fmt.Sprintf("side %s (%s) selects no attempts", e.Side, e.Spec)
}

// Unwrap makes an EmptySideError match ErrSelection.
func (e *EmptySideError) Unwrap() error { return ErrSelection }

// DiffSides is `wfb diff` of a and b, each a run id, a label or a filter
// (see ResolveSelection): it resolves the two sides in src, streams each
// side's attempts into one Differ and returns its Diff. It is the one loop
// behind wfb diff and wfb view's compare page, so both compare the same
// cells. opts.Metrics, when nil, are cols.Metrics(). A side that selects no
// attempts is an *EmptySideError; runs are the file's runs, as LoadRuns
// gives them.
func DiffSides(ctx context.Context, src Source, cols Columns, runs []RunInfo, a, b string, opts DiffOptions) (*Diff, error) {
	if opts.Metrics == nil {
		opts.Metrics = cols.Metrics()
	}
	d := NewDiffer(opts)
	var tools [2]*ToolUse
	for side, spec := range [2]string{a, b} {
		sel, err := ResolveSelection(ctx, src, cols, runs, spec)
		if err != nil {
			return nil, err
		}
		n := 0
		err = LoadRows(ctx, src, cols, sel, func(row *Row) {
			n++
			d.Add(side, row)
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, &EmptySideError{Side: [2]string{"A", "B"}[side], Spec: spec}
		}
		if tools[side], err = LoadToolUse(ctx, src, cols, sel, false); err != nil {
			return nil, err
		}
	}
	df := d.Result(runs)
	df.Tools = tools
	return df, nil
}
