package strictyaml

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one thing wrong with a file, located by line and column (0
// when unknown) and by the field's path, e.g. replies[1].status.
type Problem struct {
	File    string
	Line    int
	Column  int
	Field   string
	Message string
	// Nested is a problem of another file this one names (a bench's mock
	// script), already located in that file; Line and Column are where this
	// file names it.
	Nested string
}

// String formats the problem as FILE:LINE:COL: FIELD: MESSAGE, or a nested
// problem indented under the one that names its file.
func (p Problem) String() string {
	if p.Nested != "" {
		return "  " + p.Nested
	}
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
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error lists every problem of a file at once, so that one edit can fix them
// all rather than one per run.
type Error struct {
	Problems []Problem
}

// Error prints one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// CheckRefusal says what is wrong with err as a loader's refusal: it must
// be an *Error listing at least one problem, each naming its file (or
// nested under one that does). Nil means a good refusal; the fuzz targets
// of the loaders hold them to it.
func CheckRefusal(err error) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) == 0 {
		return fmt.Errorf("refused without an *Error listing problems: %v", err)
	}
	for _, p := range e.Problems {
		if p.File == "" && p.Nested == "" {
			return fmt.Errorf("a problem without its file: %+v", p)
		}
	}
	return nil
}
