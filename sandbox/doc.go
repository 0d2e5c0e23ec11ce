// Package sandbox is described in DESIGN.md.
package sandbox
