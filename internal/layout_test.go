package internal

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wfbench/wfb"

// pkg is one package of the module: the imports of ours of its code (its
// tests' are free).
type pkg struct {
	imports []string
}

// modulePackages reads every package of the module (not examples/workspaces,
// a module of its own, nor testdata or _ and . directories) with go/build,
// keyed by import path.
func modulePackages(t *testing.T) map[string]pkg {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pkg{}
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		p, err := build.Default.ImportDir(dir, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		path := module
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		out[path] = pkg{imports: ours(p.Imports)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("read %d packages of %s: the walk missed the module", len(out), root)
	}
	return out
}

func ours(imports []string) []string {
	var out []string
	for _, i := range imports {
		if i == module || strings.HasPrefix(i, module+"/") {
			out = append(out, i)
		}
	}
	return out
}

// deps is every package of ours path imports, directly or not, outside
// tests.
func deps(pkgs map[string]pkg, path string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, i := range pkgs[p].imports {
			if !seen[i] {
				seen[i] = true
				walk(i)
			}
		}
	}
	walk(path)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func under(path, dir string) bool {
	return path == module+"/"+dir || strings.HasPrefix(path, module+"/"+dir+"/")
}

// TestInternalHoldsOnlyLeaves stops internal/ becoming a grab bag: a leaf
// imports nothing of ours but the vocabulary and other leaves, and a test
// kit (internal/testkit) is imported by tests only (and the benchmark data
// generator), never by a package's own code.
func TestInternalHoldsOnlyLeaves(t *testing.T) {
	pkgs := modulePackages(t)
	for path, p := range pkgs {
		isLeaf := under(path, "internal") && !under(path, "internal/testkit")
		for _, i := range p.imports {
			leafImport := i == module || (under(i, "internal") && !under(i, "internal/testkit"))
			if isLeaf && !leafImport {
				t.Errorf("%s is a leaf of internal/ but imports %s: a leaf imports only the vocabulary and other leaves", path, i)
			}
			if under(i, "internal/testkit") && !under(path, "internal/testkit") && path != module+"/report/internal/genresults" {
				t.Errorf("%s imports the test kit %s outside its tests", path, i)
			}
		}
	}
	for _, want := range []string{"internal/strictyaml", "internal/testkit/golden"} {
		if _, ok := pkgs[module+"/"+want]; !ok {
			t.Errorf("%s was not read: the walk missed packages", want)
		}
	}
}

// TestImportsFlowOneWay holds the import direction DESIGN's Layout sets:
// the viewer and the reports read stored results and never run or meter
// anything, the bench file is read without the sandbox or the store, and
// the packages at the bottom import nothing of ours but the vocabulary,
// internal leaves and their own subpackages.
func TestImportsFlowOneWay(t *testing.T) {
	pkgs := modulePackages(t)
	never := []struct {
		from    string
		forbids []string
	}{
		{"view", []string{"runner", "meter"}},
		{"report", []string{"runner", "meter"}},
		{"runner/bench", []string{"sandbox", "store"}},
	}
	for _, rule := range never {
		for _, d := range deps(pkgs, module+"/"+rule.from) {
			for _, f := range rule.forbids {
				if under(d, f) {
					t.Errorf("%s imports %s (go list -deps ./%s shows it)", rule.from, d, rule.from)
				}
			}
		}
	}
	for _, bottom := range []string{"mock", "sandbox", "meter", "store"} {
		for path, p := range pkgs {
			if !under(path, bottom) {
				continue
			}
			for _, i := range p.imports {
				if i != module && !under(i, bottom) && !(under(i, "internal") && !under(i, "internal/testkit")) {
					t.Errorf("%s imports %s: %s/ imports nothing of ours but the vocabulary and internal leaves", path, i, bottom)
				}
			}
		}
	}
}
