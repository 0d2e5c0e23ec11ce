package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sessionCgroup is a cgroup v2 of the session's own. The agent is cloned
// straight into it, so every descendant — even one that calls setsid and
// leaves the process group — is found and killed (cgroup.kill) when the
// session ends. Where wfb cannot create one (not root, no cgroup2 mount), the
// process group alone contains the session, and Result.Containment says so.
type sessionCgroup struct {
	dir, parent string
	fd          *os.File
	// limited says the kernel enforces the session's Limits here
	// (pids.max, memory.max).
	limited bool
}

// cgroup2Root finds where the unified hierarchy is mounted.
func cgroup2Root() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// newSessionCgroup creates an empty cgroup for one session under wfb's own
// cgroup v2 (or the hierarchy's root when wfb sits at "/").
func newSessionCgroup() (*sessionCgroup, error) {
	root, err := cgroup2Root()
	if err != nil {
		return nil, err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	parent := root
	for _, line := range strings.Split(string(self), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			parent = filepath.Join(root, rest)
		}
	}
	reapStaleCgroups(parent, time.Minute)
	dir, err := os.MkdirTemp(parent, "wfb-session-")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup %s has no cgroup.kill (kernel older than 5.14?)", dir)
	}
	fd, err := os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &sessionCgroup{dir: dir, parent: parent, fd: fd}, nil
}

// kill kills every process in the cgroup and waits, briefly, until it is
// empty.
func (c *sessionCgroup) kill() error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return fmt.Errorf("kill session cgroup: %w", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		procs, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
		if err != nil || len(strings.TrimSpace(string(procs))) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session cgroup %s still holds processes %s", c.dir, strings.Fields(string(procs)))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// close removes the (empty) cgroup.
func (c *sessionCgroup) close() error {
	c.fd.Close()
	var err error
	// An exiting process can keep the cgroup busy for a moment.
	for i := 0; i < 100; i++ {
		if err = os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("remove session cgroup: %w", err)
}
