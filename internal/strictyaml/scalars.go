package strictyaml

import (
	"fmt"
	"math"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Each helper below reads one kind of value at field. It dereferences n
// first; an alias that cannot be resolved is reported by Deref and
// otherwise ignored (ok false). A value of the wrong kind is reported, with
// what was found, and ok is false.

// Sequence returns a list's items. Null is an empty list.
func (w *Walker) Sequence(n ast.Node, field string) ([]ast.Node, bool) {
	return w.SequenceOf(n, field, "a list")
}

// SequenceOf is Sequence with what the value must be spelled out in the
// message, e.g. "a list of replies".
func (w *Walker) SequenceOf(n ast.Node, field, what string) ([]ast.Node, bool) {
	d := w.Deref(n, field)
	switch s := d.(type) {
	case nil:
		return nil, false
	case *ast.SequenceNode:
		return s.Values, true
	case *ast.NullNode:
		return nil, true
	}
	w.Addf(d, field, "must be %s, got %s", what, Describe(d))
	return nil, false
}

// AsSequence returns a list's items without reporting anything when n is
// not a list: for a value that may be one of several kinds.
func (w *Walker) AsSequence(n ast.Node) ([]ast.Node, bool) {
	if s, ok := w.Deref(n, "").(*ast.SequenceNode); ok {
		return s.Values, true
	}
	return nil, false
}

// ScalarString returns a string's value without reporting anything when n
// is something else: for a value that may be one of several kinds.
func (w *Walker) ScalarString(n ast.Node) (string, bool) {
	switch s := w.Deref(n, "").(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		return s.Value.Value, true
	}
	return "", false
}

// Str reads a string (plain, quoted or a block literal).
func (w *Walker) Str(n ast.Node, field string) (string, bool) {
	d := w.Deref(n, field)
	if d == nil {
		return "", false
	}
	if s, ok := w.ScalarString(d); ok {
		return s, true
	}
	w.Addf(d, field, "must be a string, got %s", Describe(d))
	return "", false
}

// NonEmpty reads a string that must not be empty.
func (w *Walker) NonEmpty(n ast.Node, field string) (string, bool) {
	s, ok := w.Str(n, field)
	if ok && s == "" {
		w.Addf(n, field, "must not be empty")
		return "", false
	}
	return s, ok
}

// Literal reads a scalar as it is written. A commit id of digits only
// ("8960967") is a number to YAML, and one like "1e5" a float, but each is
// a name to git: its text is what counts, never its numeric value. Any
// other value must be a non-empty string.
func (w *Walker) Literal(n ast.Node, field string) (string, bool) {
	switch d := w.Deref(n, field).(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		if tk := d.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return w.NonEmpty(n, field)
}

// Strings reads a list of strings; an item that is not one is reported and
// left out.
func (w *Walker) Strings(n ast.Node, field string) []string {
	items, ok := w.Sequence(n, field)
	if !ok {
		return nil
	}
	var out []string
	for i, item := range items {
		if s, ok := w.Str(item, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// Bool reads true or false.
func (w *Walker) Bool(n ast.Node, field string) (bool, bool) {
	d := w.Deref(n, field)
	if b, ok := d.(*ast.BoolNode); ok {
		return b.Value, true
	}
	if d != nil {
		w.Addf(d, field, "must be true or false, got %s", Describe(d))
	}
	return false, false
}

// Int reads an integer that fits in an int64.
func (w *Walker) Int(n ast.Node, field string) (int64, bool) {
	d := w.Deref(n, field)
	in, ok := d.(*ast.IntegerNode)
	if !ok {
		if d != nil {
			w.Addf(d, field, "must be an integer, got %s", Describe(d))
		}
		return 0, false
	}
	switch v := in.Value.(type) {
	case int64:
		return v, true
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true
		}
	}
	w.Addf(d, field, "integer %s is out of range", in.Token.Value)
	return 0, false
}

// IntRange reads an integer between lo and hi, both included.
func (w *Walker) IntRange(n ast.Node, field string, lo, hi int) (int, bool) {
	d := w.Deref(n, field)
	v, ok := w.Int(d, field)
	if !ok {
		return 0, false
	}
	if v < int64(lo) || v > int64(hi) {
		w.Addf(d, field, "must be between %d and %d, got %d", lo, hi, v)
		return 0, false
	}
	return int(v), true
}

// Duration reads a positive Go duration such as 90s, 10m or 1h30m.
func (w *Walker) Duration(n ast.Node, field string) (time.Duration, bool) {
	s, ok := w.Str(n, field)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		w.Addf(n, field, "must be a positive duration such as 90s, 10m or 1h30m, got %q", s)
		return 0, false
	}
	return d, true
}
