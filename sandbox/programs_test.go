package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb/internal/testkit/gate"
)

// dirUnder makes a fresh directory in parent that any uid can traverse,
// its real path, removed after the test. A parent wfb cannot write (/opt,
// when the tests do not run as root) skips the test.
func dirUnder(t *testing.T, parent string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, "wfb-program-test-")
	if err != nil {
		if os.Getenv("WFB_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("cannot make a directory in %s: %v (WFB_REQUIRE_SANDBOX=1)", parent, err)
		}
		gate.Skipf(t, "WFB_REQUIRE_SANDBOX", "cannot make a directory in %s: %v (WFB_REQUIRE_SANDBOX=1 makes this a failure)", parent, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// mcpServer is an MCP server laid out as `npm install` leaves one.
type mcpServer struct {
	link       string // node_modules/.bin/mcp-server-demo, what the agent execs
	script     string // the file the link leads to
	pkg        string // its package's directory
	dep        string // a file of a package it depends on
	neighbours []string
}

// mcpLayout lays out node_modules/.bin/mcp-server-demo, a symlink to
// ../mcp-server-demo/bin/cli.sh, a script that loads its package's
// lib/helper.sh and its dependencies' lib.sh: dep-pkg, hoisted beside it,
// and dep-pkg's own deep-dep, nested in dep-pkg's node_modules (an
// optional dependency is not installed); another package beside it and a
// results file beside node_modules. The package's directories and files
// are writable by anyone: only the sandbox stands between a session and
// them.
func mcpLayout(t *testing.T, base string) mcpServer {
	t.Helper()
	nm := filepath.Join(base, "node_modules")
	pkg := filepath.Join(nm, "mcp-server-demo")
	dep, deep := filepath.Join(nm, "dep-pkg"), filepath.Join(nm, "dep-pkg", "node_modules", "deep-dep")
	for _, d := range []string{filepath.Join(nm, ".bin"), filepath.Join(pkg, "bin"), filepath.Join(pkg, "lib"), filepath.Join(nm, "other-pkg"), deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{pkg, filepath.Join(pkg, "bin"), filepath.Join(pkg, "lib")} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(pkg, "package.json"), `{"name": "mcp-server-demo", "bin": {"mcp-server-demo": "bin/cli.sh"},
  "dependencies": {"dep-pkg": "^1.0.0"}, "optionalDependencies": {"absent-pkg": "1.0.0"}}`, 0o666)
	writeFile(t, filepath.Join(pkg, "lib", "helper.sh"), "echo helper-loaded\n", 0o666)
	writeFile(t, filepath.Join(dep, "package.json"), `{"name": "dep-pkg", "dependencies": {"deep-dep": "2.0.0"}}`, 0o666)
	writeFile(t, filepath.Join(dep, "lib.sh"), "echo dep-loaded\n", 0o666)
	writeFile(t, filepath.Join(deep, "package.json"), `{"name": "deep-dep"}`, 0o666)
	writeFile(t, filepath.Join(deep, "lib.sh"), "echo deep-dep-loaded\n", 0o666)
	script := filepath.Join(pkg, "bin", "cli.sh")
	writeFile(t, script, "#!/bin/sh\nhere=\"$(dirname \"$(readlink -f \"$0\")\")\"\n. \"$here/../lib/helper.sh\"\n"+
		". \"$here/../../dep-pkg/lib.sh\"\n. \"$here/../../dep-pkg/node_modules/deep-dep/lib.sh\"\necho program-ran\n", 0o777)
	secret := filepath.Join(nm, "other-pkg", "secret.txt")
	writeFile(t, secret, "other-package-secret\n", 0o644)
	results := filepath.Join(base, "wfb.db")
	writeFile(t, results, "results-file-bytes\n", 0o644)
	link := filepath.Join(nm, ".bin", "mcp-server-demo")
	if err := os.Symlink("../mcp-server-demo/bin/cli.sh", link); err != nil {
		t.Fatal(err)
	}
	return mcpServer{link: link, script: script, pkg: pkg, dep: filepath.Join(dep, "lib.sh"), neighbours: []string{secret, results}}
}

// TestAProgramRunsReadOnlyInEverySandboxAndNothingBesideIt stops a sandbox
// that leaves an MCP server the agent starts out of reach (under bwrap only
// the agent's own executable was bound: the spawn found nothing; then only
// its package, without the packages npm installed beside it for it:
// @modelcontextprotocol/server-everything could not load its SDK), that
// makes its package writable to the session, or that shows what lies
// beside it. The program is an npm .bin link into its package, installed
// under /opt (a system directory, already visible whole), under /var/tmp
// (bound for it alone) and under /tmp (the private tmp's special case). Its
// package is writable by anyone; host-unsafe, the control, shows that the
// session uid could write it without the sandbox.
func TestAProgramRunsReadOnlyInEverySandboxAndNothingBesideIt(t *testing.T) {
	for _, backend := range []string{Bwrap, Landlock, HostUnsafe} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			for _, place := range []string{"/opt", "/var/tmp", "/tmp"} {
				t.Run(place, func(t *testing.T) {
					privateTmp(t)
					srv := mcpLayout(t, dirUnder(t, place))
					sb, err := Prepare(context.Background(), Options{
						Workspace: newWorkspace(t, traversableDir(t)),
						Backend:   backend,
						AgentBin:  "/bin/sh",
						Programs:  []Program{{Path: srv.link, What: "the MCP server program"}},
					})
					if err != nil {
						t.Fatal(err)
					}
					defer sb.Close()
					if got := sb.Programs(); !slices.Equal(got, []string{srv.link}) {
						t.Errorf("Programs() = %q, want %q", got, srv.link)
					}
					out, err := runAs(t, sb, srv.link)
					if err != nil || !strings.Contains(out, "helper-loaded") || !strings.Contains(out, "dep-loaded") || !strings.Contains(out, "deep-dep-loaded") || !strings.Contains(out, "program-ran") {
						t.Fatalf("the program did not run inside: %v: %q", err, out)
					}
					checkProgramWrites(t, sb, srv, backend != HostUnsafe)
					if backend == HostUnsafe || place == "/opt" {
						return // the host's files, or a system directory the sandbox shows whole
					}
					for _, n := range srv.neighbours {
						if out, err := runAs(t, sb, "cat "+n); err == nil || strings.Contains(out, "-bytes") || strings.Contains(out, "-secret") {
							t.Errorf("the session read %s beside the program: %v: %q", n, err, out)
						}
						if backend != Bwrap {
							continue // Landlock does not govern stat
						}
						if out, err := runAs(t, sb, "test -e "+n); err == nil {
							t.Errorf("%s beside the program is visible inside bwrap: %q", n, out)
						}
					}
				})
			}
		})
	}
}

