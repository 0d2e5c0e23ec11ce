package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
)

// ordinaryUID is the uid a root test runs wfb as where the case is an
// ordinary user's: any uid no session or file of the machine uses.
const ordinaryUID = 47011

// ordinaryUser is a directory of wfb's user's own and the credential to
// run wfb with: as root, ordinaryUID's (nil when the test is not root: it
// runs wfb as itself).
func ordinaryUser(t *testing.T) (string, *syscall.Credential) {
	t.Helper()
	dir := sandboxtest.SharedDir(t, "wfb-user-")
	if os.Geteuid() != 0 {
		return dir, nil
	}
	if err := os.Chown(dir, ordinaryUID, ordinaryUID); err != nil {
		t.Fatal(err)
	}
	return dir, &syscall.Credential{Uid: ordinaryUID, Gid: ordinaryUID, Groups: []uint32{}}
}

// ownedBy makes a file or directory tree (the last argument) the user's of
// cred (nil: left as is).
func ownedBy(t *testing.T, cred *syscall.Credential, root string) {
	t.Helper()
	if cred == nil {
		return
	}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// modeWorkspace is a review's tree in home with modes worth getting back
// exactly: a private file (0600), a private directory (0700), an
// executable, a setgid directory, group-writable files.
func modeWorkspace(t *testing.T, home string) string {
	t.Helper()
	ws := filepath.Join(home, "clone")
	dirs := []struct {
		path string
		mode fs.FileMode
	}{{"", 0o755}, {"sub", 0o755}, {"private", 0o700}, {"group", 0o2775 | fs.ModeSetgid}}
	for _, d := range dirs {
		p := filepath.Join(ws, d.path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	files := []struct {
		path string
		mode fs.FileMode
	}{{"source.ts", 0o644}, {"secret.txt", 0o600}, {"run.sh", 0o755}, {"sub/notes.md", 0o664}, {"private/key", 0o640}, {"group/shared", 0o660}}
	for _, f := range files {
		p := filepath.Join(ws, f.path)
		if err := os.WriteFile(p, []byte(f.path+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// copyTo copies the file src into dir, executable, and returns the copy.
func copyTo(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// treeModes maps each path under dir (relative, dir itself ".") to its
// mode.
func treeModes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	got := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got[rel] = info.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestAReviewKilledMidSessionHasItsModesRestoredByTheNextWfb kills a real
// wfb with SIGKILL while a host-unsafe review holds the user's tree
// read-only (its write boundary), which leaves the tree so and the mode
// journal behind. The next `wfb session` restores the exact original modes
// from the journal and says so; it does not take the cleared modes for the
// originals (which would leave the tree read-only for good), and the
// session after it finds nothing left to restore.
func TestAReviewKilledMidSessionHasItsModesRestoredByTheNextWfb(t *testing.T) {
	t.Parallel()
	slowPath(t, "SIGKILL to an ordinary user's real wfb mid-review")
	home, cred := ordinaryUser(t)
	wfbBin := copyTo(t, buildWFB(t), home)
	script := copyTo(t, writeScript(t, runOKScript), home)
	ws := modeWorkspace(t, home)
	for _, d := range []string{"state", "tmp"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ownedBy(t, cred, home)
	want := treeModes(t, ws)
	cleared := map[string]fs.FileMode{}
	for p, m := range want {
		cleared[p] = m &^ 0o222
	}
	journals := filepath.Join(home, "state", "wfb", "modes", "*.json")
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(home, "state"), "TMPDIR="+filepath.Join(home, "tmp"))
	marker := fmt.Sprintf("wfb-boundary-%d", time.Now().UnixNano())
	hang := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
exec sh -c 'sleep 300' `+marker+"\n")
	quick := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
exit 0
`)
	session := func(agent string) *exec.Cmd {
		cmd := exec.Command(wfbBin, "session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
			"--sandbox", sandbox.HostUnsafe, "--review", "--db", filepath.Join(home, "wfb.db"), "--timeout", "120s",
			"--mock-script", script)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}

	killed := session(hang)
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent under the write boundary", func() bool {
		return len(sandboxtest.ProcessesWith(marker)) > 0 && cmp.Equal(cleared, treeModes(t, ws))
	})
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	noneLeft(t, marker)
	if left, _ := filepath.Glob(journals); len(left) != 1 {
		t.Errorf("mode journals after the kill: %v, want the killed session's one", left)
	}
	if diff := cmp.Diff(cleared, treeModes(t, ws)); diff != "" {
		t.Fatalf("the killed review did not leave the tree read-only, so this test tests nothing (-want +got):\n%s", diff)
	}

	for i, wantNote := range []bool{true, false} {
		var stderr strings.Builder
		next := session(quick)
		next.Stderr = &stderr
		next.Run()
		note := strings.Contains(stderr.String(), "restored the original modes of 10 paths under "+ws)
		if note != wantNote {
			t.Errorf("session %d after the kill: says it restored the modes: %v, want %v\nstderr:\n%s", i+1, note, wantNote, stderr.String())
		}
		if diff := cmp.Diff(want, treeModes(t, ws)); diff != "" {
			t.Errorf("modes after session %d after the kill (-want +got):\n%s", i+1, diff)
		}
		if left, _ := filepath.Glob(journals); len(left) != 0 {
			t.Errorf("mode journals after session %d after the kill: %v, want none", i+1, left)
		}
	}
}

// scratchDirs lists the run directories and sandbox roots in dir.
func scratchDirs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"wfb-run-*", "wfb-sandbox-*"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

// TestTheNextWfbReapsWhatAKilledOneLeftButNothingInUse kills a real wfb
// run with SIGKILL mid-cell: its run directory (the cell's copy, in which
// the agent left read-only files of the session uid) and its sandbox's
// private root (a home the agent made unreadable) stay in the temp dir. The
// next wfb removes them at its start; a wfb that starts while that one is
// still running leaves the live one's directories alone; a clean exit
// leaves nothing.
func TestTheNextWfbReapsWhatAKilledOneLeftButNothingInUse(t *testing.T) {
	t.Parallel()
	slowPath(t, "SIGKILL to a real wfb, then another")
	wfbBin := buildWFB(t)
	tmp := sandboxtest.SharedDir(t, "wfb-reap-")
	env := append(os.Environ(), "TMPDIR="+tmp)
	marker := fmt.Sprintf("wfb-reaped-%d", time.Now().UnixNano())
	agent := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
mkdir -p made/deeper && echo x > made/deeper/file && chmod 444 made/deeper/file && chmod 555 made/deeper made
mkdir "$HOME/hidden" && echo y > "$HOME/hidden/file" && chmod 0 "$HOME/hidden/file" "$HOME/hidden"
exec sh -c 'sleep 300' `+marker+"\n")
	bench, db := runFixture(t, runOKScript, fmt.Sprintf(`sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t1, workspace: ws, prompt: p}]
arms: [{id: a, agent: claude, agent_bin: %s}]
`, agent))
	// start starts wfb; with hold, it waits until the agent is running.
	start := func(hold bool, args ...string) (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command(wfbBin, args...)
		cmd.Env = env
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if hold {
			waitFor(t, "the agent", func() bool { return len(sandboxtest.ProcessesWith(marker)) > 0 })
		}
		return cmd, &stderr
	}

	killed, _ := start(true, "run", bench, "--db", db)
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	noneLeft(t, marker)
	left := scratchDirs(t, tmp)
	if len(left) < 2 {
		t.Fatalf("after the kill the temp dir holds %v, want the run's directory and the sandbox's root: this test tests nothing", left)
	}

	ws, db2 := sessionFixture(t)
	session := func(agent string) []string {
		return []string{"session", "--workspace", ws, "--prompt", "p", "--agent", "claude", "--agent-bin", agent,
			"--sandbox", sandbox.HostUnsafe, "--db", db2, "--timeout", "120s", "--mock-script", writeScript(t, runOKScript)}
	}
	live, liveErr := start(true, session(agent)...)
	for _, d := range left {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s, left by the killed wfb, is still there after the next wfb started\nstderr: %s", d, liveErr.String())
		}
	}
	if !strings.Contains(liveErr.String(), fmt.Sprintf("removed %d directories a killed wfb left", len(left))) {
		t.Errorf("the next wfb did not say what it removed\nstderr: %s", liveErr.String())
	}
	inUse := scratchDirs(t, tmp)
	if len(inUse) != 1 {
		t.Fatalf("with one session running the temp dir holds %v, want its private root", inUse)
	}

	quick := fakeAgent(t, `[ "$1" = "--version" ] && { echo 1.0.0; exit 0; }
exit 0
`)
	other, _ := start(false, session(quick)...)
	other.Wait()
	if _, err := os.Stat(filepath.Join(inUse[0], "home", "hidden")); err != nil {
		t.Errorf("the running session's private root was reaped by a wfb that started meanwhile: %v", err)
	}
	live.Process.Signal(syscall.SIGTERM)
	live.Wait()
	noneLeft(t, marker)
	if after := scratchDirs(t, tmp); len(after) != 0 {
		t.Errorf("after every wfb ended cleanly the temp dir holds %v", after)
	}
}
