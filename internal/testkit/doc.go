// Package testkit holds nothing itself: its subdirectories are helpers for
// tests only (see package internal for the rule).
package testkit
