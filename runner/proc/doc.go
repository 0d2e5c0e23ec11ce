// Package proc supervises the processes wfb starts: an agent session, its
// version probe, a task's setup and verify. It imports nothing of runner.
//
// Every process starts behind agent-exec (internal/agentexec: wfb
// re-executed in front of the command, which sets the rlimits, becomes the
// subreaper of what the command starts, and kills it all when wfb dies),
// in its own process group, with an environment built from scratch. Here:
//
//   - process.go: Run, one process to its end — a cgroup of its own when
//     wfb can make one, the prompt on stdin, stdout read line by line and
//     both outputs kept as bounded tails (tail.go), the timeout and ctx
//     (SIGTERM to the group, SIGKILL after the grace period, at once in a
//     hurry: WithHurry), and no descendant left behind, whether it stayed
//     in the group or not; the Result says how it ended.
//   - command.go: RunCommand, a short command wfb runs for itself (a
//     task's setup or verify) behind agent-exec, killed whole at its
//     timeout.
//   - cgroup.go and limits.go: the session's cgroup v2, and its Limits
//     (processes, memory) held by the kernel there, else by rlimits and a
//     watch that counts the session's processes and memory; shm.go counts
//     and removes the shared memory a session holds outside any process.
//   - leftovers.go: the empty session cgroups a wfb killed by SIGKILL left
//     behind, reaped at the next session's start.
package proc
