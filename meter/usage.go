package meter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
)

// CountState says what the wire carried for one usage figure.
type CountState int

const (
	// Absent: the figure was not on the wire (missing, or null). It is
	// stored as NULL, never as 0.
	Absent CountState = iota
	// Present: a non-negative integer, in Count.Value.
	Present
	// Nonsense: something that is not a count (negative, a bool, a string,
	// a float, out of range); the wire's text is in Count.Raw, never
	// coerced.
	Nonsense
	// NotReported: the protocol has no such figure (OpenAI reports no
	// cache writes; Anthropic no separate reasoning tokens).
	NotReported
)

func (s CountState) String() string {
	switch s {
	case Absent:
		return "absent"
	case Present:
		return "present"
	case Nonsense:
		return "nonsense"
	case NotReported:
		return "not-reported"
	}
	return fmt.Sprintf("CountState(%d)", int(s))
}

// Count is one usage figure of one request, in wfb's semantics.
type Count struct {
	State CountState
	Value int64 // meaningful only when State is Present
	// Native names the provider's field(s) it was read from, e.g.
	// "usage.cache_read_input_tokens".
	Native string
	// Raw is the wire's text of a Nonsense value (e.g. "-5", "true").
	Raw string
	// Why explains an Absent or Nonsense figure, naming the native field.
	Why string
}

// Ptr returns the value, or nil when it was not measured.
func (c Count) Ptr() *int64 {
	if c.State != Present {
		return nil
	}
	v := c.Value
	return &v
}

// Usage is one request's usage as the provider reported it, mapped to
// wfb's one meaning (the results table's): Input is UNCACHED input, and
// CacheRead and CacheCreation ADD to it, so their sum is the whole prompt
// (Anthropic's native meaning). OpenAI and Gemini report cached tokens as
// a SUBSET of input; their Input is native input minus cached. Reasoning
// is PART of Output, never added to it.
type Usage struct {
	Semantics     string // wfb.SemanticsAnthropic, wfb.SemanticsOpenAI, wfb.SemanticsGemini; "" when the request is no model request
	Input         Count
	Output        Count
	CacheRead     Count
	CacheCreation Count
	Reasoning     Count
}

// Fields returns the figures with their wfb column names, in a fixed
// order: input_tokens, output_tokens, cache_read_input_tokens,
// cache_creation_input_tokens, reasoning_output_tokens.
func (u *Usage) Fields() []NamedCount {
	return []NamedCount{
		{FieldInput, &u.Input},
		{FieldOutput, &u.Output},
		{FieldCacheRead, &u.CacheRead},
		{FieldCacheCreation, &u.CacheCreation},
		{FieldReasoning, &u.Reasoning},
	}
}

// NamedCount is a usage figure with its wfb column name.
type NamedCount struct {
	Name  string
	Count *Count
}

// wfb's usage column names.
const (
	FieldInput         = "input_tokens"
	FieldOutput        = "output_tokens"
	FieldCacheRead     = "cache_read_input_tokens"
	FieldCacheCreation = "cache_creation_input_tokens"
	FieldReasoning     = "reasoning_output_tokens"
)

// Problems lists why each Absent or Nonsense figure is not measured; empty
// when every figure the protocol reports was a count.
func (u *Usage) Problems() []string {
	var out []string
	for _, f := range u.Fields() {
		if (f.Count.State == Absent || f.Count.State == Nonsense) && f.Count.Why != "" {
			out = append(out, f.Count.Why)
		}
	}
	return out
}

// RawValues maps the native field name of every Nonsense figure to the
// wire's text, or nil when there is none.
func (u *Usage) RawValues() map[string]string {
	var out map[string]string
	for _, f := range u.Fields() {
		if f.Count.State == Nonsense {
			if out == nil {
				out = map[string]string{}
			}
			out[f.Count.Native] = f.Count.Raw
		}
	}
	return out
}

// readCount reads the native field name of obj as a count: a non-negative
// integer written as one. Missing and null are Absent; anything else that
// is not such an integer is Nonsense, kept as the wire wrote it.
func readCount(obj map[string]json.RawMessage, prefix, name string) Count {
	native := prefix + name
	c := Count{Native: native}
	raw, ok := obj[name]
	if !ok {
		c.Why = native + " is missing"
		return c
	}
	n, err := wfb.ParseCount(raw)
	switch {
	case err == nil:
		c.State, c.Value = Present, n
	case errors.Is(err, wfb.ErrNullCount):
		c.Why = native + " " + err.Error()
	default:
		c.State, c.Raw = Nonsense, wfb.Clip(strings.TrimSpace(string(raw)), 200)
		c.Why = native + " " + err.Error()
	}
	return c
}

// notReported is a figure the protocol does not carry.
func notReported(protocol string) Count {
	return Count{State: NotReported, Why: "the " + protocol + " protocol does not report it"}
}

// readObject reads obj[name] as a JSON object. ok is false, with c saying
// why, when it is missing, null or not an object.
func readObject(obj map[string]json.RawMessage, prefix, name string) (inner map[string]json.RawMessage, c Count, ok bool) {
	native := prefix + name
	raw, found := obj[name]
	s := strings.TrimSpace(string(raw))
	switch {
	case !found:
		return nil, Count{Native: native, Why: native + " is missing"}, false
	case s == "null":
		return nil, Count{Native: native, Why: native + " is null"}, false
	}
	if err := json.Unmarshal(raw, &inner); err != nil || inner == nil {
		return nil, Count{State: Nonsense, Native: native, Raw: wfb.Clip(s, 200), Why: fmt.Sprintf("%s is not an object (%s)", native, wfb.Clip(s, 40))}, false
	}
	return inner, Count{}, true
}

// subtract maps a native total and its subset (OpenAI's input_tokens and
// cached_tokens) to the uncached part. Either being unmeasured, or the
// subset exceeding the total, leaves the result unmeasured with the reason.
func subtract(total, subset Count, field string) Count {
	c := Count{Native: total.Native + " - " + subset.Native}
	switch {
	case total.State != Present:
		c.State, c.Raw, c.Why = total.State, total.Raw, total.Why
	case subset.State != Present:
		c.Why = fmt.Sprintf("%s is unknown: %s", field, subset.Why)
		if subset.State == Nonsense {
			c.State, c.Raw = Nonsense, subset.Raw
		}
	case subset.Value > total.Value:
		c.State, c.Raw = Nonsense, fmt.Sprintf("%d - %d", total.Value, subset.Value)
		c.Why = fmt.Sprintf("%s %d exceeds %s %d (it is part of it)", subset.Native, subset.Value, total.Native, total.Value)
	default:
		c.State, c.Value = Present, total.Value-subset.Value
	}
	return c
}
