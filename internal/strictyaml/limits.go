package strictyaml

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// Limits on every file a Walker reads (a bench file, a mock script). The
// YAML parser's time and memory grow faster than the file (20,000 nested
// "[" — 40 KB — took 3 s and 664 MB), so a file past a limit is refused
// before it is parsed, by a scan that stops at the limit.
const (
	// MaxBytes bounds a file's size: far beyond any bench or script.
	MaxBytes = 1 << 20
	// MaxDepth bounds nesting: flow collections ([ {) and block levels
	// (indentation, "- - x") together.
	MaxDepth = 100
	// MaxNodes bounds the tokens (keys, values, indicators) of a file.
	MaxNodes = 100_000
)

// LimitError is a file ReadFile refused without reading it whole: its
// message says what it is and which limit it passes, phrased to follow
// "cannot read FILE: ".
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return e.Reason }

// ReadFile reads a file for a loader without trusting it: a file that is
// not regular (a FIFO, /dev/zero, a directory) is refused without being
// read, and one over MaxBytes after at most MaxBytes+1 bytes, each with a
// *LimitError. A file that cannot be opened or read returns that error.
func ReadFile(path string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO with no writer must not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &LimitError{fmt.Sprintf("it is %s, not a regular file (wfb reads only regular files)", describeMode(fi.Mode()))}
	}
	if fi.Size() > MaxBytes {
		return nil, &LimitError{"it " + sizeText(fi.Size())}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, &LimitError{"it " + sizeText(int64(len(data)))}
	}
	return data, nil
}

// sizeText follows "it " or "the bench file ".
func sizeText(n int64) string {
	return fmt.Sprintf("is %d bytes, over the size limit of %d bytes (%d MiB)", n, MaxBytes, MaxBytes>>20)
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "of type " + m.Type().String()
}

// IsLimit says whether err is a ReadFile refusal (not an I/O failure).
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

// tokenize scans data into tokens, refusing (recorded as a problem naming
// the limit, false) a file over MaxBytes, MaxDepth or MaxNodes; the scan
// stops at the first limit passed.
func (w *Walker) tokenize(data []byte, kind string) (token.Tokens, bool) {
	if len(data) > MaxBytes {
		w.Problems = append(w.Problems, Problem{File: w.File, Message: "the " + kind + " " + sizeText(int64(len(data)))})
		return nil, false
	}
	var s scanner.Scanner
	s.Init(string(data))
	var (
		tokens token.Tokens
		d      depth
	)
	for {
		sub, err := s.Scan()
		if err == io.EOF {
			return tokens, true
		}
		for _, tk := range sub {
			if msg := d.add(tk, len(tokens)); msg != "" {
				p := Problem{File: w.File, Message: fmt.Sprintf("the %s %s", kind, msg)}
				if tk.Position != nil {
					p.Line, p.Column = tk.Position.Line, tk.Position.Column
				}
				w.Problems = append(w.Problems, p)
				return nil, false
			}
			tokens.Add(tk)
		}
	}
}

// depth follows a token stream's nesting: flow collections open and
// close; block levels are the stack of indentation columns that lines
// (and "-" entries) start at.
type depth struct {
	flow     int
	block    []int // columns, increasing
	lastLine int
}

// add accounts for tk, the n+1th token, and says which limit it passes,
// if any.
func (d *depth) add(tk *token.Token, n int) string {
	if n >= MaxNodes {
		return fmt.Sprintf("has more than %d tokens (the node limit)", MaxNodes)
	}
	if tk.Type == token.CommentType {
		return ""
	}
	if d.flow == 0 && tk.Position != nil && (tk.Position.Line != d.lastLine || tk.Type == token.SequenceEntryType) {
		d.lastLine = tk.Position.Line
		d.indent(tk.Position.Column)
	}
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		d.flow++
	case token.SequenceEndType, token.MappingEndType:
		if d.flow > 0 {
			d.flow--
		}
	}
	if d.flow+len(d.block) > MaxDepth {
		return fmt.Sprintf("nests deeper than %d levels (the depth limit)", MaxDepth)
	}
	return ""
}

// indent enters the block level a token at column col starts.
func (d *depth) indent(col int) {
	for len(d.block) > 0 && d.block[len(d.block)-1] > col {
		d.block = d.block[:len(d.block)-1]
	}
	if len(d.block) == 0 || d.block[len(d.block)-1] < col {
		d.block = append(d.block, col)
	}
}
