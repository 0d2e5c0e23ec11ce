// Package internal holds nothing itself; its subdirectories are of two
// kinds, and the rule for each is checked by TestInternalHoldsOnlyLeaves.
//
// A leaf (internal/strictyaml, termtext, treedigest, proctree, ...) does one
// small job for the packages above it: it imports nothing of ours but the
// vocabulary (the root package wfb) and other leaves, never a package with
// a domain of its own (store, sandbox, meter, mock, runner, report, view).
//
// A test kit (internal/testkit/...) is a helper for tests only: golden
// files, the skip gate, a test binary doubling as the stand-in agent, a
// sandbox probe for tests, generated results files. Only _test.go files,
// other test kits and the benchmark data generator
// (report/internal/genresults) import one. A test kit may import the
// package it helps test (sandbox, store, mock/agent), as those tests do.
package internal
