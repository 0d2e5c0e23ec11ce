package proc

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// reapStaleCgroups removes session cgroups that a wfb killed by SIGKILL (or
// a crash, or a reset) left behind: empty ones older than age, reaped at
// each session's start. A live session's cgroup is either populated (the
// kernel refuses to remove it) or younger than a few milliseconds (between
// its creation and the agent's clone, or the agent's exit and its
// removal), so nothing in use is touched.
func reapStaleCgroups(parent string, age time.Duration) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "wfb-session-") {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < age {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if events, err := os.ReadFile(filepath.Join(dir, "cgroup.events")); err == nil && strings.Contains(string(events), "populated 0") {
			os.Remove(dir) // EBUSY if something moved in meanwhile: left alone
		}
	}
}
