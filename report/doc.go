// Package report is described in DESIGN.md.
package report
