// Package review is described in DESIGN.md.
package review
