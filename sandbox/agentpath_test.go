package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// npmLayout lays out what `npm install` leaves: node_modules/.bin/tool, a
// symlink to ../tool-pkg/bin/tool, a script that needs its package's
// lib/helper.sh; a second package beside it; and a results file beside
// node_modules. It returns the .bin link and the results file.
func npmLayout(t *testing.T, base string) (link, results string) {
	t.Helper()
	nm := filepath.Join(base, "node_modules")
	for _, d := range []string{".bin", "tool-pkg/bin", "tool-pkg/lib", "other-pkg"} {
		if err := os.MkdirAll(filepath.Join(nm, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(nm, "tool-pkg", "package.json"), `{"name": "tool-pkg", "bin": {"tool": "bin/tool"}}`, 0o644)
	writeFile(t, filepath.Join(nm, "tool-pkg", "lib", "helper.sh"), "echo helper-loaded\n", 0o644)
	writeFile(t, filepath.Join(nm, "tool-pkg", "bin", "tool"), "#!/bin/sh\n. \"$(dirname \"$(readlink -f \"$0\")\")/../lib/helper.sh\"\necho agent-ran\n", 0o755)
	writeFile(t, filepath.Join(nm, "other-pkg", "secret.txt"), "other-package-secret\n", 0o644)
	link = filepath.Join(nm, ".bin", "tool")
	if err := os.Symlink("../tool-pkg/bin/tool", link); err != nil {
		t.Fatal(err)
	}
	results = filepath.Join(base, "wfb.db")
	writeFile(t, results, "results-file-bytes\n", 0o644)
	return link, results
}

// TestTheAgentsNeighboursStayOutOfTheSandbox stops a sandbox that makes
// the agent's whole directory visible: an agent kept beside the bench could
// read the results file there. The agent itself runs (and, from npm, finds
// its package's own files); a file beside it, and another package beside
// its package, cannot be read.
func TestTheAgentsNeighboursStayOutOfTheSandbox(t *testing.T) {
	for _, backend := range []string{Bwrap, Landlock} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			t.Run("plain binary", func(t *testing.T) {
				base := traversableDir(t)
				agent := filepath.Join(base, "agent")
				writeFile(t, agent, "#!/bin/sh\necho agent-ran\n", 0o755)
				results := filepath.Join(base, "wfb.db")
				writeFile(t, results, "results-file-bytes\n", 0o644)
				sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: backend, AgentBin: agent})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				checkNeighbours(t, sb, agent, "", results)
			})
			t.Run("npm package", func(t *testing.T) {
				base := traversableDir(t)
				link, results := npmLayout(t, base)
				real, err := filepath.EvalSymlinks(link)
				if err != nil {
					t.Fatal(err)
				}
				sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: backend, AgentBin: real})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				checkNeighbours(t, sb, real, "helper-loaded", results, filepath.Join(base, "node_modules", "other-pkg", "secret.txt"))
			})
		})
	}
}

// checkNeighbours runs agent inside sb (it must print agent-ran, and also
// needs when given) and then tries to read each neighbour.
func checkNeighbours(t *testing.T, sb *Sandbox, agent, needs string, neighbours ...string) {
	t.Helper()
	out, err := runAs(t, sb, agent)
	if err != nil || !strings.Contains(out, "agent-ran") || !strings.Contains(out, needs) {
		t.Fatalf("the agent did not run inside: %v: %q", err, out)
	}
	for _, n := range neighbours {
		out, err := runAs(t, sb, "cat "+n)
		if err == nil || strings.Contains(out, "-bytes") || strings.Contains(out, "-secret") {
			t.Errorf("the session read %s beside the agent: %v: %q", n, err, out)
		}
	}
}

// TestASymlinkedAgentRunsInEverySandbox stops the bwrap session that died
// in 16 ms with "bwrap: execvp …: No such file or directory": the agent a
// local `npm install` gives is node_modules/.bin/tool, a relative symlink
// into its package, here also reached through an absolute symlink and a
// symlinked directory. Every backend runs it by that path, and it finds
// its package's files.
func TestASymlinkedAgentRunsInEverySandbox(t *testing.T) {
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			base := traversableDir(t)
			link, _ := npmLayout(t, base)
			alias := filepath.Join(base, "alias")
			if err := os.Symlink(base, alias); err != nil {
				t.Fatal(err)
			}
			viaAlias := filepath.Join(alias, "node_modules", ".bin", "tool")
			outer := filepath.Join(base, "claude")
			if err := os.Symlink(viaAlias, outer); err != nil {
				t.Fatal(err)
			}
			for _, agent := range []string{link, viaAlias, outer} {
				sb, err := Prepare(context.Background(), Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: backend, AgentBin: agent})
				if err != nil {
					t.Fatal(err)
				}
				out, err := runAs(t, sb, agent)
				sb.Close()
				if err != nil || !strings.Contains(out, "helper-loaded") || !strings.Contains(out, "agent-ran") {
					t.Errorf("%s did not run inside: %v: %q", agent, err, out)
				}
			}
		})
	}
}

// TestResolveAgentFilesFollowsTheLinksTheKernelFollows stops a resolution
// that misses a link on the way (the exec would find nothing inside) or
// names the wrong package.
func TestResolveAgentFilesFollowsTheLinksTheKernelFollows(t *testing.T) {
	base := traversableDir(t)
	link, _ := npmLayout(t, base)
	if err := os.Symlink(base, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	af, err := resolveAgentFiles(filepath.Join(base, "alias", "node_modules", ".bin", "tool"))
	if err != nil {
		t.Fatal(err)
	}
	want := agentFiles{
		links: []symlink{{filepath.Join(base, "alias"), base}, {link, "../tool-pkg/bin/tool"}},
		real:  filepath.Join(base, "node_modules", "tool-pkg", "bin", "tool"),
		pkg:   filepath.Join(base, "node_modules", "tool-pkg"),
	}
	if diff := cmp.Diff(want, af, cmp.AllowUnexported(agentFiles{}, symlink{})); diff != "" {
		t.Errorf("resolveAgentFiles (-want +got):\n%s", diff)
	}
	for p, pkg := range map[string]string{
		"/x/node_modules/@scope/name/bin/cli": "/x/node_modules/@scope/name",
		"/x/node_modules/a/node_modules/b/c":  "/x/node_modules/a/node_modules/b",
		"/usr/local/bin/claude":               "",
		"/x/node_modules/.bin/tool":           "",
	} {
		if got := npmPackage(p); got != pkg {
			t.Errorf("npmPackage(%s) = %q, want %q", p, got, pkg)
		}
	}
}

// TestAnNpmProgramNeedsThePackagesItDependsOnAndNoOthers stops a sandbox
// that binds an npm program's package without the packages npm installed
// for it (hoisted beside it, or nested in a dependency's node_modules) —
// the program cannot load them — or that binds the neighbours as well.
func TestAnNpmProgramNeedsThePackagesItDependsOnAndNoOthers(t *testing.T) {
	srv := mcpLayout(t, traversableDir(t))
	af, err := resolveAgentFiles(srv.link)
	if err != nil {
		t.Fatal(err)
	}
	nm := filepath.Dir(srv.pkg)
	want := []string{filepath.Join(nm, "dep-pkg"), filepath.Join(nm, "dep-pkg", "node_modules", "deep-dep")}
	if diff := cmp.Diff(want, af.deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}
