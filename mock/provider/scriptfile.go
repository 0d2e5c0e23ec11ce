package provider

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ScriptProblem is one thing wrong with a script file, located by line (and
// column when known) and by the field's path, e.g. replies[1].status.
type ScriptProblem struct {
	File    string
	Line    int // 1-based; 0 when unknown
	Column  int // 1-based; 0 when unknown
	Field   string
	Message string
}

// String formats the problem as FILE:LINE[:COL]: FIELD: MESSAGE.
func (p ScriptProblem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// ScriptError lists every problem found in a script, so that one edit can
// fix them all rather than one per run.
type ScriptError struct {
	Problems []ScriptProblem
}

// Error prints one problem per line.
func (e *ScriptError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// LoadScript reads and validates the script file at path. Its errors name
// the file as the path was given.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return ParseScript(path, data)
}

// ParseScript parses and validates a script (YAML, or JSON, which is YAML).
// name is used in error messages only. A script that is empty is valid: it
// serves the built-in default for every request. Every problem found is
// reported in one *ScriptError.
func ParseScript(name string, data []byte) (*Script, error) {
	if name == "" {
		name = "script"
	}
	sp := &scriptParser{file: name, anchors: map[string]ast.Node{}}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		sp.syntax(err)
		return nil, &ScriptError{Problems: sp.problems}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			sp.addf(doc.Body, "", "a script is one YAML document; found another")
			continue
		}
		body = doc.Body
	}
	script := &Script{}
	if body != nil {
		sp.script(body, script)
	}
	if len(sp.problems) > 0 {
		// Cross-field checks run after a reply's fields; file order reads
		// better than discovery order.
		sort.SliceStable(sp.problems, func(i, j int) bool {
			a, b := sp.problems[i], sp.problems[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		return nil, &ScriptError{Problems: sp.problems}
	}
	return script, nil
}

// scriptParser walks the YAML syntax tree itself, rather than decoding into
// structs, so that it can report every problem with its position instead of
// stopping at the first.
type scriptParser struct {
	file     string
	anchors  map[string]ast.Node
	resolves int
	problems []ScriptProblem
}

// scriptMaxAliasResolves bounds alias expansion (a "billion laughs" script).
const scriptMaxAliasResolves = 10000

func (sp *scriptParser) addf(node ast.Node, field, format string, args ...any) {
	p := ScriptProblem{File: sp.file, Field: field, Message: fmt.Sprintf(format, args...)}
	// A mapping's own token is a delimiter; its first key is where a
	// reader looks.
	switch n := node.(type) {
	case *ast.MappingNode:
		if len(n.Values) > 0 {
			node = n.Values[0].Key
		}
	case *ast.MappingValueNode:
		node = n.Key
	}
	if node != nil {
		if tk := node.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
		}
	}
	sp.problems = append(sp.problems, p)
}

func (sp *scriptParser) syntax(err error) {
	p := ScriptProblem{File: sp.file, Message: err.Error()}
	if yerr, ok := err.(yaml.Error); ok {
		p.Message = "YAML syntax: " + yerr.GetMessage()
		if tk := yerr.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
		}
	}
	sp.problems = append(sp.problems, p)
}

// deref unwraps anchors (recording them) and resolves aliases, so that the
// walker sees the node a value stands for.
func (sp *scriptParser) deref(node ast.Node, field string) ast.Node {
	for {
		switch n := node.(type) {
		case *ast.AnchorNode:
			sp.anchors[n.Name.GetToken().Value] = n.Value
			node = n.Value
		case *ast.AliasNode:
			name := n.Value.GetToken().Value
			target, ok := sp.anchors[name]
			if !ok {
				sp.addf(n, field, "alias *%s names no anchor defined before it", name)
				return nil
			}
			sp.resolves++
			if sp.resolves > scriptMaxAliasResolves {
				sp.addf(n, field, "too many alias expansions")
				return nil
			}
			node = target
		default:
			return node
		}
	}
}

// scriptPair is one key: value of a mapping, its key already a string.
type scriptPair struct {
	key   string
	keyAt ast.Node
	value ast.Node
}

// mapping returns the pairs of a mapping node, reporting a node of another
// kind, merge keys and duplicate keys. ok is false when node is not a mapping.
func (sp *scriptParser) mapping(node ast.Node, field string) (pairs []scriptPair, ok bool) {
	var values []*ast.MappingValueNode
	switch n := node.(type) {
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		sp.addf(node, field, "must be a mapping, got %s", scriptDescribe(node))
		return nil, false
	}
	seen := map[string]bool{}
	for _, mv := range values {
		if mv.Key.IsMergeKey() {
			sp.addf(mv.Key, field, "merge keys (<<) are not supported; use an alias for the whole value")
			continue
		}
		key := scriptKeyString(mv.Key)
		if seen[key] {
			sp.addf(mv.Key, scriptJoin(field, key), "duplicate field")
			continue
		}
		seen[key] = true
		pairs = append(pairs, scriptPair{key: key, keyAt: mv.Key, value: mv.Value})
	}
	return pairs, true
}

func scriptKeyString(k ast.MapKeyNode) string {
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

func scriptJoin(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func (sp *scriptParser) script(node ast.Node, s *Script) {
	node = sp.deref(node, "")
	if node == nil {
		return
	}
	if _, isNull := node.(*ast.NullNode); isNull {
		return
	}
	pairs, ok := sp.mapping(node, "")
	if !ok {
		return
	}
	for _, kv := range pairs {
		switch kv.key {
		case "replies":
			v := sp.deref(kv.value, "replies")
			switch seq := v.(type) {
			case nil, *ast.NullNode:
			case *ast.SequenceNode:
				for i, item := range seq.Values {
					field := fmt.Sprintf("replies[%d]", i)
					r, ok := sp.reply(item, field)
					if ok {
						s.Replies = append(s.Replies, r)
					}
				}
			default:
				sp.addf(v, "replies", "must be a list of replies, got %s", scriptDescribe(v))
			}
		case "default":
			if r, ok := sp.reply(kv.value, "default"); ok {
				s.Default = &r
			}
		default:
			sp.addf(kv.keyAt, kv.key, "unknown field (a script has: replies, default)")
		}
	}
}

// scriptReplyFields are the fields a reply may have, in documentation order.
var scriptReplyFields = "text, tools, stop_reason, usage, reasoning_tokens, status, error, delay_ms, hang, cut_after_events"

func (sp *scriptParser) reply(node ast.Node, field string) (Reply, bool) {
	var r Reply
	node = sp.deref(node, field)
	if node == nil {
		return r, false
	}
	pairs, ok := sp.mapping(node, field)
	if !ok {
		return r, false
	}
	before := len(sp.problems)
	at := map[string]ast.Node{}
	for _, kv := range pairs {
		f := field + "." + kv.key
		v := sp.deref(kv.value, f)
		if v == nil {
			continue
		}
		at[kv.key] = v
		switch kv.key {
		case "text":
			r.Text, _ = sp.str(v, f)
		case "stop_reason":
			r.StopReason, _ = sp.str(v, f)
		case "tools":
			r.Tools = sp.tools(v, f)
		case "usage":
			r.Usage = sp.usage(v, f)
		case "reasoning_tokens":
			// Like a usage value: served verbatim, null is absent.
			if val, ok := sp.value(v, f); ok {
				r.ReasoningTokens = val
			}
		case "status":
			if n, ok := sp.integer(v, f); ok {
				if n < 100 || n > 599 {
					sp.addf(v, f, "must be an HTTP status 100-599, got %d", n)
				} else {
					r.Status = int(n)
				}
			}
		case "error":
			if _, ok := sp.deref(v, f).(*ast.NullNode); ok {
				sp.addf(v, f, "must be an error object, e.g. {type: overloaded_error, message: Overloaded}, got null")
				continue
			}
			val, ok := sp.value(v, f)
			if !ok {
				continue
			}
			if _, isObject := val.(map[string]any); !isObject {
				sp.addf(v, f, "must be an error object, e.g. {type: overloaded_error, message: Overloaded}, got %s", scriptDescribe(v))
				continue
			}
			raw, err := json.Marshal(val)
			if err != nil {
				sp.addf(v, f, "cannot be sent as JSON: %v", err)
				continue
			}
			r.Error = raw
		case "delay_ms":
			if n, ok := sp.integer(v, f); ok {
				if n < 0 {
					sp.addf(v, f, "must be >= 0, got %d", n)
				} else if n > math.MaxInt32 {
					sp.addf(v, f, "must be at most %d, got %d", math.MaxInt32, n)
				} else {
					r.DelayMS = int(n)
				}
			}
		case "hang":
			if b, ok := v.(*ast.BoolNode); ok {
				r.Hang = b.Value
			} else {
				sp.addf(v, f, "must be true or false, got %s", scriptDescribe(v))
			}
		case "cut_after_events":
			if n, ok := sp.integer(v, f); ok {
				if n < 0 {
					sp.addf(v, f, "must be >= 0, got %d", n)
				} else if n > math.MaxInt32 {
					sp.addf(v, f, "must be at most %d, got %d", math.MaxInt32, n)
				} else {
					r.CutAfterEvents = int(n)
				}
			}
		default:
			sp.addf(kv.keyAt, f, "unknown field (a reply has: %s)", scriptReplyFields)
		}
	}
	// Cross-field rules: each names the field that cannot be served, so the
	// author sees what the provider would otherwise silently drop.
	failing := r.Status != 0 && (r.Status < 200 || r.Status > 299)
	if n, ok := at["error"]; ok && !failing && r.Error != nil {
		if r.Status == 0 {
			sp.addf(n, field+".error", "needs a non-2xx status (e.g. status: 529); status is not set")
		} else {
			sp.addf(n, field+".error", "needs a non-2xx status (e.g. status: 529); status is %d", r.Status)
		}
	}
	if failing {
		for _, k := range []string{"text", "tools", "stop_reason", "usage", "reasoning_tokens", "cut_after_events"} {
			if n, ok := at[k]; ok {
				sp.addf(n, field+"."+k, "is not served with error status %d (an error reply has only the error object)", r.Status)
			}
		}
	}
	if n, ok := at["cut_after_events"]; ok && r.Hang && r.CutAfterEvents > 0 {
		sp.addf(n, field+".cut_after_events", "has no effect with hang: true (a hung reply sends no events)")
	}
	return r, len(sp.problems) == before
}

func (sp *scriptParser) str(node ast.Node, field string) (string, bool) {
	switch n := node.(type) {
	case *ast.StringNode:
		return n.Value, true
	case *ast.LiteralNode:
		return n.Value.Value, true
	}
	sp.addf(node, field, "must be a string, got %s", scriptDescribe(node))
	return "", false
}

func (sp *scriptParser) integer(node ast.Node, field string) (int64, bool) {
	if n, ok := node.(*ast.IntegerNode); ok {
		switch v := n.Value.(type) {
		case int64:
			return v, true
		case uint64:
			if v <= math.MaxInt64 {
				return int64(v), true
			}
		}
		sp.addf(node, field, "integer %s is out of range", n.Token.Value)
		return 0, false
	}
	sp.addf(node, field, "must be an integer, got %s", scriptDescribe(node))
	return 0, false
}

func (sp *scriptParser) tools(node ast.Node, field string) []Tool {
	seq, ok := node.(*ast.SequenceNode)
	if !ok {
		if _, isNull := node.(*ast.NullNode); isNull {
			return nil
		}
		sp.addf(node, field, "must be a list of {name, input}, got %s", scriptDescribe(node))
		return nil
	}
	var tools []Tool
	for i, item := range seq.Values {
		f := fmt.Sprintf("%s[%d]", field, i)
		item = sp.deref(item, f)
		if item == nil {
			continue
		}
		pairs, ok := sp.mapping(item, f)
		if !ok {
			continue
		}
		t := Tool{Input: map[string]any{}}
		named := false
		for _, kv := range pairs {
			kf := f + "." + kv.key
			v := sp.deref(kv.value, kf)
			if v == nil {
				continue
			}
			switch kv.key {
			case "name":
				if s, ok := sp.str(v, kf); ok {
					named = true
					if strings.TrimSpace(s) == "" {
						sp.addf(v, kf, "must not be empty")
					}
					t.Name = s
				}
			case "input":
				val, ok := sp.value(v, kf)
				if !ok {
					continue
				}
				m, isObject := val.(map[string]any)
				if !isObject {
					sp.addf(v, kf, "must be an object (the tool's arguments), got %s", scriptDescribe(v))
					continue
				}
				t.Input = m
			default:
				sp.addf(kv.keyAt, kf, "unknown field (a tool has: name, input)")
			}
		}
		if !named {
			if _, bad := sp.lastProblemFor(f + ".name"); !bad {
				sp.addf(item, f+".name", "is required (the tool to call, e.g. Write)")
			}
		}
		tools = append(tools, t)
	}
	return tools
}

func (sp *scriptParser) lastProblemFor(field string) (ScriptProblem, bool) {
	for i := len(sp.problems) - 1; i >= 0; i-- {
		if sp.problems[i].Field == field {
			return sp.problems[i], true
		}
	}
	return ScriptProblem{}, false
}

// usage keeps the values exactly as written; only the keys are checked.
func (sp *scriptParser) usage(node ast.Node, field string) Usage {
	if _, isNull := node.(*ast.NullNode); isNull {
		return nil
	}
	pairs, ok := sp.mapping(node, field)
	if !ok {
		return nil
	}
	u := Usage{}
	for _, kv := range pairs {
		f := field + "." + kv.key
		known := false
		for _, k := range UsageFields {
			known = known || k == kv.key
		}
		if !known {
			sp.addf(kv.keyAt, f, "unknown usage field (usage has: %s)", strings.Join(UsageFields, ", "))
			continue
		}
		v, ok := sp.value(kv.value, f)
		if !ok {
			continue
		}
		if v != nil {
			u[kv.key] = v
		}
	}
	return u
}

// value converts a node to the Go value sent on the wire. Floats keep their
// written form (json.Number) so that 1.0 is served as 1.0, not 1: a
// consumer that refuses floats must be testable with one.
func (sp *scriptParser) value(node ast.Node, field string) (any, bool) {
	node = sp.deref(node, field)
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
			sp.addf(node, field, "%s cannot be sent as JSON", n.Token.Value)
			return nil, false
		}
		return n.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		sp.addf(node, field, "%s cannot be sent as JSON", node.GetToken().Value)
		return nil, false
	case *ast.TagNode:
		v, ok := sp.value(n.Value, field)
		if ok && n.Start.Value == "!!str" && v != nil {
			if tk := sp.deref(n.Value, field).GetToken(); tk != nil {
				return tk.Value, true
			}
		}
		return v, ok
	case *ast.SequenceNode:
		list := make([]any, 0, len(n.Values))
		good := true
		for i, item := range n.Values {
			v, ok := sp.value(item, fmt.Sprintf("%s[%d]", field, i))
			good = good && ok
			list = append(list, v)
		}
		return list, good
	case *ast.MappingNode, *ast.MappingValueNode:
		pairs, ok := sp.mapping(n, field)
		if !ok {
			return nil, false
		}
		m := make(map[string]any, len(pairs))
		good := true
		for _, kv := range pairs {
			v, ok := sp.value(kv.value, scriptJoin(field, kv.key))
			good = good && ok
			m[kv.key] = v
		}
		return m, good
	}
	sp.addf(node, field, "unsupported YAML value %s", scriptDescribe(node))
	return nil, false
}

// scriptDescribe names a node's kind and, for scalars, its text, for "got
// ..." in messages.
func scriptDescribe(node ast.Node) string {
	switch n := node.(type) {
	case nil:
		return "nothing"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return fmt.Sprintf("string %q", n.Value)
	case *ast.LiteralNode:
		return fmt.Sprintf("string %q", n.Value.Value)
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return scriptTokenText(node)
	case *ast.BoolNode:
		return scriptTokenText(node)
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AliasNode:
		return "an alias"
	}
	return node.Type().String()
}

func scriptTokenText(node ast.Node) string {
	if tk := node.GetToken(); tk != nil {
		return tk.Value
	}
	return node.String()
}
