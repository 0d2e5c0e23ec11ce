// Package mock holds wfb's stand-ins for the outside world: a scripted model
// provider (an HTTP server speaking the Anthropic Messages API) and a
// stand-in agent CLI with Claude Code's interface.
//
// They are product features, not test doubles of wfb's own packages: a dry
// run of a bench uses them, and the offline tests drive the real session path
// through them so that the only thing not real is what the model says.
//
// This package imports nothing else of wfb.
package mock
