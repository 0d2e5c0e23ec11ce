// Package proctree reads the process tree from /proc: each process's parent
// and process group. agent-exec and the runner's limit watch both walk it.
// It imports only packages Go initialises early, so agent-exec's init stays
// ahead of wfb's own (see cmd/wfb's startup tests).
package proctree

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Proc is one process as /proc/PID/stat has it.
type Proc struct {
	PPID, PGRP int
	Zombie     bool
}

// Table is every process of the moment, by pid.
type Table map[int]Proc

// Read reads /proc/*/stat; a process that ends meanwhile is left out.
func Read() Table {
	t := Table{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		t[pid] = Proc{PPID: ppid, PGRP: pgrp, Zombie: string(f[0]) == "Z"}
	}
	return t
}

// Descends reports whether pid is a child of ancestor, or a child's child,
// and so on.
func (t Table) Descends(pid, ancestor int) bool {
	for a, depth := t[pid].PPID, 0; a > 1 && depth < len(t); a, depth = t[a].PPID, depth+1 {
		if a == ancestor {
			return true
		}
	}
	return false
}

// Descendants lists the live descendants of ancestor (zombies aside).
func (t Table) Descendants(ancestor int) []int {
	var out []int
	for pid, p := range t {
		if !p.Zombie && t.Descends(pid, ancestor) {
			out = append(out, pid)
		}
	}
	return out
}

// KillDescendants sends SIGKILL to every live descendant of ancestor, and
// again to those that appear meanwhile (a fork racing the kill, an orphan
// handed to ancestor as a subreaper), until none is left or a second of
// rounds has passed. After each round it calls between (nil: nothing),
// where a subreaper reaps what died.
func KillDescendants(ancestor int, between func()) {
	for round := 0; round < 100; round++ {
		pids := Read().Descendants(ancestor)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if between != nil {
			between()
		}
		time.Sleep(10 * time.Millisecond)
	}
}
