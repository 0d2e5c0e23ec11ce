package store

import "github.com/wfbench/wfb"

// Redacted replaces every secret Redact finds: wfb.Redacted.
const Redacted = wfb.Redacted

// Redact is the redaction every text the store writes goes through:
// wfb.Redact, the one implementation, named here for the store's callers.
func Redact(s string) string { return wfb.Redact(s) }
