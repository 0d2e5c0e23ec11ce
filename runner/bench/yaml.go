package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// node is a YAML syntax-tree node.
type node = ast.Node

// yamlWalker walks the YAML syntax tree itself, rather than decoding into
// structs, so that it can report every problem with its line and field
// instead of stopping at the first.
type yamlWalker struct {
	file     string
	anchors  map[string]ast.Node
	resolves int
	problems []BenchProblem
}

// yamlMaxAliasResolves bounds alias expansion (a "billion laughs" file).
const yamlMaxAliasResolves = 10000

func newYAMLWalker(file string) *yamlWalker {
	return &yamlWalker{file: file, anchors: map[string]ast.Node{}}
}

// parse returns the single document's body; ok is false after a syntax
// error (recorded) or for an empty file (recorded as well: a bench needs
// tasks and arms).
func (w *yamlWalker) parse(data []byte) (node, bool) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		p := BenchProblem{File: w.file, Message: err.Error()}
		if yerr, ok := err.(yaml.Error); ok {
			p.Message = "YAML syntax: " + yerr.GetMessage()
			if tk := yerr.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Column = tk.Position.Line, tk.Position.Column
			}
		}
		w.problems = append(w.problems, p)
		return nil, false
	}
	var body node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			w.addf(doc.Body, "", "a bench file is one YAML document; found another")
			continue
		}
		body = doc.Body
	}
	if body == nil {
		w.problems = append(w.problems, BenchProblem{File: w.file, Message: "the bench file is empty (it needs provider, tasks and arms)"})
		return nil, false
	}
	return body, true
}

func (w *yamlWalker) addf(n node, field, format string, args ...any) {
	p := BenchProblem{File: w.file, Field: field, Message: fmt.Sprintf(format, args...)}
	// A mapping's own token is a delimiter; its first key is where a reader
	// looks.
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			n = m.Values[0].Key
		}
	case *ast.MappingValueNode:
		n = m.Key
	}
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
		}
	}
	w.problems = append(w.problems, p)
}

// deref unwraps anchors (recording them) and resolves aliases.
func (w *yamlWalker) deref(n node, field string) node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			w.anchors[v.Name.GetToken().Value] = v.Value
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			target, ok := w.anchors[name]
			if !ok {
				w.addf(v, field, "alias *%s names no anchor defined before it", name)
				return nil
			}
			w.resolves++
			if w.resolves > yamlMaxAliasResolves {
				w.addf(v, field, "too many alias expansions")
				return nil
			}
			n = target
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// yamlPair is one key: value of a mapping.
type yamlPair struct {
	key   string
	keyAt node
	value node
}

func (w *yamlWalker) mapping(n node, field string) ([]yamlPair, bool) {
	n = w.deref(n, field)
	if n == nil {
		return nil, false
	}
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		w.addf(n, field, "must be a mapping, got %s", describe(n))
		return nil, false
	}
	seen := map[string]bool{}
	var pairs []yamlPair
	for _, mv := range values {
		if mv.Key.IsMergeKey() {
			w.addf(mv.Key, field, "merge keys (<<) are not supported; use an alias for the whole value")
			continue
		}
		key := keyString(mv.Key)
		f := key
		if field != "" {
			f = field + "." + key
		}
		if seen[key] {
			w.addf(mv.Key, f, "duplicate field")
			continue
		}
		seen[key] = true
		pairs = append(pairs, yamlPair{key: key, keyAt: mv.Key, value: mv.Value})
	}
	return pairs, true
}

func keyString(k ast.MapKeyNode) string {
	switch n := k.(type) {
	case *ast.StringNode:
		return n.Value
	case *ast.MappingKeyNode:
		if s, ok := n.Value.(*ast.StringNode); ok {
			return s.Value
		}
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

func (w *yamlWalker) asSequence(n node) ([]node, bool) {
	if s, ok := w.deref(n, "").(*ast.SequenceNode); ok {
		return s.Values, true
	}
	return nil, false
}

func (w *yamlWalker) sequence(n node, field string) ([]node, bool) {
	d := w.deref(n, field)
	switch s := d.(type) {
	case nil:
		return nil, false
	case *ast.SequenceNode:
		return s.Values, true
	case *ast.NullNode:
		return nil, true
	}
	w.addf(d, field, "must be a list, got %s", describe(d))
	return nil, false
}

// scalarString returns a string scalar's value without recording a
// problem when n is something else.
func (w *yamlWalker) scalarString(n node) (string, bool) {
	switch s := w.deref(n, "").(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		return s.Value.Value, true
	}
	return "", false
}

func (w *yamlWalker) str(n node, field string) (string, bool) {
	d := w.deref(n, field)
	if d == nil {
		return "", false
	}
	if s, ok := w.scalarString(d); ok {
		return s, true
	}
	w.addf(d, field, "must be a string, got %s", describe(d))
	return "", false
}

// literal reads a scalar as it is written. A commit id of digits only
// ("8960967") is a number to YAML, and one like "1e5" a float, but each is
// a name to git: its text is what counts, never its numeric value.
func (w *yamlWalker) literal(n node, field string) (string, bool) {
	switch d := w.deref(n, field).(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		if tk := d.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return w.nonEmpty(n, field)
}

func (w *yamlWalker) nonEmpty(n node, field string) (string, bool) {
	s, ok := w.str(n, field)
	if ok && s == "" {
		w.addf(n, field, "must not be empty")
		return "", false
	}
	return s, ok
}

func (w *yamlWalker) strList(n node, field string) []string {
	items, ok := w.sequence(n, field)
	if !ok {
		return nil
	}
	var out []string
	for i, item := range items {
		if s, ok := w.str(item, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

func (w *yamlWalker) boolean(n node, field string) (bool, bool) {
	d := w.deref(n, field)
	if b, ok := d.(*ast.BoolNode); ok {
		return b.Value, true
	}
	if d != nil {
		w.addf(d, field, "must be true or false, got %s", describe(d))
	}
	return false, false
}

func (w *yamlWalker) intRange(n node, field string, lo, hi int) (int, bool) {
	d := w.deref(n, field)
	in, ok := d.(*ast.IntegerNode)
	if !ok {
		if d != nil {
			w.addf(d, field, "must be an integer, got %s", describe(d))
		}
		return 0, false
	}
	var v int64
	switch x := in.Value.(type) {
	case int64:
		v = x
	case uint64:
		if x > math.MaxInt64 {
			w.addf(d, field, "integer %s is out of range", in.Token.Value)
			return 0, false
		}
		v = int64(x)
	}
	if v < int64(lo) || v > int64(hi) {
		w.addf(d, field, "must be between %d and %d, got %d", lo, hi, v)
		return 0, false
	}
	return int(v), true
}

// duration reads a Go duration such as 90s, 10m or 1h30m.
func (w *yamlWalker) duration(n node, field string) (time.Duration, bool) {
	s, ok := w.str(n, field)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		w.addf(n, field, "must be a positive duration such as 90s, 10m or 1h30m, got %q", s)
		return 0, false
	}
	return d, true
}

// describe names a node's kind and, for scalars, its text.
func describe(n node) string {
	switch v := n.(type) {
	case nil:
		return "nothing"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return fmt.Sprintf("string %q", v.Value)
	case *ast.LiteralNode:
		return fmt.Sprintf("string %q", v.Value.Value)
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.Type().String()
}
