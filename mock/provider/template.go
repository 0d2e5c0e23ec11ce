package provider

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ReviewOutputPlaceholder, written in a tool's input in a script, is
// replaced per request with the review artifact path the harness named in
// the request's prompt ("Write your review as JSON to PATH"). One script can
// so serve many review sessions, each with its own artifact path.
const ReviewOutputPlaceholder = "{{review_output}}"

// templates maps each placeholder to the pattern whose first group, found
// in the request's text, replaces it.
var templates = []struct {
	placeholder string
	pattern     func() *regexp.Regexp // compiled at first use, not at every wfb start
}{
	{ReviewOutputPlaceholder, sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`Write your review as JSON to (\S+?)(?: \(|\s|$)`)
	})},
}

// expandTemplates returns reply with the placeholders in its tools'
// inputs replaced by what the request body says. A placeholder the request
// gives no value for is left as written, so the mistake shows in the tool
// call instead of vanishing. reply itself is never modified: it is shared
// by every request the script serves.
func expandTemplates(reply Reply, body map[string]any) Reply {
	if len(reply.Tools) == 0 {
		return reply
	}
	var values map[string]string
	for _, t := range reply.Tools {
		if mentionsPlaceholder(t.Input) {
			values = templateValues(body)
			break
		}
	}
	if len(values) == 0 {
		return reply
	}
	tools := make([]Tool, len(reply.Tools))
	for i, t := range reply.Tools {
		in, _ := replacePlaceholders(t.Input, values).(map[string]any)
		tools[i] = Tool{Name: t.Name, Input: in}
	}
	reply.Tools = tools
	return reply
}

// mentionsPlaceholder reports whether any string in v holds a placeholder.
func mentionsPlaceholder(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "{{")
	case map[string]any:
		for _, e := range x {
			if mentionsPlaceholder(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if mentionsPlaceholder(e) {
				return true
			}
		}
	}
	return false
}

// templateValues finds each placeholder's value in the request: the
// first match in its text, read in a fixed order (the conversation, then
// the system prompt), so the answer never depends on map order.
func templateValues(body map[string]any) map[string]string {
	var texts []string
	for _, key := range []string{"messages", "input", "contents", "system", "instructions", "systemInstruction"} {
		collectStrings(body[key], &texts)
	}
	values := map[string]string{}
	for _, tpl := range templates {
		for _, s := range texts {
			if m := tpl.pattern().FindStringSubmatch(s); m != nil {
				values[tpl.placeholder] = m[1]
				break
			}
		}
	}
	return values
}

// collectStrings collects the strings of a JSON value, depth first, map keys
// in sorted order.
func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectStrings(x[k], out)
		}
	}
}

// replacePlaceholders returns a copy of v with the placeholders replaced in every
// string.
func replacePlaceholders(v any, values map[string]string) any {
	switch x := v.(type) {
	case string:
		for p, val := range values {
			x = strings.ReplaceAll(x, p, val)
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = replacePlaceholders(e, values)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = replacePlaceholders(e, values)
		}
		return l
	}
	return v
}
