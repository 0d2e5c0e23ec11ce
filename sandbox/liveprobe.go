package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wfbench/wfb"
)

// liveProbeScript runs inside the sandbox, started exactly the way the
// runner starts an agent. It tests the workspace promise of the session's
// configuration ($3): "ro", a review's, must not be able to create a file
// in the workspace; "rw", an editing session's, must be able to temp+rename
// one there, and leaves the renamed file for the parent to find on the
// host's side. Then what every session must do: temp+rename in the artifact
// dir, whose file the parent removes too. With $4 = "caps" it reads its own
// effective capabilities. $5 makes its file names its own (its $$ is the
// same in every PID namespace bwrap makes). It prints one verdict word and
// exits 3 when something is wrong. On the path that passes it starts no
// process but one mv per rename: a redirection that fails on a regular
// built-in (printf, true) inside a group does not end the shell, and the
// capabilities are read by the shell itself.
const liveProbeScript = `ws=$1 art=$2 mode=$3 caps=$4 name=.wfb-preflight-$5
if [ "$mode" = rw ]; then
	if ! { printf probe > "$ws/$name.tmp"; } 2>/dev/null; then echo workspace-create; exit 3; fi
	if ! mv -f "$ws/$name.tmp" "$ws/$name" 2>/dev/null; then echo workspace-rename; exit 3; fi
elif { true > "$ws/$name"; } 2>/dev/null; then rm -f "$ws/$name"; echo workspace-writable; exit 3; fi
if ! { printf probe > "$art/$name.tmp"; } 2>/dev/null; then echo artifact-create; exit 3; fi
if ! mv -f "$art/$name.tmp" "$art/$name" 2>/dev/null; then rm -f "$art/$name.tmp"; echo artifact-rename; exit 3; fi
if [ "$caps" = caps ]; then
	cap=
	while IFS= read -r line; do
		case $line in CapEff:*) set -- $line; cap=$2 ;; esac
	done < /proc/self/status
	case "$cap" in
	0000000000000000) ;;
	*) echo "capabilities $cap"; exit 3 ;;
	esac
fi
echo ok`

// liveProbeTimeout bounds one probe; a sandbox that cannot start a shell in
// this long is not usable.
const liveProbeTimeout = 30 * time.Second

