// Package sandbox prepares the place an agent session runs in: a preflight
// that refuses, with a specific reason, what it cannot honestly provide
// (checked by live probes, not by version numbers alone); a private root
// (home, tmp and, by default, the artifact directory) removed on Close; the
// command prefix, extra descriptors and process credential the runner must
// use; the PID-namespace proof; the write boundary around a review's
// workspace (or, for a session that must edit its workspace, the proof that
// its edits land); and a digest that tells whether the workspace moved.
//
// # Backends, strongest first
//
// "bwrap" runs the agent under bubblewrap (0.8.0 or newer). When wfb is
// root, bwrap itself is started as the unprivileged session uid (65534
// unless WFB_SANDBOX_UID / WFB_SANDBOX_GID or Options say otherwise; see
// "Concurrent sessions" for the pool below it), so the
// session is neither root on the host nor inside: it is in a new user
// namespace (nested ones forbidden by --disable-userns), new PID, IPC, UTS
// and cgroup namespaces, with no capabilities, no_new_privs, a new session
// (--new-session: no terminal injection) and --die-with-parent. Its file
// system is built from nothing: /usr, /etc, /opt and the /bin, /lib
// symlinks read-only, a fresh /proc and /dev, the private tmp on /tmp, the
// private root and the artifact dir read-write, the workspace read-only
// (read-write when Options.WorkspaceWritable, see below), the agent's
// executable alone read-only when it lies elsewhere (for a program
// installed from npm, its package's directory and those of the packages
// it depends on; never the files beside it, such as another package or a
// results file), and so each of Options.Programs (the MCP
// servers the agent starts); all at their host paths. What a root review
// session cannot do there, each tested as a scripted tool call of a real
// session (sandbox/e2e): write, create, truncate, delete or rename in the
// workspace; chmod it (read-only mount);
// remount it read-write or bind over it (no capabilities); unshare a mount
// or user namespace to do so (--disable-userns; and mounts inherited into a
// less privileged namespace stay locked read-only); reach it through
// /proc/self/root or /proc/1/root (the same read-only mount; pid 1 is
// bwrap's); write through a symlink or hard link planted at the artifact
// path.
//
// The agent's PID namespace is proven from the parent before the agent
// runs: bwrap reports the sandbox's pid on --info-fd and waits on
// --block-fd; Launch.Started compares /proc/<pid>/ns/pid with
// /proc/self/ns/pid and only then releases it. A failed proof kills the
// sandbox unreleased and is a *RefusedError: nothing of the agent ran.
//
// "landlock" re-executes wfb as a launcher (`wfb sandbox-exec`, see
// package launcher) that restricts itself with Landlock, strictly at ABI v3 (a
// kernel that cannot give v3 is refused, never degraded): read and execute
// under the system directories, /proc, /dev and the workspace, and of the
// agent's executable and of each of Options.Programs alone (or its npm
// package and the packages it depends on); everything under the private root and the artifact dir (and
// the workspace, when Options.WorkspaceWritable); read and write of
// /dev/null; nothing else. It sets no_new_privs and, when wfb
// is root, drops to the session uid with no supplementary groups before it
// execs the agent. Landlock also forbids mount topology changes, so remount
// and bind attacks fail, and it judges the real file behind
// /proc/<pid>/root. It gives no PID namespace (require_pid_namespace
// refuses it) and no private /tmp (TMPDIR points at the private tmp; /tmp
// itself is not readable). Landlock does not govern metadata: a session
// that OWNS the workspace (wfb not root) can still chmod, chown or touch
// it; the digest then records workspace-modified.
//
// "host-unsafe" runs the agent on the host, in wfb's own namespaces, with no
// command prefix.
//
//   - When wfb runs as root, mode bits do not bind the session, so
//     host-unsafe runs it as the unprivileged session uid with supplementary
//     groups dropped. The cleared write bits of WorkspaceWriteBoundary then
//     hold against it, because only the owner (root) may chmod them back.
//   - When wfb does not run as root, the session runs as wfb's own uid,
//     which usually owns the workspace: it can chmod the boundary away. The
//     boundary is then best-effort; it catches accidents, not a session
//     that tries. The digest taken before and after still detects it.
//
// Either way host-unsafe is no isolation from the rest of the host: the
// session can write wherever its uid may and see every process. It refuses
// RequirePIDNamespace.
//
// Auto (the default of the CLI) prepares the strongest backend whose
// preflight passes; PassedOver says why each stronger one was refused, and
// the row's sandbox column records the one chosen. A backend that was asked
// for by name and fails preflight is refused, never replaced by a weaker one.
// A run of many sessions resolves Auto once, before any session starts,
// with Resolve: the backend it picks passes the preflight of every
// configuration the run will use it with (read-only and writable
// workspaces), and every session then names it.
//
// # Sessions that edit their workspace
//
// A review must not change its workspace; a bug-fix task's agent must.
// Options.WorkspaceWritable is the second kind: bwrap binds the workspace
// with --bind instead of --ro-bind, landlock gives it write rights (rename
// into and out of it included), and host-unsafe leaves the write boundary
// off, so the mode bits of the tree decide (a root wfb's runner gives each
// cell's copy to the session's group with group write). Everything else of
// the backend stays: the private home and tmp, the PID namespace, no
// capabilities, the rest of the host read-only or invisible. The workspace
// is then the session's to change, so the refusal of a workspace holding
// files the session uid owns, which guards a review's boundary, does not
// apply.
//
// # Concurrent sessions
//
// Every backend that runs the session as another uid (all of them, when wfb
// is root) takes that uid from a pool: the session uid and the
// WFB_SANDBOX_UID_POOL−1 uids below it (DefaultUIDPool in all). Prepare
// holds the first free one with a flock on a file in /run/wfb-session-uids
// until Close, and waits while every uid is in use; the gid stays the
// session gid, so a copy shared with the session's group serves any of
// them. Two open sandboxes therefore never share a uid: one session cannot
// read another's /proc/PID/environ, signal it, or enter its private root. A
// review workspace holding a file any pool uid owns is refused, as one the
// session's own uid owns is. When wfb is not root every session runs as wfb's
// own uid and no pool applies.
//
// # A root wfb's layouts
//
// When the session uid cannot use the workspace as it is — cannot reach it
// (a checkout under root's 0700 home) or, for a session that edits it,
// cannot write it (a root-owned repo) — Prepare copies it (CopyTree) to a
// directory beside the private root, removed by Close, and the session
// works there: Workspace is the copy, Origin the original; ApplyEdits
// brings an editing session's changes back. A given artifact dir the
// session cannot write is replaced by one in the private root, and
// DeliverArtifacts copies the artifacts out (DeliverTo). bubblewrap 0.8.0's
// --ro-bind-fd, which would bind a descriptor wfb opened, fails as the
// session uid, hence the copy.
//
// # Network
//
// Every backend shares the host's network namespace. The model server must
// stay reachable — the mock provider on 127.0.0.1, or the real API by name —
// and a new network namespace would need a bridge (a unix socket proxied
// into the sandbox) that the agents' HTTP clients do not speak. The
// trade-off: a session can reach what the host can reach, including
// loopback services and abstract unix sockets; the boundary this package
// enforces is the file system (the workspace, the host's files), the
// process table (bwrap) and privileges, not egress.
//
// # Preflight
//
// Prepare refuses, with a *RefusedError naming the cause and the fix: no
// bwrap on PATH, a bwrap older than MinBwrapVersion, user namespaces
// disabled (user.max_user_namespaces = 0, kernel.unprivileged_userns_clone =
// 0; AppArmor's restriction is named when the live probe fails), no Landlock
// in the kernel, Landlock not enabled at boot, an ABI older than
// MinLandlockABI, a program of Options.Programs that does not exist (a
// missing agent is left to the runner's spawn), a workspace or artifact dir
// that is a symlink, an artifact dir inside the workspace (or containing
// it), paths the session uid cannot reach, RequirePIDNamespace on a backend
// without one, a workspace the session uid cannot write when it must edit
// it. Then a live probe started exactly like an agent checks the workspace
// promise both ways: for a review (kernel backends) it must fail to create a
// file in the workspace; for a session that edits it (every backend,
// host-unsafe included) a temp+rename inside the workspace must succeed as
// the session identity and the file must land at the workspace's path on the
// host. On the kernel backends it must also succeed at temp+rename in the
// artifact dir, hold no capabilities (CapEff), and, for bwrap, pass the
// PID-namespace proof. Doctor runs all of it for every backend in the review
// configuration, the one whose boundary it proves. The checks of what the
// session uid can reach are asked of the kernel from an OS thread of wfb's
// that takes on the session's identity and dies with the probe, not from a
// child process. With Options.ProbeAtLaunch (the runner's sessions, on a
// named kernel backend), the live probe runs at each Launch instead, in a
// sandbox of its own beside the agent's, and the agent, held at the
// backend's barrier (bubblewrap's --block-fd, or the landlock launcher's),
// is released only once the probe passed: the same proof, without a sandbox
// start's wait before the agent's own.
package sandbox
