package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// the binary loads beside itself). The binary's other neighbours — a bench
// file, a results file — are not part of it.
type agentFiles struct {
	links []symlink
	real  string
	pkg   string
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
