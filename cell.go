package wfb

// A cell is one (run, task, arm, rep): what a bench asks for and what a user
// pays for. A cell counts once, by its final attempt — the highest attempt
// number, where its retry chain ended — and its outcome is one of three:
//
//	ok       its final attempt is ok
//	failed   its final attempt failed the workflow (a failure kind, or a
//	         kind wfb does not know)
//	errored  its final attempt ended with an error that kept the workflow
//	         from being measured (IsErrored)
//
// Superseded attempts are never dropped: summaries count them as attempts,
// under that name, beside the cells. A cell's usage (tokens, cost, turns,
// wall time) is the sum over all its attempts, retries included — what the
// cell cost.

// Outcome is a cell's (or an attempt's) outcome.
type Outcome int

const (
	OutcomeOK Outcome = iota
	OutcomeFailed
	OutcomeErrored
)

// String is the outcome's name in tables and the SQL views.
func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeErrored:
		return "errored"
	default:
		return "failed"
	}
}

// OutcomeOf is the outcome of an attempt that ended ok or with kind.
func OutcomeOf(ok bool, kind string) Outcome {
	switch {
	case ok:
		return OutcomeOK
	case IsErrored(kind):
		return OutcomeErrored
	default:
		return OutcomeFailed
	}
}

// Supersedes reports whether an attempt numbered attempt becomes its cell's
// final attempt over one numbered final, the final one so far: the highest
// number ends the retry chain, and of two with the same number the later
// one read wins.
func Supersedes(attempt, final int) bool { return attempt >= final }

// Cell accumulates one cell's attempts in the order they are read.
type Cell struct {
	// Attempts counts the cell's attempts, retries included.
	Attempts int
	// Final is the final attempt's number, and Outcome its outcome.
	Final   int
	Outcome Outcome
	// Kind is the final attempt's error kind; empty when ok.
	Kind string
}

// Add counts one attempt of the cell.
func (c *Cell) Add(attempt int, ok bool, kind string) {
	c.Attempts++
	if c.Attempts == 1 || Supersedes(attempt, c.Final) {
		c.Final, c.Outcome, c.Kind = attempt, OutcomeOf(ok, kind), kind
		if ok {
			c.Kind = ""
		}
	}
}

// Tally counts cells by outcome, and their attempts.
type Tally struct {
	Cells, OK, Failed, Errored, Attempts int
}

// AddCell counts one cell.
func (t *Tally) AddCell(c Cell) {
	t.Cells++
	t.Attempts += c.Attempts
	switch c.Outcome {
	case OutcomeOK:
		t.OK++
	case OutcomeErrored:
		t.Errored++
	default:
		t.Failed++
	}
}
