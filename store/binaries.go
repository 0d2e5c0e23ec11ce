package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AgentBinary is an agent binary's identity and where its version was
// asked (see migration 0014): a version remembered for one identity is
// never served for another.
type AgentBinary struct {
	Path           string
	Device, Inode  uint64
	Size           int64
	MtimeNS        int64
	CtimeNS        int64
	Backend, Probe string
}

// AgentVersion is the version an earlier probe of the binary found, and
// whether there was one.
func (d *DB) AgentVersion(ctx context.Context, b AgentBinary) (string, bool, error) {
	var v string
	err := d.db.QueryRowContext(ctx, `SELECT version FROM agent_binaries
		WHERE path = ? AND device = ? AND inode = ? AND size = ? AND mtime_ns = ? AND ctime_ns = ? AND backend = ? AND probe = ?`,
		b.Path, int64(b.Device), int64(b.Inode), b.Size, b.MtimeNS, b.CtimeNS, b.Backend, b.Probe).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("agent binaries: %w", d.classify(err))
	}
	return v, true, nil
}

// RememberAgentVersion keeps what a probe of the binary found. A version
// already remembered for the identity stays (the same file says the same).
func (d *DB) RememberAgentVersion(ctx context.Context, b AgentBinary, version string) error {
	if version == "" {
		return errors.New("agent binaries: an empty version is not remembered")
	}
	_, err := d.db.ExecContext(ctx, `INSERT OR IGNORE INTO agent_binaries
		(path, device, inode, size, mtime_ns, ctime_ns, backend, probe, version, probed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.Path, int64(b.Device), int64(b.Inode), b.Size, b.MtimeNS, b.CtimeNS, b.Backend, b.Probe,
		version, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("agent binaries: %w", d.classify(err))
	}
	return nil
}
