// Package runner is described in DESIGN.md.
package runner
