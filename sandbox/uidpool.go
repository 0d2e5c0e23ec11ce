package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnvSessionUIDPool sets how many session uids a root wfb hands out to
// sessions that run at the same time: base, base−1, ..., base−(N−1), where
// base is the session uid ($WFB_SANDBOX_UID, else DefaultSessionID).
const EnvSessionUIDPool = "WFB_SANDBOX_UID_POOL"

// DefaultUIDPool is the pool's size when EnvSessionUIDPool is unset: more
// than the workers a bench usually runs, few enough to stay clear of
// allocated uids (Debian reserves 65000–65533 for the local system).
const DefaultUIDPool = 16

// maxUIDPool bounds the pool a user may ask for.
const maxUIDPool = 1024

// uidLockDir holds one lock file per pool uid; a session holds its uid's
// file locked (flock) for as long as its sandbox is open. A test points it
// elsewhere.
var uidLockDir = "/run/wfb-session-uids"

// uidPoll is how often a session waits for a pool uid when all are in use.
const uidPoll = 50 * time.Millisecond

// uidPool reads the pool's size: the refusal reason when the environment
// asks for what cannot be honoured.
func uidPool(base uint32) (int, string) {
	n := DefaultUIDPool
	if v, ok := os.LookupEnv(EnvSessionUIDPool); ok && v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxUIDPool {
			return 0, fmt.Sprintf("%s=%q: want a number of session uids from 1 to %d", EnvSessionUIDPool, v, maxUIDPool)
		}
	}
	// The pool never reaches root's uid.
	return min(n, int(base)), ""
}

// uidSlot is one pool uid held by an open sandbox, and the pool's range.
type uidSlot struct {
	lock      *os.File
	low, high uint32
}

// holds reports whether uid belongs to the slot's pool.
func (s *uidSlot) holds(uid uint32) bool {
	return s != nil && uid >= s.low && uid <= s.high
}

func (s *uidSlot) release() error {
	if s == nil || s.lock == nil {
		return nil
	}
	err := s.lock.Close() // closing the descriptor drops the flock
	s.lock = nil
	return err
}

// acquireSessionUID gives cred the first uid of the pool below cred.Uid that
// no other session (of this or any other wfb) holds, and returns the slot
// that holds it. When every uid is in use it waits for one, as long as ctx
// allows. Concurrent sessions so never share a uid, and one cannot read
// another's /proc/PID/environ, signal it or open its private root.
func acquireSessionUID(ctx context.Context, cred *syscall.Credential) (*uidSlot, string, error) {
	n, reason := uidPool(cred.Uid)
	if reason != "" {
		return nil, reason, nil
	}
	if err := os.MkdirAll(uidLockDir, 0o700); err != nil {
		return nil, "", fmt.Errorf("session uid pool: %w", err)
	}
	base := cred.Uid
	busy := make([]string, n)
	for {
		for k := range n {
			uid := base - uint32(k)
			slot, why, err := tryUID(uid)
			if err != nil {
				return nil, "", err
			}
			if slot != nil {
				cred.Uid = uid
				slot.low, slot.high = base-uint32(n-1), base
				return slot, "", nil
			}
			busy[k] = fmt.Sprintf("%d %s", uid, why)
		}
		select {
		case <-ctx.Done():
			return nil, "", fmt.Errorf("waiting for a free session uid (all %d of %d..%d in use: %s; %s sets the pool's size, %s its top): %w",
				n, base-uint32(n-1), base, strings.Join(busy, ", "), EnvSessionUIDPool, EnvSessionUID, ctx.Err())
		case <-time.After(uidPoll):
		}
	}
}

// tryUID locks uid's file without waiting. It returns no slot, and why,
// when another session holds it or a process still runs as it (see
// uidInUse).
func tryUID(uid uint32) (*uidSlot, string, error) {
	p := filepath.Join(uidLockDir, strconv.FormatUint(uint64(uid), 10)+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("session uid pool: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		if pid := uidInUse(uid); pid != 0 {
			f.Close()
			return nil, fmt.Sprintf("by process %d, still running (or unreaped) as it", pid), nil
		}
		return &uidSlot{lock: f}, "", nil
	}
	f.Close()
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, "by another session", nil
	}
	return nil, "", fmt.Errorf("session uid pool: lock %s: %w", p, err)
}

// uidInUse returns a process, a zombie included, that still runs with uid
// as its effective uid (0: none) — what an earlier session left while the
// kernel or init finishes it off. A session given that uid would find it
// counted against its RLIMIT_NPROC (its first forks refused) and, were it
// alive, within reach of its signals and /proc/PID/environ. The owner of a
// /proc/PID directory is its process's effective uid, whatever its
// dumpable state, and stat(2) is cheap where reading each
// /proc/PID/status is not (~0.5 ms against ~3.5 ms for 65 processes).
func uidInUse(uid uint32) int {
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+name, &st) == nil && st.Uid == uid {
			pid, _ := strconv.Atoi(name)
			return pid
		}
	}
	return 0
}
