// Package treedigest fingerprints a directory tree (Of): paths, types,
// modes and contents, never owners or times. It is the one tree digest of
// wfb: sandbox takes it of a workspace before and after a review session,
// and runner/bench of an arm's kit.
package treedigest
