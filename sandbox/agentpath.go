package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// maxSymlinkHops is how many symlinks resolving the agent may follow, as
// the kernel's own limit (ELOOP).
const maxSymlinkHops = 40

// symlink is one link followed on the way to the agent's executable: the
// link's path (its directory already resolved) and its target as written.
type symlink struct{ path, target string }

// agentFiles is what a session needs of the agent's executable and nothing
// more: the symlinks the exec follows from the path the runner gives (in
// the order it follows them), the real file, and, for a program installed
// from npm, its package directory (the scripts, the wrapper and the files
// the binary loads beside itself) and the directories of the packages it
// depends on (npm installs them beside it, in the node_modules above). The
// binary's other neighbours — another package, a bench file, a results
// file — are not part of it.
type agentFiles struct {
	links []symlink
	real  string
	pkg   string
	deps  []string
}

// resolveAgentFiles walks bin (absolute) component by component, as the
// kernel does, recording every symlink it follows.
func resolveAgentFiles(bin string) (agentFiles, error) {
	var af agentFiles
	if !filepath.IsAbs(bin) {
		return af, fmt.Errorf("agent %s: not an absolute path", bin)
	}
	todo := strings.Split(bin, "/")
	resolved := "/"
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return af, err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return af, fmt.Errorf("agent %s: more than %d symlinks", bin, maxSymlinkHops)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return af, err
		}
		af.links = append(af.links, symlink{path: next, target: target})
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	af.real = resolved
	af.pkg = npmPackage(resolved)
	if af.pkg != "" {
		af.deps = npmDependencies(af.pkg)
	}
	return af, nil
}

// npmPackage is the npm package directory a file lies in
// (.../node_modules/NAME or .../node_modules/@SCOPE/NAME, the innermost),
// or "" when it lies in none.
func npmPackage(p string) string {
	parts := strings.Split(p, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] != "node_modules" {
			continue
		}
		if parts[i+1] == ".bin" {
			return "" // npm's links, not a package
		}
		end := i + 2
		if strings.HasPrefix(parts[i+1], "@") {
			end++
		}
		if end >= len(parts) {
			// The file is the package's name itself (a stray file in
			// node_modules): no package around it.
			return ""
		}
		return strings.Join(parts[:end], "/")
	}
	return ""
}

// maxNpmDependencies bounds the packages npmDependencies follows: a
// program's package.json is the host's, but a cycle or a monorepo must
// not make a sandbox of thousands of mounts.
const maxNpmDependencies = 2048

// npmDependencies are the directories of the packages the npm package at
// dir depends on (dependencies, optionalDependencies, peerDependencies),
// transitively, each found as Node finds it from the package that requires
// it: in that package's own node_modules, then in each node_modules above
// it. A package bundled into one program (Claude Code, Gemini CLI) has
// none; an MCP server such as @modelcontextprotocol/server-everything has
// a hundred, which npm hoists beside it, and without them it cannot start.
// A dependency that is not installed (optional, or for another platform)
// is left out: Node would not find it either.
func npmDependencies(dir string) []string {
	var out []string
	seen := map[string]bool{dir: true}
	for todo := []string{dir}; len(todo) > 0 && len(out) < maxNpmDependencies; {
		from := todo[0]
		todo = todo[1:]
		for _, name := range npmDependencyNames(from) {
			dep := findNpmPackage(from, name)
			if dep == "" || seen[dep] {
				continue
			}
			seen[dep] = true
			out = append(out, dep)
			todo = append(todo, dep)
		}
	}
	return out
}

// npmDependencyNames are the names of the packages the package.json in
// dir names as its dependencies, sorted; a name that is not a package name
// (a path, "..") is left out.
func npmDependencyNames(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil
	}
	var meta struct {
		Dependencies, OptionalDependencies, PeerDependencies map[string]json.RawMessage
	}
	if json.Unmarshal(data, &meta) != nil {
		return nil
	}
	var names []string
	for _, m := range []map[string]json.RawMessage{meta.Dependencies, meta.OptionalDependencies, meta.PeerDependencies} {
		for name := range m {
			if npmName().MatchString(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// npmName matches a package name, scoped (@scope/name) or not; never a
// path that leaves node_modules.
var npmName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$`)
})

// findNpmPackage is the directory of package name as Node resolves it from
// the package directory from: from/node_modules/name, then
// DIR/node_modules/name for each directory above from that is not itself
// a node_modules; "" when there is none.
func findNpmPackage(from, name string) string {
	for d := from; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			p := filepath.Join(d, "node_modules", filepath.FromSlash(name))
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return p
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