// checkProgramWrites tries, as the session, to change the program's
// package in every way a write could; confined says each must fail and
// leave the package as it was, else (the control) each must succeed.
func checkProgramWrites(t *testing.T, sb *Sandbox, srv mcpServer, confined bool) {
	t.Helper()
	before, beforeDep := readFile(t, srv.script), readFile(t, srv.dep)
	planted := filepath.Join(srv.pkg, "planted")
	for _, attack := range []string{
		"echo tampered >> " + srv.script,
		"echo tampered >> " + srv.dep,
		"echo tampered >> " + srv.link,
		"echo new > " + planted + " && rm " + planted,
		"mv " + srv.script + " " + srv.script + ".moved && mv " + srv.script + ".moved " + srv.script,
	} {
		out, err := runAs(t, sb, attack)
		switch {
		case confined && err == nil:
			t.Errorf("%q succeeded inside the sandbox: %q", attack, out)
		case !confined && err != nil:
			t.Errorf("control: %q failed without a sandbox, so the test proves nothing: %v: %q", attack, err, out)
		}
	}
	if !confined {
		return
	}
	if got := readFile(t, srv.script); got != before {
		t.Errorf("the program changed: %q, was %q", got, before)
	}
	if got := readFile(t, srv.dep); got != beforeDep {
		t.Errorf("the program's dependency changed: %q, was %q", got, beforeDep)
	}
	if _, err := os.Lstat(planted); err == nil {
		t.Errorf("the session planted %s in the program's package", planted)
	}
}

