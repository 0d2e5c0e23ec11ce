package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wfbench/wfb/internal/proctree"
)

// Limits bound what one session's processes may take. Zero fields take the
// defaults.
type Limits struct {
	// Pids is the most processes (and threads, under a cgroup) the session
	// may have at once.
	Pids int
	// Memory is the most memory, in bytes, the session may use.
	Memory int64
}

// The default limits: far above what Claude Code or Codex need for a task,
// far below what takes a machine down.
const (
	DefaultPidsMax   = 1024
	DefaultMemoryMax = 8 << 30
	// MinMemoryMax keeps a limit from starving agent-exec and the agent's
	// runtime before it starts.
	MinMemoryMax = 64 << 20
	MinPidsMax   = 8
)

// OrDefault fills zero fields with the defaults.
func (l Limits) OrDefault() Limits {
	if l.Pids <= 0 {
		l.Pids = DefaultPidsMax
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemoryMax
	}
	return l
}

// limitPoll is how often wfb looks at a session it limits without a
// cgroup's controllers.
const limitPoll = 25 * time.Millisecond

// limitWatch holds the session to its limits while it runs. Under a
// cgroup with the pids and memory controllers the kernel enforces
// pids.max and memory.max, and the watch only reads their events. Without
// them, agent-exec's rlimits bound each process (RLIMIT_DATA at twice the
// memory limit; RLIMIT_NPROC, at twice the pids limit, when the session has
// a uid of its own) and
// the watch holds the session as a whole: it counts the session's
// processes and sums their resident memory, and stops the session the
// moment either reaches its limit.
type limitWatch struct {
	limits Limits
	cg     *sessionCgroup
	leader int
	// uid is the session's own uid (-1: wfb's): its /dev/shm files and
	// System V segments count as the session's memory.
	uid int
}

// shmEvery is how many polls pass between two counts of shared memory,
// which reads every descriptor of every process of the session.
const shmEvery = 8

// check returns why the session is over a limit, or "". deep counts its
// shared memory too (sharedBytes).
func (w limitWatch) check(deep bool) string {
	if w.cg != nil && w.cg.limited {
		return w.cg.limitEvents(w.limits)
	}
	pids := w.processes()
	if len(pids) >= w.limits.Pids {
		return fmt.Sprintf("the session reached its process limit (%d processes; pids limit %d)", len(pids), w.limits.Pids)
	}
	var rss int64
	page := int64(os.Getpagesize())
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + pid + "/statm")
		if f := strings.Fields(string(b)); err == nil && len(f) > 1 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			rss += n * page
		}
	}
	var shared int64
	if deep {
		shared = sharedBytes(pids, w.uid)
	}
	if rss+shared >= w.limits.Memory {
		if shared > 0 {
			return fmt.Sprintf("the session reached its memory limit (%d MiB resident and %d MiB of shared memory; memory limit %d MiB)", rss>>20, shared>>20, w.limits.Memory>>20)
		}
		return fmt.Sprintf("the session reached its memory limit (%d MiB resident; memory limit %d MiB)", rss>>20, w.limits.Memory>>20)
	}
	return ""
}

// processes lists the session's processes: its cgroup's, else those of
// sessionPIDs.
func (w limitWatch) processes() []string {
	if w.cg != nil {
		b, _ := os.ReadFile(filepath.Join(w.cg.dir, "cgroup.procs"))
		return strings.Fields(string(b))
	}
	return sessionPIDs(w.leader)
}

// sessionPIDs lists, from /proc, the processes of the session led by
// leader: its process group, and every descendant of the leader whatever
// group or session it moved to — everything inside bubblewrap calls
// setsid(2) (--new-session) and so leaves the group, while agent-exec, the
// leader, is the subreaper that keeps orphans its descendants.
func sessionPIDs(leader int) []string {
	t := proctree.Read()
	var out []string
	for pid, p := range t {
		if pid == leader || p.PGRP == leader || t.Descends(pid, leader) {
			out = append(out, strconv.Itoa(pid))
		}
	}
	return out
}

// watch checks the session every limitPoll until exited is closed; on the
// first limit reached it calls stop and returns why.
func (w limitWatch) watch(exited <-chan struct{}, stop func()) string {
	t := time.NewTicker(limitPoll)
	defer t.Stop()
	for polls := 1; ; polls++ {
		select {
		case <-exited:
			// What the leader left behind is still there (killed after
			// this), and a cgroup's events outlive the processes.
			return w.check(true)
		case <-t.C:
			if why := w.check(polls%shmEvery == 0); why != "" {
				stop()
				return why
			}
		}
	}
}

// setLimits asks the kernel to enforce the limits in the session's cgroup:
// the parent must delegate the pids and memory controllers. It reports
// whether both limits are in place.
func (c *sessionCgroup) setLimits(parent string, l Limits) bool {
	// Enabling controllers for children fails where the parent holds
	// processes of its own (not the root), or they are bound to cgroup v1:
	// then rlimits and the watch take over.
	_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids +memory"), 0)
	if os.WriteFile(filepath.Join(c.dir, "pids.max"), []byte(strconv.Itoa(l.Pids)), 0) != nil {
		return false
	}
	if os.WriteFile(filepath.Join(c.dir, "memory.max"), []byte(strconv.FormatInt(l.Memory, 10)), 0) != nil {
		return false
	}
	_ = os.WriteFile(filepath.Join(c.dir, "memory.swap.max"), []byte("0"), 0)
	return true
}

// limitEvents says which limit the cgroup's events show was hit, or "".
func (c *sessionCgroup) limitEvents(l Limits) string {
	if n := eventCount(filepath.Join(c.dir, "pids.events"), "max"); n > 0 {
		return fmt.Sprintf("the session reached its process limit (pids.max %d refused %d forks)", l.Pids, n)
	}
	if n := eventCount(filepath.Join(c.dir, "memory.events"), "oom_kill"); n > 0 {
		return fmt.Sprintf("the session reached its memory limit (memory.max %d MiB; %d processes OOM-killed)", l.Memory>>20, n)
	}
	return ""
}

// eventCount reads one counter of a cgroup events file.
func eventCount(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
