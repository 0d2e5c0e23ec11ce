package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

// Exit codes, mapped from errors in exitCode and nowhere else.
const (
	exitOK       = 0
	exitFailed   = 1 // measured but failed, aborted, or an internal error
	exitBadInput = 2 // bad flags, bench file, script, query, results file
	// exitInconclusive: a gate (wfb diff --fail-on) could neither pass nor
	// fail with the samples it had; --accept-inconclusive makes it 0.
	exitInconclusive = 3
	exitInterrupted  = 130
)

// badInputError marks an error caused by what the user gave wfb.
type badInputError struct{ err error }

func (e *badInputError) Error() string { return e.err.Error() }
func (e *badInputError) Unwrap() error { return e.err }

// badInput formats a message as a bad-input error: exit 2. It is for what
// cmd itself validates (flags and arguments); errors from the packages are
// classified by exitRules.
func badInput(format string, args ...any) error {
	return &badInputError{err: fmt.Errorf(format, args...)}
}

// asBadInput marks an existing error as bad input, keeping its chain. It is
// for errors no package types (a flag value a parser refused).
func asBadInput(err error) error {
	if err == nil {
		return nil
	}
	return &badInputError{err: err}
}

// errNotOK says the work was done and recorded, but the outcome was not ok.
// Its message has already been printed (the row says why), so Main prints
// nothing more.
var errNotOK = errors.New("recorded, not ok")

// errInconclusive says a gate could not decide; its verdict has been
// printed.
var errInconclusive = errors.New("the gate is inconclusive")

// errInterrupted says the user interrupted the command.
var errInterrupted = errors.New("interrupted")

// exitRule maps the errors match accepts to an exit code.
type exitRule struct {
	match func(error) bool
	code  int
}

// is matches an error whose chain holds target (errors.Is).
func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// as matches an error whose chain holds a T (errors.As).
func as[T error]() func(error) bool {
	return func(err error) bool {
		var t T
		return errors.As(err, &t)
	}
}

// exitRules is the one table from what went wrong to the exit status, the
// first match deciding, as gh maps error kinds in one place. The packages
// say what went wrong with typed and sentinel errors; only here does that
// become a number. Bad input (2) is what the user gave wfb and can fix: a
// flag, a bench file, a mock script, a results file (missing, not wfb's,
// damaged, another schema, read-only, a merge that would corrupt it), a
// query, a selection that names nothing, a sandbox the machine cannot
// provide. An error matching no rule is a failure (1).
var exitRules = []exitRule{
	{is(errInterrupted), exitInterrupted},
	{is(errInconclusive), exitInconclusive},
	{is(context.Canceled), exitInterrupted},
	{as[*badInputError](), exitBadInput},

	{is(store.ErrNoSuchFile), exitBadInput},
	{is(store.ErrNotResultsFile), exitBadInput},
	{is(store.ErrCorrupt), exitBadInput},
	{is(store.ErrSchemaTooNew), exitBadInput},
	{is(store.ErrSchemaTooOld), exitBadInput},
	{is(store.ErrMigrationRefused), exitBadInput},
	{is(store.ErrTampered), exitBadInput},
	{is(store.ErrReadOnly), exitBadInput},
	{is(store.ErrBadQuery), exitBadInput},
	{is(store.ErrMergeConflict), exitBadInput},
	{is(store.ErrMergeSelf), exitBadInput},
	{is(store.ErrInUse), exitBadInput},
	{is(store.ErrInvalidRow), exitBadInput},

	{is(report.ErrSelection), exitBadInput},
	{as[*runner.InputError](), exitBadInput},
	{as[*bench.Error](), exitBadInput},
	{as[*bench.SelectionError](), exitBadInput},
	{as[*sandbox.RefusedError](), exitBadInput},
	{as[*provider.ScriptError](), exitBadInput},
	{is(provider.ErrNotLoopback), exitBadInput},
}

// exitCode maps an error from a command to the process exit code: an
// *exitCodeError (the stand-in agent's own status) carries its code, and
// every other error goes through exitRules.
func exitCode(err error) int {
	var code *exitCodeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return code.code
	}
	for _, r := range exitRules {
		if r.match(err) {
			return r.code
		}
	}
	return exitFailed
}
