// Package runner runs agent sessions and sweeps and records each outcome as a
// row of the results store.
//
// A session is one agent CLI process: the runner builds its command from an
// adapter, takes the command prefix and credentials from the sandbox, gives
// it an environment built from scratch, runs it in its own process group with
// a timeout, parses what it printed strictly, and writes a row whatever
// happened — success, failure or refusal — with what was measured, what was
// not (NULL) and why.
package runner
