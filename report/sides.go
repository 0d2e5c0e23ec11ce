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
	// The sides load at once (each its own rows, on its own connection)
	// and fail as one loop over them would: A's error before B's.
	var errs [2]error
	eachInParallel(2, func(side int) {
		spec := [2]string{a, b}[side]
		sel, err := ResolveSelection(ctx, src, cols, runs, spec)
		if err != nil {
			errs[side] = err
			return
		}
		n := 0
		err = LoadRows(ctx, src, cols, sel, func(row *Row) {
			n++
			d.Add(side, row)
		})
		if err != nil {
			errs[side] = err
			return
		}
		if n == 0 {
			errs[side] = &EmptySideError{Side: [2]string{"A", "B"}[side], Spec: spec}
			return
		}
		tools[side], errs[side] = LoadToolUse(ctx, src, cols, sel, false)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	df := d.Result(runs)
	df.Tools = tools
	return df, nil
}