// liveProbe runs liveProbeScript through the sandbox's own Launch (prefix,
// extra files, credential, the Started proof) and returns "" when the
// sandbox kept the promises of its configuration, or the refusal reason.
// checkCaps also demands that the session holds no capabilities (the
// kernel backends promise it; host-unsafe promises nothing of the kind).
func liveProbe(ctx context.Context, s *Sandbox, checkCaps bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, liveProbeTimeout)
	defer cancel()
	mode, caps := "ro", "-"
	if s.writable {
		mode = "rw"
	}
	if checkCaps {
		caps = "caps"
	}
	token := probeToken()
	out, errOut, started, err := s.runInside(withLiveProbe(ctx), "/bin/sh", "-c", liveProbeScript, "wfb-preflight", s.workspace, s.artifactDir, mode, caps, token)
	name := s.Backend()
	// Whatever happened, the probe must leave the workspace and the
	// artifact dir as it found them: its own files go (another probe's,
	// of a sandbox sharing the directory, are that probe's to remove).
	own := ".wfb-preflight-" + token + "*"
	art, _ := filepath.Glob(filepath.Join(s.artifactDir, own))
	for _, p := range art {
		_ = os.Remove(p)
	}
	leftovers, _ := filepath.Glob(filepath.Join(s.workspace, own))
	landed := false
	for _, p := range leftovers {
		// An editing session's write must be the one the host sees: the
		// renamed file, with its bytes, at the workspace's host path.
		if b, rerr := os.ReadFile(p); rerr == nil && string(b) == "probe" && !strings.HasSuffix(p, ".tmp") {
			landed = true
		}
		_ = os.Remove(p)
	}
	var refused *RefusedError
	switch {
	case errors.As(started, &refused):
		return refused.Reason, nil
	case started != nil:
		return "", fmt.Errorf("%s preflight probe: %w", name, started)
	case !s.writable && len(leftovers) > 0:
		return fmt.Sprintf("a probe inside the %s sandbox created %s in the workspace; the boundary does not hold here", name, leftovers[0]), nil
	}
	verdict := strings.TrimSpace(out)
	switch {
	case verdict == "ok" && err == nil && s.writable && !landed:
		return fmt.Sprintf("a probe inside the %s sandbox wrote and renamed a file in the workspace, but it did not land in %s on the host; the session's edits would be lost", name, s.workspace), nil
	case verdict == "ok" && err == nil:
		return "", nil
	case verdict == "workspace-writable":
		return fmt.Sprintf("a probe inside the %s sandbox could create a file in the workspace %s; the boundary does not hold here", name, s.workspace), nil
	case verdict == "workspace-create":
		return fmt.Sprintf("a probe inside the %s sandbox, as %s, could not create a file in the workspace %s, which this session must edit (it is not a review); make the workspace writable by the session uid or its group", name, s.who(), s.workspace), nil
	case verdict == "workspace-rename":
		return fmt.Sprintf("a probe inside the %s sandbox, as %s, could not rename a temp file within the workspace %s, which this session must edit (an atomic write needs it)", name, s.who(), s.workspace), nil
	case verdict == "artifact-create":
		return fmt.Sprintf("a probe inside the %s sandbox could not create a file in the artifact dir %s", name, s.artifactDir), nil
	case verdict == "artifact-rename":
		return fmt.Sprintf("a probe inside the %s sandbox could not rename a temp file within the artifact dir %s (an atomic write needs it)", name, s.artifactDir), nil
	case strings.HasPrefix(verdict, "capabilities "):
		return fmt.Sprintf("a probe inside the %s sandbox still holds capabilities (CapEff %s); a session with capabilities can undo the boundary", name, strings.TrimPrefix(verdict, "capabilities ")), nil
	}
	why := strings.TrimSpace(errOut)
	if why == "" {
		why = strings.TrimSpace(out)
	}
	if ctx.Err() != nil {
		why = fmt.Sprintf("no answer within %s", liveProbeTimeout)
	}
	return fmt.Sprintf("a probe could not run inside the %s sandbox (%v): %s", name, err, wfb.Clip(why, 600)), nil
}

// runInside runs argv in the sandbox the way the runner does: Launch's
// prefix before argv, its extra files as fds 3.., its credential, a process
// group of its own, Started right after the start. started is Started's
// error; err is the process's.
func (s *Sandbox) runInside(ctx context.Context, argv ...string) (stdout, stderr string, started, err error) {
	l, err := s.backend.launch(ctx, s) // never gated: this is the probe
	if err != nil {
		return "", "", nil, err
	}
	defer l.Close()
	full := append(append([]string{}, l.Prefix...), argv...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Dir = s.workspace
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + s.home, "TMPDIR=" + s.tmp, "LANG=C"}
	cmd.ExtraFiles = l.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: l.Credential}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", "", nil, fmt.Errorf("start %s: %w", full[0], err)
	}
	if started = l.Started(ctx, cmd.Process.Pid); started != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	err = cmd.Wait()
	return out.String(), errb.String(), started, err
}

// liveProbeKey marks the context of a live probe's own launch: bubblewrap
// runs its shell as the PID namespace's init (--as-pid-1) instead of
// behind a reaper of its own. bwrap exits as soon as that reaper reports
// the command's status, before the reaper itself is gone, so the reaper
// was orphaned to the machine's init — a zombie, running as the session
// uid, until init reaped it: about a second under this machine's init,
// never under a container's that reaps nothing. Meanwhile the uid pool
// counts the uid in use (see uidInUse), and a sweep ran out of its 16
// uids and waited. The agent's launch keeps the reaper: it runs under
// agent-exec, the subreaper that reaps it.
type liveProbeKey struct{}

func withLiveProbe(ctx context.Context) context.Context {
	return context.WithValue(ctx, liveProbeKey{}, true)
}

func isLiveProbe(ctx context.Context) bool { return ctx.Value(liveProbeKey{}) != nil }

// probeToken names one live probe's files.
func probeToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
