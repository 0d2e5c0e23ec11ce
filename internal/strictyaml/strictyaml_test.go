package strictyaml

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/google/go-cmp/cmp"
)

// valueOf parses src, a mapping, and returns the node of its key v, having
// walked the keys before it as a loader would (an anchor is known once
// walked).
func valueOf(t *testing.T, w *Walker, src string) ast.Node {
	t.Helper()
	root, ok := w.Parse([]byte(src), "test file")
	if !ok || root == nil {
		t.Fatalf("Parse(%q) = %v, %v; problems %v", src, root, ok, w.Problems)
	}
	pairs, ok := w.Mapping(root, "")
	if !ok {
		t.Fatalf("Mapping: %v", w.Problems)
	}
	for _, p := range pairs {
		if p.Key == "v" {
			return p.Value
		}
		w.Deref(p.Value, p.Key)
	}
	t.Fatalf("%q has no key v", src)
	return nil
}

func problemStrings(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// TestHelpersSayWhatIsWrongAndWhere stops a helper that accepts a value of
// the wrong kind, or reports it without the field, the position or what was
// found instead: a loader's messages are only as good as these.
func TestHelpersSayWhatIsWrongAndWhere(t *testing.T) {
	str := func(w *Walker, n ast.Node) (any, bool) { return w.Str(n, "v") }
	integer := func(w *Walker, n ast.Node) (any, bool) { return w.Int(n, "v") }
	tests := []struct {
		name     string
		skipTags bool
		src      string
		read     func(w *Walker, n ast.Node) (any, bool)
		want     any
		wantOK   bool
		problems []string
	}{
		{name: "string", src: "v: hello", read: str, want: "hello", wantOK: true},
		{name: "block literal", src: "v: |\n  two\n  lines\n", read: str, want: "two\nlines\n", wantOK: true},
		{name: "number for a string", src: "v: 42", read: str, want: "", problems: []string{"f.yaml:1:4: v: must be a string, got 42"}},
		{name: "list for a string", src: "v: [a]", read: str, want: "", problems: []string{"f.yaml:1:4: v: must be a string, got a list"}},
		{name: "mapping points at its first key", src: "v: {a: 1}", read: str, want: "", problems: []string{"f.yaml:1:5: v: must be a string, got a mapping"}},
		{name: "null for a string", src: "v: null", read: str, want: "", problems: []string{"f.yaml:1:4: v: must be a string, got null"}},
		{name: "alias to an anchor", src: "a: &x hello\nv: *x\n", read: str, want: "hello", wantOK: true},
		{name: "alias to nothing", src: "v: *nope", read: str, want: "", problems: []string{"f.yaml:1:4: v: alias *nope names no anchor defined before it"}},
		{name: "tag is a node of its own", src: "v: !!str 123", read: integer, want: int64(0), problems: []string{"f.yaml:1:4: v: must be an integer, got Tag"}},
		{name: "tag skipped", skipTags: true, src: "v: !!str 123", read: integer, want: int64(123), wantOK: true},
		{
			name: "empty string", src: `v: ""`, want: "",
			read:     func(w *Walker, n ast.Node) (any, bool) { return w.NonEmpty(n, "v") },
			problems: []string{"f.yaml:1:4: v: must not be empty"},
		},
		{
			name: "digits read as written", src: "v: 0089", want: "0089", wantOK: true,
			read: func(w *Walker, n ast.Node) (any, bool) { return w.Literal(n, "v") },
		},
		{
			name: "float read as written", src: "v: 1.50", want: "1.50", wantOK: true,
			read: func(w *Walker, n ast.Node) (any, bool) { return w.Literal(n, "v") },
		},
		{
			name: "strings, one of them not", src: "v: [a, 1, b]", want: []string{"a", "b"}, wantOK: true,
			read:     func(w *Walker, n ast.Node) (any, bool) { return w.Strings(n, "v"), true },
			problems: []string{"f.yaml:1:8: v[1]: must be a string, got 1"},
		},
		{name: "bool", src: "v: false", want: false, wantOK: true, read: func(w *Walker, n ast.Node) (any, bool) { return w.Bool(n, "v") }},
		{
			name: "number for a bool", src: "v: 1", want: false,
			read:     func(w *Walker, n ast.Node) (any, bool) { return w.Bool(n, "v") },
			problems: []string{"f.yaml:1:4: v: must be true or false, got 1"},
		},
		{name: "integer", src: "v: -7", read: integer, want: int64(-7), wantOK: true},
		{name: "float for an integer", src: "v: 1.5", read: integer, want: int64(0), problems: []string{"f.yaml:1:4: v: must be an integer, got 1.5"}},
		{name: "integer too large", src: "v: 18446744073709551615", read: integer, want: int64(0), problems: []string{"f.yaml:1:4: v: integer 18446744073709551615 is out of range"}},
		{
			name: "integer out of its range", src: "v: 11", want: 0,
			read:     func(w *Walker, n ast.Node) (any, bool) { return w.IntRange(n, "v", 1, 10) },
			problems: []string{"f.yaml:1:4: v: must be between 1 and 10, got 11"},
		},
		{name: "duration", src: "v: 1h30m", want: 90 * time.Minute, wantOK: true, read: func(w *Walker, n ast.Node) (any, bool) { return w.Duration(n, "v") }},
		{
			name: "negative duration", src: "v: -1s", want: time.Duration(0),
			read:     func(w *Walker, n ast.Node) (any, bool) { return w.Duration(n, "v") },
			problems: []string{`f.yaml:1:4: v: must be a positive duration such as 90s, 10m or 1h30m, got "-1s"`},
		},
		{name: "null is an empty list", src: "v: null", want: 0, wantOK: true, read: func(w *Walker, n ast.Node) (any, bool) { items, ok := w.Sequence(n, "v"); return len(items), ok }},
		{
			name: "scalar for a list", src: "v: 3", want: 0,
			read:     func(w *Walker, n ast.Node) (any, bool) { items, ok := w.Sequence(n, "v"); return len(items), ok },
			problems: []string{"f.yaml:1:4: v: must be a list, got 3"},
		},
		{
			name: "scalar for a list of what", src: "v: {a: 1}", want: 0,
			read: func(w *Walker, n ast.Node) (any, bool) {
				items, ok := w.SequenceOf(n, "v", "a list of replies")
				return len(items), ok
			},
			problems: []string{"f.yaml:1:5: v: must be a list of replies, got a mapping"},
		},
		{name: "maybe a list, silently", src: "v: 3", want: 0, read: func(w *Walker, n ast.Node) (any, bool) { items, ok := w.AsSequence(n); return len(items), ok }},
		{name: "maybe a string, silently", src: "v: [x]", want: "", read: func(w *Walker, n ast.Node) (any, bool) { return w.ScalarString(n) }},
		{
			name: "mapping", src: "v: {b: 1, a: 2}", want: []string{"v.b", "v.a"}, wantOK: true,
			read: func(w *Walker, n ast.Node) (any, bool) {
				pairs, ok := w.Mapping(n, "v")
				var keys []string
				for _, p := range pairs {
					keys = append(keys, Join("v", p.Key))
				}
				return keys, ok
			},
		},
		{
			name: "merge key", src: "a: &x {b: 1}\nv:\n  <<: *x\n  c: 2\n", want: []string{"c"}, wantOK: true,
			read: func(w *Walker, n ast.Node) (any, bool) {
				pairs, ok := w.Mapping(n, "v")
				var keys []string
				for _, p := range pairs {
					keys = append(keys, p.Key)
				}
				return keys, ok
			},
			problems: []string{"f.yaml:3:3: v: merge keys (<<) are not supported; use an alias for the whole value"},
		},
		{
			name: "list for a mapping", src: "v: [1]", want: 0,
			read:     func(w *Walker, n ast.Node) (any, bool) { pairs, ok := w.Mapping(n, "v"); return len(pairs), ok },
			problems: []string{"f.yaml:1:4: v: must be a mapping, got a list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Walker{File: "f.yaml", SkipTags: tt.skipTags}
			n := valueOf(t, w, tt.src)
			got, ok := tt.read(w, n)
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.wantOK {
				t.Errorf("value %v, ok %v; want ok %v (-want +got):\n%s", got, ok, tt.wantOK, diff)
			}
			if diff := cmp.Diff(tt.problems, problemStrings(w.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseTakesOneDocument stops a loader from silently reading only the
// first of two documents, or losing where a syntax error is.
func TestParseTakesOneDocument(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		wantBody bool
		wantOK   bool
		problems []string
	}{
		{name: "one document", src: "a: 1\n", wantBody: true, wantOK: true},
		{name: "empty", src: "", wantOK: true},
		{name: "comments only", src: "# nothing yet\n", wantOK: true},
		{
			name: "two documents", src: "a: 1\n---\nb: 2\n", wantBody: true, wantOK: true,
			problems: []string{"f.yaml:3:1: a test file is one YAML document; found another"},
		},
		{
			name: "syntax error", src: "a: [\n",
			problems: []string{"f.yaml:1:4: YAML syntax: sequence end token ']' not found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Walker{File: "f.yaml"}
			body, ok := w.Parse([]byte(tt.src), "test file")
			if (body != nil) != tt.wantBody || ok != tt.wantOK {
				t.Errorf("Parse = %v, %v; want a body %v, ok %v", body, ok, tt.wantBody, tt.wantOK)
			}
			if diff := cmp.Diff(tt.problems, problemStrings(w.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAliasExpansionIsBounded stops a "billion laughs" file from making a
// loader expand aliases without end.
func TestAliasExpansionIsBounded(t *testing.T) {
	src := "a: &x s\nv: [" + strings.Repeat("*x, ", maxAliasResolves) + "*x]\n"
	w := &Walker{File: "f.yaml"}
	got := w.Strings(valueOf(t, w, src), "v")
	if len(got) != maxAliasResolves {
		t.Errorf("read %d strings, want the first %d", len(got), maxAliasResolves)
	}
	want := []Problem{{File: "f.yaml", Line: 2, Column: 5 + 4*maxAliasResolves, Field: "v[10000]", Message: "too many alias expansions"}}
	if diff := cmp.Diff(want, w.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestErrListsProblemsInFileOrder stops problems found out of order (a
// check across fields runs after them) from being printed out of order, and
// a walk without problems from returning a non-nil error.
func TestErrListsProblemsInFileOrder(t *testing.T) {
	w := &Walker{File: "bench.yaml"}
	if err := w.Err(); err != nil {
		t.Fatalf("Err with no problems = %v, want nil", err)
	}
	w.Problems = []Problem{
		{File: "bench.yaml", Line: 9, Column: 3, Field: "b", Message: "late"},
		{File: "other.yaml", Line: 1, Message: "another file"},
		{File: "bench.yaml", Line: 2, Column: 7, Field: "a", Message: "early"},
		{File: "bench.yaml", Line: 2, Column: 7, Field: "a", Nested: "script.yaml:1:1: nested, kept after its head"},
		{File: "bench.yaml", Message: "no position"},
	}
	err := w.Err()
	var yerr *Error
	if !errors.As(err, &yerr) {
		t.Fatalf("Err = %T, want *Error", err)
	}
	want := strings.Join([]string{
		"bench.yaml: no position",
		"bench.yaml:2:7: a: early",
		"  script.yaml:1:1: nested, kept after its head",
		"bench.yaml:9:3: b: late",
		"other.yaml:1: another file",
	}, "\n")
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Err().Error() (-want +got):\n%s", diff)
	}
}

// TestDescribeSaysWhatWasFound pins the "got ..." of every message.
func TestDescribeSaysWhatWasFound(t *testing.T) {
	tests := []struct{ src, want string }{
		{"v: hello", `string "hello"`},
		{"v: \"42\"", `string "42"`},
		{"v: 42", "42"},
		{"v: 1.0", "1.0"},
		{"v: .inf", ".inf"},
		{"v: true", "true"},
		{"v: null", "null"},
		{"v: ~", "null"},
		{"v: [1]", "a list"},
		{"v: {a: 1}", "a mapping"},
		{"v: !!str x", "Tag"},
	}
	for _, tt := range tests {
		w := &Walker{File: "f.yaml"}
		if got := Describe(valueOf(t, w, tt.src)); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
	if got := Describe(nil); got != "nothing" {
		t.Errorf("Describe(nil) = %q, want nothing", got)
	}
}