// TestEachPathOfTheProgramsIsMadeOnce stops a bubblewrap argv that binds a
// package twice or remakes a link (bubblewrap refuses a symlink that
// exists: "Can't make symlink at …: File exists"), and one that binds
// what is visible already. The agent and four programs share one
// node_modules: two programs of one package, one in a package nested in
// the agent's, a plain binary named twice, all but the agent reached
// through one aliased directory; and /bin/sh, which /usr covers. Each
// runs inside every kernel backend.
func TestEachPathOfTheProgramsIsMadeOnce(t *testing.T) {
	privateTmp(t)
	base := dirUnder(t, "/var/tmp")
	nm := filepath.Join(base, "node_modules")
	files := map[string]string{
		"node_modules/agent-pkg/bin/agent":                 "agent",
		"node_modules/mcp-pkg/bin/a":                       "mcp-a",
		"node_modules/mcp-pkg/bin/b":                       "mcp-b",
		"node_modules/agent-pkg/node_modules/nested/bin/c": "mcp-c",
		"tools/server":                                     "server",
	}
	for rel, name := range files {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, "#!/bin/sh\necho "+name+"-ran\n", 0o755)
	}
	if err := os.Mkdir(filepath.Join(nm, ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"agent": "../agent-pkg/bin/agent",
		"mcp-a": "../mcp-pkg/bin/a",
		"mcp-b": "../mcp-pkg/bin/b",
		"mcp-c": "../agent-pkg/node_modules/nested/bin/c",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(nm, ".bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(base, alias); err != nil {
		t.Fatal(err)
	}
	viaAlias := func(rel string) string { return filepath.Join(alias, rel) }
	agent := filepath.Join(nm, ".bin", "agent")
	var programs []Program
	for _, p := range []string{
		viaAlias("node_modules/.bin/mcp-a"),
		viaAlias("node_modules/.bin/mcp-b"),
		viaAlias("node_modules/.bin/mcp-c"),
		viaAlias("tools/server"),
		viaAlias("tools/server"),
		"/bin/sh",
	} {
		programs = append(programs, Program{Path: p, What: "the MCP server program"})
	}
	opts := Options{Workspace: newWorkspace(t, traversableDir(t)), Backend: HostUnsafe, AgentBin: agent, Programs: programs}
	sb, err := Prepare(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	argv := (&bwrap{path: "bwrap"}).prefix(sb)
	sb.Close()
	var binds, symlinks []string
	for i := 0; i+2 < len(argv); i++ {
		switch argv[i] {
		case "--ro-bind":
			if within(argv[i+1], base) || argv[i+1] == "/bin/sh" || argv[i+1] == "/usr/bin/sh" {
				binds = append(binds, argv[i+1])
			}
		case "--symlink":
			if within(argv[i+2], base) {
				symlinks = append(symlinks, argv[i+2])
			}
		}
	}
	slices.Sort(binds)
	slices.Sort(symlinks)
	wantBinds := []string{filepath.Join(nm, "agent-pkg"), filepath.Join(nm, "mcp-pkg"), filepath.Join(base, "tools", "server")}
	if diff := cmp.Diff(wantBinds, binds); diff != "" {
		t.Errorf("bwrap binds (-want +got):\n%s\nargv: %q", diff, argv)
	}
	wantLinks := []string{filepath.Join(base, "alias")}
	for _, name := range []string{"agent", "mcp-a", "mcp-b", "mcp-c"} {
		wantLinks = append(wantLinks, filepath.Join(nm, ".bin", name))
	}
	slices.Sort(wantLinks)
	if diff := cmp.Diff(wantLinks, symlinks); diff != "" {
		t.Errorf("bwrap symlinks (-want +got):\n%s\nargv: %q", diff, argv)
	}

	for _, backend := range []string{Bwrap, Landlock} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			opts := opts
			opts.Backend = backend
			sb, err := Prepare(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			run := append([]string{agent}, sb.Programs()...)
			names := []string{"agent", "mcp-a", "mcp-b", "mcp-c", "server", "server"}
			for i, name := range names {
				if out, err := runAs(t, sb, run[i]); err != nil || !strings.Contains(out, name+"-ran") {
					t.Errorf("%s did not run inside: %v: %q", run[i], err, out)
				}
			}
		})
	}
}

// TestAMissingProgramIsRefusedBeforeAnythingRuns stops a missing MCP
// server from reaching the session: the agent would start and fail to
// spawn it later, a failure of the agent's instead of a refused row. A
// missing agent stays the spawn's to report (see
// TestPrepareLeavesAMissingAgentToTheSpawn); a missing program is named.
func TestAMissingProgramIsRefusedBeforeAnythingRuns(t *testing.T) {
	base := traversableDir(t)
	missing := filepath.Join(base, "no-such-server")
	dangling := filepath.Join(base, "mcp-server-gone")
	if err := os.Symlink("../gone/bin/cli.js", dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		program Program
		reason  string
	}{
		{"missing path", Program{Path: missing, What: "the MCP server program"}, "the MCP server program " + missing + " does not exist"},
		{"dangling npm link", Program{Path: dangling, What: "the MCP server program"}, "the MCP server program " + dangling + " does not exist: it is a symlink to ../gone/bin/cli.js, which does not resolve"},
		{"name not on PATH", Program{Path: "mcp-server-nowhere"}, "the program mcp-server-nowhere does not exist: it is not on PATH"},
		{"empty path", Program{What: "the MCP server program"}, "the MCP server program has an empty path"},
	}
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					tmp := privateTmp(t)
					sb, err := Prepare(context.Background(), Options{
						Workspace: newWorkspace(t, traversableDir(t)),
						Backend:   backend,
						AgentBin:  "/bin/sh",
						Programs:  []Program{{Path: "/bin/sh"}, tc.program},
					})
					if err == nil {
						sb.Close()
						t.Fatalf("Prepare succeeded; want a refusal containing %q", tc.reason)
					}
					refused := asRefused(t, err)
					if refused.Backend != backend || !strings.Contains(refused.Reason, tc.reason) {
						t.Errorf("refused by %s: %q; want %s, containing %q", refused.Backend, refused.Reason, backend, tc.reason)
					}
					if left := entries(t, tmp); len(left) != 0 {
						t.Errorf("refusal left %v behind in TMPDIR", left)
					}
				})
			}
		})
	}
}

