// Package memlimit gives a process that holds one large working set (wfb
// report, diff and trend hold a value per cell of the selection, and so do
// wfb view's run, compare and trend pages) a soft memory limit that
// follows that working set.
//
// By default (GOGC=100) the Go heap grows to twice what was live at the
// last collection, so a report whose cells take 60 MB peaks at 120 MB of
// heap, most of it garbage from reading rows. A fixed soft limit would
// trim that, but a file whose cells outgrow it would make the collector
// run almost without pause. Start sets the limit after every collection to
// the larger of a floor and Ratio times the live heap: a small working set
// grows to twice itself as before, one near the floor is capped at the
// floor, and a large one at Ratio times itself — never more than 1/(Ratio
// − 1) times as many collections as GOGC=100 would run. The limit only
// decides when the collector runs; nothing kept changes.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Ratio is the heap the limit allows over what is live, at least: 1.5
// runs the collector at most twice as often as GOGC=100.
const Ratio = 1.5

// Floor is the limit a small working set is held to. The process's own
// memory outside the Go heap (the binary's pages, SQLite's page cache) is
// some 25 MiB, so 100 MiB of Go memory keeps `wfb report` and `wfb diff`
// over a million rows (55 and 69 MB live at most) near 125 MiB resident,
// under issue 13's 150.
const Floor = 100 << 20

// Limit returns the soft limit for live bytes of live heap.
func Limit(live uint64) int64 {
	return max(Floor, int64(math.Min(Ratio*float64(live), math.MaxInt64/2)))
}

var once sync.Once

// Start sets the limit and keeps it following the live heap for the rest
// of the process. It does nothing when the user set GOMEMLIMIT, whose
// limit stands, or after its first call.
func Start() {
	once.Do(func() {
		if os.Getenv("GOMEMLIMIT") != "" {
			return
		}
		debug.SetMemoryLimit(Floor)
		arm()
	})
}

// sentinel is garbage the moment it is made: its finalizer runs after the
// next collection, re-tunes the limit, and makes the next sentinel.
type sentinel struct{ _ *byte } // a pointer keeps it out of the tiny allocator, whose finalizers may never run

func arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		debug.SetMemoryLimit(Limit(liveHeap()))
		arm()
	})
}

// liveHeap reads the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
