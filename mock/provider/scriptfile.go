package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/wfbench/wfb/internal/strictyaml"
)

// ScriptProblem is one thing wrong with a script file, located by line (and
// column when known) and by the field's path, e.g. replies[1].status.
type ScriptProblem = strictyaml.Problem

// ScriptError lists every problem found in a script, so that one edit can
// fix them all rather than one per run.
type ScriptError = strictyaml.Error

// LoadScript reads and validates the script file at path. Every error is
// a *ScriptError naming the file as the path was given, a file that cannot
// be read or is past a limit (strictyaml.ReadFile) too.
func LoadScript(path string) (*Script, error) {
	data, err := strictyaml.ReadFile(path)
	if err != nil {
		// Bad input like any other problem of the script: a missing
		// file, a directory, /dev/zero, one over the size limit.
		return nil, &ScriptError{Problems: []ScriptProblem{{File: path, Message: "cannot read the script: " + readErrText(err)}}}
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
	sp := &scriptParser{Walker: &strictyaml.Walker{File: name}}
	body, ok := sp.Parse(data, "script")
	if !ok {
		return nil, sp.Err()
	}
	script := &Script{}
	if body != nil {
		sp.script(body, script)
	}
	if err := sp.Err(); err != nil {
		return nil, err
	}
	return script, nil
}

// scriptParser reads a script's own fields with a strict walker. Tags are
// not skipped: value gives !!str its meaning.
type scriptParser struct {
	*strictyaml.Walker
}

func (sp *scriptParser) script(node ast.Node, s *Script) {
	node = sp.Deref(node, "")
	if node == nil {
		return
	}
	if _, isNull := node.(*ast.NullNode); isNull {
		return
	}
	pairs, ok := sp.Mapping(node, "")
	if !ok {
		return
	}
	for _, kv := range pairs {
		switch kv.Key {
		case "replies":
			items, _ := sp.SequenceOf(kv.Value, "replies", "a list of replies")
			for i, item := range items {
				if r, ok := sp.reply(item, fmt.Sprintf("replies[%d]", i)); ok {
					s.Replies = append(s.Replies, r)
				}
			}
		case "default":
			if r, ok := sp.reply(kv.Value, "default"); ok {
				if r.Match != nil {
					sp.Addf(kv.KeyAt, "default.match", "the default answers every request no reply fits; it has no match")
				}
				s.Default = &r
			}
		default:
			sp.Addf(kv.KeyAt, kv.Key, "unknown field (a script has: replies, default)")
		}
	}
}

// scriptReplyFields are the fields a reply may have, in documentation order.
var scriptReplyFields = "text, tools, stop_reason, usage, reasoning_tokens, status, error, retry_after_ms, delay_ms, hang, cut_after_events, cut_cleanly, match"

// reply reads one reply; ok is false when it has any problem.
func (sp *scriptParser) reply(node ast.Node, field string) (r Reply, ok bool) {
	pairs, ok := sp.Mapping(node, field)
	if !ok {
		return r, false
	}
	before := len(sp.Problems)
	at := map[string]ast.Node{}
	for _, kv := range pairs {
		f := field + "." + kv.Key
		v := sp.Deref(kv.Value, f)
		if v == nil {
			continue
		}
		at[kv.Key] = v
		if !sp.replyField(&r, kv.Key, v, f) {
			sp.Addf(kv.KeyAt, f, "unknown field (a reply has: %s)", scriptReplyFields)
		}
	}
	sp.replyRules(r, at, field)
	return r, len(sp.Problems) == before
}

// replyField reads the reply field key, whose value is v, into r. It
// returns false for a key a reply does not have.
func (sp *scriptParser) replyField(r *Reply, key string, v ast.Node, f string) bool {
	switch key {
	case "text":
		r.Text, _ = sp.Str(v, f)
	case "stop_reason":
		r.StopReason, _ = sp.Str(v, f)
	case "tools":
		r.Tools = sp.tools(v, f)
	case "usage":
		r.Usage = sp.usage(v, f)
	case "reasoning_tokens":
		// Like a usage value: served verbatim, null is absent.
		if val, ok := sp.Value(v, f); ok {
			r.ReasoningTokens = val
		}
	case "status":
		if n, ok := sp.Int(v, f); ok {
			if n < 100 || n > 599 {
				sp.Addf(v, f, "must be an HTTP status 100-599, got %d", n)
			} else {
				r.Status = int(n)
			}
		}
	case "error":
		r.Error = sp.errorObject(v, f)
	case "retry_after_ms":
		r.RetryAfterMS = sp.count(v, f)
	case "delay_ms":
		r.DelayMS = sp.count(v, f)
	case "hang":
		r.Hang, _ = sp.Bool(v, f)
	case "cut_after_events":
		r.CutAfterEvents = sp.count(v, f)
	case "match":
		r.Match = sp.match(v, f)
	case "cut_cleanly":
		r.CutCleanly, _ = sp.Bool(v, f)
	default:
		return false
	}
	return true
}

// replyRules checks a reply's fields across each other. Each rule names the
// field that cannot be served, so the author sees what the provider would
// otherwise silently drop. at holds where each field was written.
func (sp *scriptParser) replyRules(r Reply, at map[string]ast.Node, field string) {
	failing := r.Status != 0 && (r.Status < 200 || r.Status > 299)
	if n, ok := at["error"]; ok && !failing && r.Error != nil {
		if r.Status == 0 {
			sp.Addf(n, field+".error", "needs a non-2xx status (e.g. status: 529); status is not set")
		} else {
			sp.Addf(n, field+".error", "needs a non-2xx status (e.g. status: 529); status is %d", r.Status)
		}
	}
	if failing {
		for _, k := range []string{"text", "tools", "stop_reason", "usage", "reasoning_tokens", "cut_after_events", "cut_cleanly"} {
			if n, ok := at[k]; ok {
				sp.Addf(n, field+"."+k, "is not served with error status %d (an error reply has only the error object)", r.Status)
			}
		}
	}
	if n, ok := at["retry_after_ms"]; ok && !failing {
		sp.Addf(n, field+".retry_after_ms", "is a failure's retry hint; it needs a non-2xx status (e.g. status: 529)")
	}
	if n, ok := at["cut_cleanly"]; ok && r.CutCleanly && r.CutAfterEvents == 0 && !failing {
		sp.Addf(n, field+".cut_cleanly", "needs cut_after_events > 0 (it says how a cut stream ends)")
	}
	if n, ok := at["cut_after_events"]; ok && r.Hang && r.CutAfterEvents > 0 {
		sp.Addf(n, field+".cut_after_events", "has no effect with hang: true (a hung reply sends no events)")
	}
}

// count reads a count of milliseconds or events: 0 to MaxInt32, 0 when it
// is not one (reported).
func (sp *scriptParser) count(v ast.Node, f string) int {
	n, ok := sp.Int(v, f)
	switch {
	case !ok:
	case n < 0:
		sp.Addf(v, f, "must be >= 0, got %d", n)
	case n > math.MaxInt32:
		sp.Addf(v, f, "must be at most %d, got %d", math.MaxInt32, n)
	default:
		return int(n)
	}
	return 0
}

// errorObject reads a failure's error object, served as JSON; nil when it
// is not one (reported).
func (sp *scriptParser) errorObject(v ast.Node, f string) json.RawMessage {
	if _, ok := sp.Deref(v, f).(*ast.NullNode); ok {
		sp.Addf(v, f, "must be an error object, e.g. {type: overloaded_error, message: Overloaded}, got null")
		return nil
	}
	val, ok := sp.Value(v, f)
	if !ok {
		return nil
	}
	if _, isObject := val.(map[string]any); !isObject {
		sp.Addf(v, f, "must be an error object, e.g. {type: overloaded_error, message: Overloaded}, got %s", strictyaml.Describe(v))
		return nil
	}
	raw, err := json.Marshal(val)
	if err != nil {
		sp.Addf(v, f, "cannot be sent as JSON: %v", err)
		return nil
	}
	return raw
}

func (sp *scriptParser) tools(node ast.Node, field string) []Tool {
	items, _ := sp.SequenceOf(node, field, "a list of {name, input}")
	var tools []Tool
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		item = sp.Deref(item, f)
		if item == nil {
			continue
		}
		pairs, ok := sp.Mapping(item, f)
		if !ok {
			continue
		}
		tools = append(tools, sp.tool(item, f, pairs))
	}
	return tools
}