// TestPreflightNamesTheProgramTheSessionCannotRun stops a program the
// session uid cannot execute, read (a script) or reach from being found
// only when the agent spawns it; the refusal names it in its caller's
// words.
func TestPreflightNamesTheProgramTheSessionCannotRun(t *testing.T) {
	tests := []struct {
		name   string
		root   bool
		setup  func(t *testing.T, base string) string
		reason func(base string) string
	}{
		{
			"not executable",
			false,
			func(t *testing.T, base string) string {
				p := filepath.Join(base, "server")
				writeFile(t, p, "#!/bin/sh\n", 0o644)
				return p
			},
			func(base string) string {
				return "cannot execute the MCP server program " + filepath.Join(base, "server")
			},
		},
		{
			"a script it cannot read",
			false,
			func(t *testing.T, base string) string {
				p := filepath.Join(base, "server")
				writeFile(t, p, "#!/bin/sh\n", 0o111)
				return p
			},
			func(base string) string {
				return "cannot read the MCP server program " + filepath.Join(base, "server") + " (an interpreter must read it)"
			},
		},
		{
			"under a private dir",
			true,
			func(t *testing.T, base string) string {
				bin := filepath.Join(base, "bin")
				if err := os.Mkdir(bin, 0o700); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(bin, "server")
				writeFile(t, p, "#!/bin/sh\n", 0o755)
				return p
			},
			func(base string) string {
				return "cannot traverse " + filepath.Join(base, "bin") + ", on the way to the MCP server program " + filepath.Join(base, "bin", "server")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root {
				requireRoot(t)
			}
			tmp := privateTmp(t)
			base := traversableDir(t)
			program := tc.setup(t, base)
			sb, err := Prepare(context.Background(), Options{
				Workspace: newWorkspace(t, base),
				Backend:   HostUnsafe,
				AgentBin:  "/bin/sh",
				Programs:  []Program{{Path: program, What: "the MCP server program"}},
			})
			if err == nil {
				sb.Close()
				t.Fatal("Prepare succeeded")
			}
			refused := asRefused(t, err)
			if want := tc.reason(base); !strings.Contains(refused.Reason, want) {
				t.Errorf("reason:\n got %q\nwant it to contain %q", refused.Reason, want)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("refusal left %v behind", left)
			}
		})
	}
}

// TestAProgramNamedByItsNameIsFoundOnPATH stops a program given by name
// from being passed on as a name: inside bwrap the directory PATH found it
// in is not there, only the program itself at its host path, which
// Programs reports.
func TestAProgramNamedByItsNameIsFoundOnPATH(t *testing.T) {
	for _, backend := range Strength {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			privateTmp(t)
			dir := dirUnder(t, "/var/tmp")
			writeFile(t, filepath.Join(dir, "mcp-server-demo"), "#!/bin/sh\necho program-ran\n", 0o755)
			t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
			sb, err := Prepare(context.Background(), Options{
				Workspace: newWorkspace(t, traversableDir(t)),
				Backend:   backend,
				AgentBin:  "/bin/sh",
				Programs:  []Program{{Path: "mcp-server-demo"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			want := filepath.Join(dir, "mcp-server-demo")
			if got := sb.Programs(); !slices.Equal(got, []string{want}) {
				t.Fatalf("Programs() = %q, want %q", got, want)
			}
			if out, err := runAs(t, sb, want); err != nil || !strings.Contains(out, "program-ran") {
				t.Errorf("%s did not run inside: %v: %q", want, err, out)
			}
		})
	}
}
