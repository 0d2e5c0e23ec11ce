package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLineNamesWhatSkippedAndHowToEnableIt stops a skipped gated test from
// going unmentioned by `go test ./...`: the line names the tests, the
// variable that makes them mandatory, and is empty when nothing skipped.
func TestLineNamesWhatSkippedAndHowToEnableIt(t *testing.T) {
	if got := Line("pkg"); got != "" {
		t.Fatalf("nothing skipped yet, line %q", got)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		t.Run(name, func(t *testing.T) { Skipf(t, "WFB_REQUIRE_X", "no x here") })
	}
	t.Run("e", func(t *testing.T) { Skipf(t, "WFB_REQUIRE_Y", "no y here") })
	got := Line("pkg")
	for _, want := range []string{
		"wfb pkg: skipped 5 gated tests",
		"TestLineNamesWhatSkippedAndHowToEnableIt/a, TestLineNamesWhatSkippedAndHowToEnableIt/b, TestLineNamesWhatSkippedAndHowToEnableIt/c and 1 more (WFB_REQUIRE_X=1 makes them mandatory)",
		"TestLineNamesWhatSkippedAndHowToEnableIt/e (WFB_REQUIRE_Y=1 makes them mandatory)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("not one line: %q", got)
	}
}

// TestRequireRootSkipsOrFailsOnlyWithoutRoot stops a root-only test from
// skipping silently where CI runs: as root RequireRoot lets the test go on;
// otherwise it is a skip that names WFB_REQUIRE_ROOT, or with
// WFB_REQUIRE_ROOT=1 a failure. The outcome is read from a child test
// binary (this one, re-run), since a failing subtest would fail this test;
// as root the child also runs as nobody, so every outcome is seen.
func TestRequireRootSkipsOrFailsOnlyWithoutRoot(t *testing.T) {
	if os.Getenv(rootChildEnv) == "1" {
		RequireRoot(t, "the test does something only root may")
		fmt.Println("went on")
		return
	}
	type child struct {
		name string
		cred *syscall.Credential // nil: this process's own
		root bool
	}
	children := []child{{"self", nil, os.Geteuid() == 0}}
	bin := os.Args[0]
	if os.Geteuid() == 0 {
		children = append(children, child{"nobody", &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}, false})
		// nobody cannot reach go's private build directory.
		dir, err := os.MkdirTemp("", "wfb-gate-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "gate.test")
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range children {
		for _, require := range []string{"", "1"} {
			t.Run(c.name+"/WFB_REQUIRE_ROOT="+require, func(t *testing.T) {
				cmd := exec.Command(bin, "-test.run=^TestRequireRootSkipsOrFailsOnlyWithoutRoot$", "-test.v")
				cmd.Dir = os.TempDir()
				cmd.Env = append(os.Environ(), rootChildEnv+"=1", EnvRequireRoot+"="+require)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
				out, err := cmd.CombinedOutput()
				var want []string
				switch {
				case c.root:
					want = []string{"went on", "--- PASS"}
				case require == "1":
					want = []string{"the test does something only root may; the tests do not run as root and WFB_REQUIRE_ROOT=1", "--- FAIL"}
				default:
					want = []string{"not root here (WFB_REQUIRE_ROOT=1 makes this a failure)", "--- SKIP"}
				}
				for _, w := range want {
					if !strings.Contains(string(out), w) {
						t.Errorf("the child's output lacks %q (exit %v):\n%s", w, err, out)
					}
				}
				if went := strings.Contains(string(out), "went on"); went != c.root {
					t.Errorf("the child went on past RequireRoot: %v, want %v\n%s", went, c.root, out)
				}
			})
		}
	}
}

// rootChildEnv makes TestRequireRootSkipsOrFailsOnlyWithoutRoot the child.
const rootChildEnv = "WFB_GATE_TEST_ROOT_CHILD"