// tool reads one tool call, item being its mapping and pairs its fields.
func (sp *scriptParser) tool(item ast.Node, f string, pairs []strictyaml.Pair) Tool {
	t := Tool{Input: map[string]any{}}
	named := false
	for _, kv := range pairs {
		kf := f + "." + kv.Key
		v := sp.Deref(kv.Value, kf)
		if v == nil {
			continue
		}
		switch kv.Key {
		case "name":
			if s, ok := sp.Str(v, kf); ok {
				named = true
				if strings.TrimSpace(s) == "" {
					sp.Addf(v, kf, "must not be empty")
				}
				t.Name = s
			}
		case "input":
			val, ok := sp.Value(v, kf)
			if !ok {
				continue
			}
			m, isObject := val.(map[string]any)
			if !isObject {
				sp.Addf(v, kf, "must be an object (the tool's arguments), got %s", strictyaml.Describe(v))
				continue
			}
			t.Input = m
		default:
			sp.Addf(kv.KeyAt, kf, "unknown field (a tool has: name, input)")
		}
	}
	if !named {
		if _, bad := sp.lastProblemFor(f + ".name"); !bad {
			sp.Addf(item, f+".name", "is required (the tool to call, e.g. Write)")
		}
	}
	return t
}

func (sp *scriptParser) lastProblemFor(field string) (ScriptProblem, bool) {
	for i := len(sp.Problems) - 1; i >= 0; i-- {
		if sp.Problems[i].Field == field {
			return sp.Problems[i], true
		}
	}
	return ScriptProblem{}, false
}

