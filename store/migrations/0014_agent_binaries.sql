-- 0014_agent_binaries: what each agent binary said its version was, kept
-- so that a later session of the same binary does not start the agent a
-- second time to ask (a Node CLI's `--version` costs hundreds of ms).
--
-- A binary is known by its identity, not its path: the path the session
-- resolved, the file's device and inode, size, modification time and
-- status-change time (nanoseconds). npm stamps every file it unpacks with
-- the same mtime (1985-10-26) and may reuse a freed inode, so an upgrade
-- that leaves a small entry script unchanged keeps path, size, mtime and
-- perhaps inode — but never ctime, which the kernel sets on every write
-- and no user can set back. backend is the sandbox the probe ran in (the
-- version is only cached from a probe that ran where the sessions run,
-- as their uid), probe the probe's arguments.
--
-- This is a cache, not a measurement: a session's agent_version is still
-- on its row; merge does not copy this table (device and inode mean
-- nothing on another machine); deleting its rows only costs a probe.

CREATE TABLE agent_binaries (
    path      TEXT NOT NULL CHECK (length(path) BETWEEN 1 AND 4096),
    device    INTEGER NOT NULL,
    inode     INTEGER NOT NULL,
    size      INTEGER NOT NULL CHECK (size >= 0),
    mtime_ns  INTEGER NOT NULL,
    ctime_ns  INTEGER NOT NULL,
    backend   TEXT NOT NULL CHECK (length(backend) BETWEEN 1 AND 64),
    probe     TEXT NOT NULL CHECK (length(probe) <= 1024),
    version   TEXT NOT NULL CHECK (length(version) BETWEEN 1 AND 200),
    probed_at TEXT NOT NULL,
    PRIMARY KEY (path, device, inode, size, mtime_ns, ctime_ns, backend, probe)
) STRICT, WITHOUT ROWID;
