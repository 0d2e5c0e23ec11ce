package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Bounds on find_symbol's walk: a workspace is small, and a tool answer is
// read by a model.
const (
	maxFiles     = 5000    // files read at most
	maxFileBytes = 1 << 20 // a larger file is skipped
	maxResults   = 50      // definitions reported at most
	maxLineChars = 200     // a longer line is cut
)

// skipDirs are directories find_symbol never enters.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true}

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`) })

// definitionPattern matches a line that defines name in one of the
// languages a code-fixing task meets: JavaScript/TypeScript function, class
// and const-bound function; Python and Ruby def and class; Go func (with a
// receiver) and type; Rust fn.
func definitionPattern(name string) *regexp.Regexp {
	n := regexp.QuoteMeta(name)
	return regexp.MustCompile(`(^|[^A-Za-z0-9_$])(` +
		`function\s*\*?\s*` + n + `\s*[(<]` +
		`|class\s+` + n + `([^A-Za-z0-9_$]|$)` +
		`|def\s+` + n + `([^A-Za-z0-9_$?!]|$)` +
		`|func\s+(\([^)]*\)\s*)?` + n + `\s*[(\[]` +
		`|type\s+` + n + `\s` +
		`|fn\s+` + n + `\s*[(<]` +
		`|(const|let|var)\s+` + n + `\s*=\s*(async\s+)?(function|\([^)]*\)\s*=>|[A-Za-z_$][A-Za-z0-9_$]*\s*=>)` +
		`)`)
}

// findSymbol answers find_symbol: "path:line: text" for each definition of
// name in the text files under dir, in walk order, or a sentence saying
// there is none.
func findSymbol(ctx context.Context, dir, name string) (string, error) {
	if !identifier().MatchString(name) {
		return "", fmt.Errorf("name %q is not an identifier", name)
	}
	pattern := definitionPattern(name)
	var hits []string
	files := 0
	truncated := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable entry is skipped, not fatal
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if path != dir && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if files >= maxFiles || len(hits) >= maxResults {
			truncated = true
			return filepath.SkipAll
		}
		files++
		rel, _ := filepath.Rel(dir, path)
		for _, h := range definitionsIn(path, pattern) {
			if len(hits) >= maxResults {
				truncated = true
				break
			}
			hits = append(hits, filepath.ToSlash(rel)+":"+h)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("no definition of %s found", name), nil
	}
	out := strings.Join(hits, "\n")
	if truncated {
		out += fmt.Sprintf("\n[search stopped at %d files or %d results]", maxFiles, maxResults)
	}
	return out, nil
}

// definitionsIn returns "line: text" for each line of the file at path
// that pattern matches; nothing for a large or binary file.
func definitionsIn(path string, pattern *regexp.Regexp) []string {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > maxFileBytes {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !pattern.MatchString(line) {
			continue
		}
		line = strings.TrimRight(line, " \t\r")
		if len(line) > maxLineChars {
			line = line[:maxLineChars] + "…"
		}
		out = append(out, fmt.Sprintf("%d: %s", n, line))
	}
	return out
}
