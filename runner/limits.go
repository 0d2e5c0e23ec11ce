package runner

import "github.com/wfbench/wfb/runner/proc"

// Limits bound what one session may take: its processes and memory (held
// by runner/proc, see proc.Limits) and, when it is metered, its requests to
// its provider. Zero fields take the defaults.
type Limits struct {
	// Pids is the most processes (and threads, under a cgroup) the session
	// may have at once (proc.DefaultPidsMax by default).
	Pids int
	// Memory is the most memory, in bytes, the session may use
	// (proc.DefaultMemoryMax by default).
	Memory int64
	// Requests is the most requests a metered session may send its
	// provider: a runaway agent (a scripted tool call answered forever)
	// is stopped there, not at its timeout, and recorded as runaway.
	Requests int
}

// DefaultRequestsMax is far above a real task's turns (a long Claude Code
// session sends a few hundred requests) and far below what a runaway sends
// in a default timeout (the issue's: 1,400 in 300 s).
const DefaultRequestsMax = 1000

// orDefault fills zero fields with the defaults.
func (l Limits) orDefault() Limits {
	p := l.proc().OrDefault()
	l.Pids, l.Memory = p.Pids, p.Memory
	if l.Requests <= 0 {
		l.Requests = DefaultRequestsMax
	}
	return l
}

// proc is what the session's processes are held to.
func (l Limits) proc() proc.Limits { return proc.Limits{Pids: l.Pids, Memory: l.Memory} }
