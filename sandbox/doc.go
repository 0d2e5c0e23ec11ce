// Package sandbox prepares the place an agent session runs in: a preflight
// that refuses, with a specific reason, what it cannot honestly provide; a
// private root (home, tmp and, by default, the artifact directory) removed on
// Close; the command prefix and process credential the runner must use; the
// write boundary around a review's workspace; and a digest that tells whether
// the workspace moved during a session.
//
// Backends differ in what they enforce. Only "host-unsafe" exists today: the
// agent runs on the host, in wfb's own namespaces, with no command prefix.
//
//   - When wfb runs as root, mode bits do not bind the session, so host-unsafe
//     runs it as an unprivileged uid/gid (65534:65534 unless WFB_SANDBOX_UID /
//     WFB_SANDBOX_GID or Options say otherwise) with supplementary groups
//     dropped. The cleared write bits of WorkspaceWriteBoundary then hold
//     against it, because only the owner (root) may chmod them back. Preflight
//     proves, by running a probe as that uid, that it can read the workspace,
//     execute the agent and write its home, tmp and artifact directories.
//   - When wfb does not run as root, the session runs as wfb's own uid, which
//     usually owns the workspace: it can chmod the boundary away. The boundary
//     is then best-effort; it catches accidents, not a session that tries.
//     The digest taken before and after a session still detects the change.
//
// Either way host-unsafe is no isolation from the rest of the host: the
// session can write wherever its uid may (e.g. /tmp) and see every process.
// It cannot provide a PID namespace, so it refuses RequirePIDNamespace.
//
// The kernel backends ("bwrap", "landlock") slot in behind the same Sandbox:
// a backend contributes its preflight, its CommandPrefix, whether it creates a
// PID namespace, and a Launch whose Started hook proves the namespace from the
// parent before the agent is released.
package sandbox
