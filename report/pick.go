package report

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// InputError is a request of a report that cannot be met as asked
// (arguments that do not go together, a bucket the trend lacks, a
// selection with no attempts): the user's input, not the file, is what to
// change. It matches ErrSelection; its message is the reason alone.
type InputError struct{ Reason string }

func (e *InputError) Error() string { return e.Reason }

// Unwrap makes an InputError match ErrSelection.
func (e *InputError) Unwrap() error { return ErrSelection }

func inputError(format string, args ...any) error {
	return &InputError{Reason: fmt.Sprintf(format, args...)}
}

// Pick is the selection `wfb report` makes of its arguments: with none,
// the latest bench run (LatestRun; LatestNote says which and why);
// otherwise the union of the runs each argument names (a run id or a
// label), or one filter, which must then be the only argument.
func Pick(ctx context.Context, src Source, cols Columns, runs []RunInfo, args []string) (Selection, error) {
	if len(args) == 0 {
		return LatestRun(runs)
	}
	var union Selection
	for _, a := range args {
		sel, err := ResolveSelection(ctx, src, cols, runs, a)
		if err != nil {
			return Selection{}, err
		}
		if sel.IsFilter() {
			if len(args) > 1 {
				return Selection{}, inputError("a filter (%s) must be the only argument; put every condition in it, comma-separated", a)
			}
			return sel, nil
		}
		for _, id := range sel.RunIDs {
			if !slices.Contains(union.RunIDs, id) {
				union.RunIDs = append(union.RunIDs, id)
			}
		}
	}
	union.Spec = strings.Join(args, " ")
	return union, nil
}

// LatestNote says which run a bare `wfb report` picked (run id, as Pick
// chose it) and why, and how to name another: the newest bench run,
// passing over the ad-hoc sessions started since, or the newest session
// where the file holds nothing else.
func LatestNote(ctx context.Context, src Source, runs []RunInfo, id string) (string, error) {
	picked := RunsOf(runs, []string{id})
	if err := FillRunStats(ctx, src, picked, false); err != nil {
		return "", err
	}
	run := picked[0]
	what := "run " + run.ID
	if run.Label != "" {
		what += " (label " + run.Label + ", "
	} else {
		what += " ("
	}
	what += plural(run.Cells, "cell") + ")"
	why := "the newest"
	switch newer := sessionsAfter(runs, run.ID); {
	case run.Kind != "run":
		why = "the newest; the file holds only ad-hoc sessions (wfb session), no bench run"
	case newer > 0:
		why = "the newest bench run; passed over the " + plural(newer, "ad-hoc session") + " (wfb session) started since"
	}
	return "report of " + what + ", " + why + "; name another: wfb report RUN|LABEL", nil
}

// sessionsAfter counts the runs started after run id (runs are in start
// order): the sessions LatestRun passed over.
func sessionsAfter(runs []RunInfo, id string) int {
	for i, r := range runs {
		if r.ID == id {
			return len(runs) - 1 - i
		}
	}
	return 0
}

// plural is "1 cell" or "3 cells".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Describe names a selection for a title: a run with its label, status
// and cost cap, several runs, or a filter.
func Describe(sel Selection, runs []RunInfo) string {
	if sel.IsFilter() {
		return "filter " + sel.Spec
	}
	rs := RunsOf(runs, sel.RunIDs)
	if len(rs) == 1 {
		r := rs[0]
		d := "run " + r.ID
		if r.Label != "" {
			d += " (" + r.Label + ")"
		}
		d += ", " + r.Status
		if r.Budget > 0 {
			d += ", budget $" + strconv.FormatFloat(r.Budget, 'f', -1, 64)
		}
		return d
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return fmt.Sprintf("%d runs (%s)", len(rs), strings.Join(ids, ", "))
}
