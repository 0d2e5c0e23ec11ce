package strictyaml

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Value converts a node to a plain Go value as JSON carries it: a
// map[string]any, []any, string, bool, an integer, a float or nil. Floats
// keep their written form (json.Number) so that 1.0 is sent as 1.0, not 1:
// a consumer that refuses floats must be testable with one.
func (w *Walker) Value(node ast.Node, field string) (any, bool) {
	node = w.Deref(node, field)
	switch n := node.(type) {
	case nil:
		return nil, false
	case *ast.NullNode:
		return nil, true
	case *ast.StringNode:
		return n.Value, true
	case *ast.LiteralNode:
		return n.Value.Value, true
	case *ast.BoolNode:
		return n.Value, true
	case *ast.IntegerNode:
		return n.Value, true
	case *ast.FloatNode:
		lit := strings.TrimPrefix(n.Token.Value, "+")
		if json.Valid([]byte(lit)) {
			return json.Number(lit), true
		}
		if math.IsInf(n.Value, 0) || math.IsNaN(n.Value) {
			w.Addf(node, field, "%s cannot be sent as JSON", n.Token.Value)
			return nil, false
		}
		return n.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		w.Addf(node, field, "%s cannot be sent as JSON", node.GetToken().Value)
		return nil, false
	case *ast.TagNode:
		v, ok := w.Value(n.Value, field)
		if ok && n.Start.Value == "!!str" && v != nil {
			if tk := w.Deref(n.Value, field).GetToken(); tk != nil {
				return tk.Value, true
			}
		}
		return v, ok
	case *ast.SequenceNode:
		list := make([]any, 0, len(n.Values))
		good := true
		for i, item := range n.Values {
			v, ok := w.Value(item, fmt.Sprintf("%s[%d]", field, i))
			good = good && ok
			list = append(list, v)
		}
		return list, good
	case *ast.MappingNode, *ast.MappingValueNode:
		pairs, ok := w.Mapping(n, field)
		if !ok {
			return nil, false
		}
		m := make(map[string]any, len(pairs))
		good := true
		for _, kv := range pairs {
			v, ok := w.Value(kv.Value, Join(field, kv.Key))
			good = good && ok
			m[kv.Key] = v
		}
		return m, good
	}
	w.Addf(node, field, "unsupported YAML value %s", Describe(node))
	return nil, false
}
