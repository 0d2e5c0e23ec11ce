package view

import (
	"context"
	"fmt"
	"sync"
)

// resultCache keeps the costliest part of a page — a run's tables and
// grid, a comparison, a trend: every attempt of the runs read and their
// statistics — for the next request that asks the same of the same file
// state: clicking through a trend's metrics or back to a run does not read
// and compute it all again. The state (fileState) is read on every
// request, so a result is never served once the file has changed under it;
// the cache holds the last cacheEntries results.
type resultCache struct {
	mu      sync.Mutex
	entries []cacheEntry // most recently used last
}

type cacheEntry struct {
	key, state string
	val        any
}

// cacheEntries bounds what the cache holds: each result is a page's
// tables, far smaller than the attempts they summarise.
const cacheEntries = 16

// fileStateSQL is what a cached result depends on, read in one statement:
// the results and scores tables are append-only (a new attempt, a merge or
// a rescore adds rows with greater rowids), and the runs table is small
// and read whole (a run's status, end and label change in place).
const fileStateSQL = `SELECT (SELECT COALESCE(max(rowid), 0) FROM results) || '/' ||
	(SELECT COALESCE(max(rowid), 0) FROM scores) || '/' ||
	(SELECT COALESCE(group_concat(run_id || ':' || status || ':' || COALESCE(finished_at, '') || ':' || COALESCE(label, ''), ','), '')
	 FROM (SELECT * FROM runs ORDER BY run_id))`

// fileState reads the state a cached result must have been computed at.
func (s *Server) fileState(ctx context.Context) (string, error) {
	_, rows, err := s.db.Query(ctx, fileStateSQL)
	if err != nil || len(rows) != 1 {
		return "", fmt.Errorf("read the file's state: %v", err)
	}
	return str(rows[0][0]), nil
}

// cachedResult returns what compute returns for key at the file's current
// state: the kept result when one was computed at that state, else
// compute's, kept when it succeeds.
func cachedResult[T any](ctx context.Context, s *Server, key string, compute func() (T, error)) (T, error) {
	var zero T
	state, err := s.fileState(ctx)
	if err != nil {
		return zero, err
	}
	c := &s.cache
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key == key && e.state == state {
			c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
			c.mu.Unlock()
			return e.val.(T), nil
		}
	}
	c.mu.Unlock()
	v, err := compute()
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.key != key {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, cacheEntry{key: key, state: state, val: v})
	if len(c.entries) > cacheEntries {
		c.entries = c.entries[len(c.entries)-cacheEntries:]
	}
	return v, nil
}
