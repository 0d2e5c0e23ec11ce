package strictyaml

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// pathological are files the YAML parser's time or memory would grow past
// any reason on (20,000 nested "[" — 40 KB — took 3 s and 664 MB), each
// with the limit its refusal must name.
var pathological = []struct {
	name, src, want string
}{
	{"20,000 nested [", strings.Repeat("[", 20000), "test file nests deeper than 100 levels (the depth limit)"},
	{"5,000 nested {a:", "a: " + strings.Repeat("{a: ", 5000), "the depth limit"},
	{"5,000 nested block entries", strings.Repeat("- ", 5000) + "x", "the depth limit"},
	{"deep indentation", deepBlock(200), "the depth limit"},
	{"over the node limit", "[" + strings.Repeat("1,", MaxNodes) + "1]", "more than 100000 tokens (the node limit)"},
	{"over the size limit", "a: " + strings.Repeat("x", MaxBytes), "over the size limit of 1048576 bytes (1 MiB)"},
}

// deepBlock nests n block mappings by indentation.
func deepBlock(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// TestLimitsRefuseAPathologicalFileBeforeParsing stops a bench file or mock
// script from taking seconds and gigabytes to parse: a file past the size,
// depth or node limit is refused, naming the limit, by a scan that stops
// there; a file within them still parses.
func TestLimitsRefuseAPathologicalFileBeforeParsing(t *testing.T) {
	for _, tc := range pathological {
		t.Run(tc.name, func(t *testing.T) {
			w := &Walker{File: "f.yaml"}
			body, ok := w.Parse([]byte(tc.src), "test file")
			if ok || body != nil {
				t.Fatalf("Parse accepted it (ok=%v)", ok)
			}
			if len(w.Problems) != 1 || !strings.Contains(w.Problems[0].String(), tc.want) {
				t.Fatalf("problems %v, want one naming %q", problemStrings(w.Problems), tc.want)
			}
			if !strings.HasPrefix(w.Problems[0].String(), "f.yaml:") {
				t.Errorf("the problem does not name the file: %s", w.Problems[0])
			}
		})
	}
	// Controls: as deep as allowed, and ordinary files, parse.
	for name, src := range map[string]string{
		"99 nested [":      strings.Repeat("[", 99) + strings.Repeat("]", 99),
		"90 block levels":  deepBlock(90),
		"a list of lists":  "a:\n  - [1, [2, 3]]\n  - {b: [4]}\nc:\n" + strings.Repeat("  - x\n", 1000),
		"unbalanced text":  "a: |\n  if (x[ {\n  [[[[[[\nb: plain [text\n",
		"comments nesting": "# [[[[[[[\na: 1\n",
	} {
		w := &Walker{File: "f.yaml"}
		if _, ok := w.Parse([]byte(src), "test file"); !ok || len(w.Problems) > 0 {
			t.Errorf("%s: refused: %v", name, problemStrings(w.Problems))
		}
	}
}

// TestReadFileRefusesWhatItCannotReadWhole stops `wfb run /dev/zero` (or a
// FIFO, a directory, a huge file) from being read until memory runs out:
// each is refused with a *LimitError naming what it is or the limit, and a
// regular file within the limit is read.
func TestReadFileRefusesWhatItCannotReadWhole(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.yaml")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<40); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/dev/zero": "it is a character device, not a regular file",
		fifo:        "it is a named pipe, not a regular file",
		dir:         "it is a directory, not a regular file",
		big:         "it is 1048577 bytes, over the size limit of 1048576 bytes (1 MiB)",
		sparse:      "it is 1099511627776 bytes, over the size limit",
	} {
		_, err := ReadFile(path)
		if !IsLimit(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s) = %v, want a limit error with %q", path, err, want)
		}
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ok); err != nil || string(b) != "a: 1\n" {
		t.Errorf("ReadFile(ok) = %q, %v", b, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil || IsLimit(err) || !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want the open's not-exist error", err)
	}
}

// BenchmarkRefuseDeepNesting measures the refusal of 20,000 nested "["
// (the parser alone took 3 s and 664 MB on it).
func BenchmarkRefuseDeepNesting(b *testing.B) {
	src := []byte(strings.Repeat("[", 20000))
	for b.Loop() {
		w := &Walker{File: "f.yaml"}
		if _, ok := w.Parse(src, "bench file"); ok {
			b.Fatal("accepted")
		}
	}
}
