package main

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, mapped from errors in exitCode and nowhere else.
const (
	exitOK          = 0
	exitFailed      = 1 // measured but failed, aborted, or an internal error
	exitBadInput    = 2 // bad flags, bench file, script, query
	exitInterrupted = 130
)

// badInputError marks an error caused by what the user gave wfb.
type badInputError struct{ err error }

func (e *badInputError) Error() string { return e.err.Error() }
func (e *badInputError) Unwrap() error { return e.err }

// badInput formats a message as a bad-input error: exit 2.
func badInput(format string, args ...any) error {
	return &badInputError{err: fmt.Errorf(format, args...)}
}

// asBadInput marks an existing error as bad input, keeping its chain.
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

// errInterrupted says the user interrupted the command.
var errInterrupted = errors.New("interrupted")

// exitCode maps an error from a command to the process exit code.
func exitCode(err error) int {
	var bad *badInputError
	var code *exitCodeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return code.code
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &bad):
		return exitBadInput
	default:
		return exitFailed
	}
}
