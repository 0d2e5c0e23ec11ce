package strictyaml

import (
	"fmt"
	"sort"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// maxAliasResolves bounds alias expansion (a "billion laughs" file).
const maxAliasResolves = 10000

// Walker walks one file's syntax tree and collects its problems. The zero
// value with File set is ready to use.
type Walker struct {
	// File names the file in every problem.
	File string
	// SkipTags makes Deref look through a tag (!!str, !custom) to the value
	// it tags, so that every helper ignores tags. Without it a tag is a
	// node of its own, for a caller that gives a tag a meaning of its own
	// (the provider serves !!str 123 as the string "123").
	SkipTags bool
	// Problems are the problems found so far, in the order found. A loader
	// may append its own, such as nested ones.
	Problems []Problem

	anchors  map[string]ast.Node
	resolves int
}

// Pair is one key: value of a mapping, its key already a string.
type Pair struct {
	Key   string
	KeyAt ast.Node // the key's node, where a problem with the key points
	Value ast.Node
}

// Parse parses data and returns the body of its single document, nil for a
// file with none (empty, or comments only). ok is false after a syntax
// error or a file past a limit (MaxBytes, MaxDepth, MaxNodes: checked
// before the parser runs), which is recorded. A second document is recorded as a problem;
// kind names the file in that message ("script", "bench file").
func (w *Walker) Parse(data []byte, kind string) (body ast.Node, ok bool) {
	tokens, ok := w.tokenize(data, kind)
	if !ok {
		return nil, false
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		p := Problem{File: w.File, Message: err.Error()}
		if yerr, isYAML := err.(yaml.Error); isYAML {
			p.Message = "YAML syntax: " + yerr.GetMessage()
			if tk := yerr.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Column = tk.Position.Line, tk.Position.Column
			}
		}
		w.Problems = append(w.Problems, p)
		return nil, false
	}
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			w.Addf(doc.Body, "", "a %s is one YAML document; found another", kind)
			continue
		}
		body = doc.Body
	}
	return body, true
}

// Addf records a problem at node n (nil: no position) and field.
func (w *Walker) Addf(n ast.Node, field, format string, args ...any) {
	p := Problem{File: w.File, Field: field, Message: fmt.Sprintf(format, args...)}
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
	w.Problems = append(w.Problems, p)
}

// Err returns nil when no problem was found, else an *Error holding them in
// file order: the walker's own file first, then by line and column. A
// loader may check fields across each other after walking them, so the
// order found is not the order a reader wants.
func (w *Walker) Err() error {
	if len(w.Problems) == 0 {
		return nil
	}
	sort.SliceStable(w.Problems, func(i, j int) bool {
		a, b := w.Problems[i], w.Problems[j]
		if a.File != b.File {
			return a.File == w.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return &Error{Problems: w.Problems}
}

// Deref unwraps anchors (recording them) and resolves aliases, and with
// SkipTags looks through tags, so that the caller sees the node a value
// stands for. It returns nil, after recording why, for an alias that names
// no anchor defined before it or one expansion too many.
func (w *Walker) Deref(n ast.Node, field string) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			if w.anchors == nil {
				w.anchors = map[string]ast.Node{}
			}
			w.anchors[v.Name.GetToken().Value] = v.Value
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			target, ok := w.anchors[name]
			if !ok {
				w.Addf(v, field, "alias *%s names no anchor defined before it", name)
				return nil
			}
			w.resolves++
			if w.resolves > maxAliasResolves {
				w.Addf(v, field, "too many alias expansions")
				return nil
			}
			n = target
		case *ast.TagNode:
			if !w.SkipTags {
				return n
			}
			n = v.Value
		default:
			return n
		}
	}
}

// Mapping returns the pairs of a mapping, reporting a value of another
// kind, merge keys and duplicate keys. ok is false when n is not a mapping
// (or an alias that could not be resolved, already reported).
func (w *Walker) Mapping(n ast.Node, field string) (pairs []Pair, ok bool) {
	n = w.Deref(n, field)
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
		w.Addf(n, field, "must be a mapping, got %s", Describe(n))
		return nil, false
	}
	seen := map[string]bool{}
	for _, mv := range values {
		if mv.Key.IsMergeKey() {
			w.Addf(mv.Key, field, "merge keys (<<) are not supported; use an alias for the whole value")
			continue
		}
		key := keyString(mv.Key)
		if seen[key] {
			w.Addf(mv.Key, Join(field, key), "duplicate field")
			continue
		}
		seen[key] = true
		pairs = append(pairs, Pair{Key: key, KeyAt: mv.Key, Value: mv.Value})
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

// Join returns the path of key inside field: "key" at the top, else
// "field.key".
func Join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// Describe names a node's kind and, for a scalar, its text, for the "got
// ..." of a message: string "x", 42, true, null, a mapping, a list.
func Describe(n ast.Node) string {
	switch v := n.(type) {
	case nil:
		return "nothing"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return fmt.Sprintf("string %q", v.Value)
	case *ast.LiteralNode:
		return fmt.Sprintf("string %q", v.Value.Value)
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode, *ast.BoolNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value
		}
		return n.String()
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AliasNode:
		return "an alias"
	}
	return n.Type().String()
}