// usage keeps the values exactly as written; only the keys are checked.
func (sp *scriptParser) usage(node ast.Node, field string) Usage {
	if _, isNull := node.(*ast.NullNode); isNull {
		return nil
	}
	pairs, ok := sp.Mapping(node, field)
	if !ok {
		return nil
	}
	u := Usage{}
	for _, kv := range pairs {
		f := field + "." + kv.Key
		if !slices.Contains(UsageFields, kv.Key) {
			sp.Addf(kv.KeyAt, f, "unknown usage field (usage has: %s)", strings.Join(UsageFields, ", "))
			continue
		}
		v, ok := sp.Value(kv.Value, f)
		if !ok {
			continue
		}
		if v != nil {
			u[kv.Key] = v
		}
	}
	return u
}

// readErrText is a read error without the path the problem already names.
func readErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// match reads a reply's match: {turn, model, offers}.
func (sp *scriptParser) match(node ast.Node, field string) *Match {
	pairs, ok := sp.Mapping(node, field)
	if !ok {
		return nil
	}
	m := &Match{}
	for _, kv := range pairs {
		f := field + "." + kv.Key
		v := sp.Deref(kv.Value, f)
		if v == nil {
			continue
		}
		switch kv.Key {
		case "model":
			if s, ok := sp.Str(v, f); ok {
				if s == "" {
					sp.Addf(v, f, "must not be empty (leave it out to match any model)")
				}
				m.Model = s
			}
		case "turn":
			if n, ok := sp.Int(v, f); ok {
				if n < 0 || n > math.MaxInt32 {
					sp.Addf(v, f, "must be 0 (the first request) or more, got %d", n)
				} else {
					t := int(n)
					m.Turn = &t
				}
			}
		case "offers":
			if s, ok := sp.NonEmpty(v, f); ok {
				m.Offers = s
			}
		default:
			sp.Addf(kv.KeyAt, f, "unknown field (a match has: turn, model, offers)")
		}
	}
	return m
}
